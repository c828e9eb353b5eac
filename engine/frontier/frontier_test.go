package frontier

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func addr(i int) netip.Addr { return netip.AddrFrom4([4]byte{127, 0, 0, byte(i)}) }

// newSites adds resolved sites with the given pending counts and head
// priorities, each on its own address.
func newSites(f *Frontier, pending []int64, prio []float64) []*Site {
	var out []*Site
	for i := range pending {
		s := &Site{ID: int64(i + 1), Key: fmt.Sprintf("http://s%d.test", i+1), Host: fmt.Sprintf("s%d.test", i+1)}
		f.Add(s)
		f.Resolved(s, addr(i+1), t0)
		if pending[i] > 0 {
			f.Found(s, pending[i], prio[i], t0)
		}
		out = append(out, s)
	}
	return out
}

func order(f *Frontier, now time.Time) []int64 {
	var ids []int64
	for s := f.Next(now); s != nil; s = f.Next(now) {
		ids = append(ids, s.ID)
	}
	return ids
}

func TestStrategyOrder(t *testing.T) {
	tests := []struct {
		name     string
		strategy Strategy
		pending  []int64
		prio     []float64
		want     []int64
	}{
		{"length: most pending first", Length{}, []int64{3, 10, 1, 7}, []float64{0, 5, 1, 2}, []int64{2, 4, 1, 3}},
		{"length: ties by discovery", Length{}, []int64{5, 5, 9}, []float64{0, 0, 0}, []int64{3, 1, 2}},
		{"depth: shallowest head first", Depth{}, []int64{3, 10, 1, 7}, []float64{2, 5, 1, 0}, []int64{4, 3, 1, 2}},
		{"idle sites are not scheduled", Length{}, []int64{0, 4, 0}, []float64{0, 0, 0}, []int64{2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := New(tt.strategy, true)
			newSites(f, tt.pending, tt.prio)
			if got := order(f, t0); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("order = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestLengthReordersAsPagesAreFound(t *testing.T) {
	f := New(Length{}, true)
	s := newSites(f, []int64{5, 3, 4}, []float64{0, 0, 0})
	f.Found(s[1], 10, 1, t0) // site 2 now has 13
	if got := f.Next(t0); got.ID != 2 {
		t.Fatalf("first = %d, want 2", got.ID)
	}
}

func TestPolitenessDelay(t *testing.T) {
	f := New(Length{}, true)
	s := newSites(f, []int64{5}, []float64{0})[0]
	if f.Next(t0) != s {
		t.Fatal("site not ready")
	}
	if f.Next(t0) != nil {
		t.Fatal("a busy site was handed out twice")
	}
	f.Take(s, 2, 1)
	f.Release(s, t0.Add(15*time.Second), t0)
	if s.Place() != Waiting {
		t.Fatalf("place = %s, want waiting", s.Place())
	}
	if got := f.Next(t0.Add(14 * time.Second)); got != nil {
		t.Fatal("site visited before its delay")
	}
	if w, ok := f.NextWake(); !ok || !w.Equal(t0.Add(15*time.Second)) {
		t.Fatalf("NextWake = %v %v", w, ok)
	}
	if got := f.Next(t0.Add(15 * time.Second)); got != s {
		t.Fatal("site not ready after its delay")
	}
}

func TestOneVisitPerAddress(t *testing.T) {
	for _, perAddr := range []bool{true, false} {
		f := New(Length{}, perAddr)
		a := &Site{ID: 1, Key: "http://a.test", Host: "a.test"}
		b := &Site{ID: 2, Key: "http://b.test", Host: "b.test"}
		for _, s := range []*Site{a, b} {
			f.Add(s)
			f.Resolved(s, addr(9), t0) // shared hosting
			f.Found(s, 3, 0, t0)
		}
		first := f.Next(t0)
		second := f.Next(t0)
		if perAddr {
			if second != nil {
				t.Fatal("two visits to one address at once")
			}
			if f.Count(Blocked) != 1 {
				t.Fatalf("blocked = %d, want 1", f.Count(Blocked))
			}
			f.Release(first, t0.Add(time.Second), t0) // first now waits
			if got := f.Next(t0); got == nil || got == first {
				t.Fatalf("blocked site not released, got %v", got)
			}
		} else if second == nil {
			t.Fatal("per-address limit applied when off")
		}
	}
}

func TestResolvingAndPark(t *testing.T) {
	f := New(Depth{}, true)
	s := &Site{ID: 1, Key: "http://a.test", Host: "a.test"}
	f.Add(s)
	f.Found(s, 2, 0, t0)
	if s.Place() != Resolving || f.Next(t0) != nil {
		t.Fatalf("unresolved site scheduled: %s", s.Place())
	}
	f.Resolved(s, addr(1), t0)
	if s.Place() != Ready {
		t.Fatalf("place = %s, want ready", s.Place())
	}
	f.Park(s, t0)
	if f.Next(t0) != nil || f.Count(Parked) != 1 || f.Count(Ready) != 0 {
		t.Fatal("parked site still scheduled")
	}
}

func TestCountsStayConsistent(t *testing.T) {
	f := New(Length{}, true)
	sites := newSites(f, []int64{3, 0, 8, 2, 5}, []float64{0, 0, 1, 2, 3})
	now := t0
	for round := 0; round < 20; round++ {
		s := f.Next(now)
		if s != nil {
			f.Take(s, 1, 0)
			f.Release(s, now.Add(time.Duration(round%3)*time.Second), now)
		}
		now = now.Add(time.Second)
		total := 0
		for p := Idle; p <= Parked; p++ {
			total += f.Count(p)
		}
		if total != len(sites) {
			t.Fatalf("round %d: counts add to %d, want %d", round, total, len(sites))
		}
	}
	if f.Pending() != 0 {
		t.Fatalf("pending = %d after taking everything, want 0", f.Pending())
	}
}

// Every strategy of the registry is made by its name, in any case, with
// the options it reads; an unknown name and optimal without an oracle are
// refused.
func TestNewStrategy(t *testing.T) {
	oracle := func(PageInfo) float64 { return 0.5 }
	for _, info := range Strategies() {
		for _, name := range []string{info.Name, strings.ToUpper(info.Name)} {
			s, err := NewStrategy(name, StrategyOptions{K: 7, Oracle: oracle})
			if err != nil || s.Name() != info.Name {
				t.Fatalf("NewStrategy(%q) = %v, %v", name, s, err)
			}
			if k, ok := s.(interface{ K() int }); ok != info.UsesK || ok && k.K() != 7 {
				t.Errorf("%s: UsesK %v, but the strategy made reads K: %v", info.Name, info.UsesK, ok)
			}
			if _, err := NewStrategy(name, StrategyOptions{}); (err != nil) != info.NeedsOracle {
				t.Errorf("%s without an oracle: %v (NeedsOracle %v)", info.Name, err, info.NeedsOracle)
			} else if err != nil && !errors.Is(err, ErrNoOracle) {
				t.Errorf("%s without an oracle: %v, want ErrNoOracle", info.Name, err)
			}
		}
		if !strings.Contains(StrategyUsage()+"\n", "  "+info.Name+": "+info.Summary+"\n") {
			t.Errorf("StrategyUsage lacks %s", info.Name)
		}
	}
	if _, err := NewStrategy("random", StrategyOptions{}); err == nil || !strings.Contains(err.Error(), strings.Join(StrategyNames(), ", ")) {
		t.Errorf("unknown strategy: %v, want an error listing the known ones", err)
	}
	if s, _ := NewStrategy("batch", StrategyOptions{}); s.(*Batch).K() != DefaultK {
		t.Error("K < 1 does not mean DefaultK")
	}
}

func BenchmarkNextRelease(b *testing.B) {
	f := New(Length{}, false)
	sites := newSites(f, make([]int64, 10000), make([]float64, 10000))
	for _, s := range sites {
		f.Found(s, 1000, 0, t0)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := f.Next(t0)
		f.Found(s, 1, 0, t0)
		f.Release(s, t0, t0)
	}
}

// A visit in flight from an earlier run is claimed wherever its site is;
// its address stays busy until it ends, whatever a look-up says meanwhile.
func TestClaim(t *testing.T) {
	tests := []struct {
		name  string
		setup func(f *Frontier, s, other *Site)
		ok    bool
	}{
		{"ready", func(f *Frontier, s, other *Site) {}, true},
		{"waiting", func(f *Frontier, s, other *Site) { f.Release(f.Next(t0), t0.Add(time.Hour), t0) }, true},
		{"unresolved", func(f *Frontier, s, other *Site) { s.Resolved = false; f.remove(s); f.move(s, Idle); f.settle(s, t0) }, true},
		{"busy", func(f *Frontier, s, other *Site) { f.Next(t0) }, false},
		{"parked", func(f *Frontier, s, other *Site) { f.Park(s, t0) }, false},
		{"address busy", func(f *Frontier, s, other *Site) {
			f.Resolved(other, s.Addr, t0)
			f.Found(other, 1, -1, t0)
			f.Next(t0)
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := New(Length{}, true)
			sites := newSites(f, []int64{3, 0}, []float64{0, 0})
			s, other := sites[0], sites[1]
			tt.setup(f, s, other)
			if got := f.Claim(s); got != tt.ok {
				t.Fatalf("Claim = %v, want %v (place %s)", got, tt.ok, s.Place())
			}
			if !tt.ok {
				return
			}
			if s.Place() != Busy || f.Count(Busy) != 1 {
				t.Fatalf("claimed site in %s, %d busy", s.Place(), f.Count(Busy))
			}
			if !s.Resolved {
				f.Resolved(s, addr(1), t0)
				if f.Claim(other) && other.Addr == s.Addr {
					t.Fatal("an address claimed after a look-up is not busy")
				}
				return
			}
			was := s.Addr
			f.Resolved(s, addr(7), t0) // a look-up while the visit runs
			if s.Addr != was {
				t.Fatalf("a busy site's address changed to %s", s.Addr)
			}
			f.Resolved(other, was, t0)
			f.Found(other, 1, -1, t0)
			if got := f.Next(t0); got != nil {
				t.Fatalf("%s leased on the claimed address", got.Key)
			}
			f.Release(s, t0.Add(time.Hour), t0)
			if got := f.Next(t0); got != other {
				t.Fatalf("after the claimed visit, Next = %v, want the other site", got)
			}
		})
	}
}
