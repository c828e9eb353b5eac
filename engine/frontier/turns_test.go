package frontier

import "testing"

// Sites that share an address take turns: sites that always have more
// pages queued (big sites whose recrawls keep their queues full) do not
// keep a smaller one on their address from ever being visited, even with
// no politeness delay between visits. With two big sites, moving the
// visited site behind the others is not enough (the two big ones would
// alternate): the turns go in the order the sites came to the address.
func TestSitesSharingAnAddressTakeTurns(t *testing.T) {
	for _, bigs := range []int{1, 2} {
		f := New(Length{}, true)
		var sites []*Site
		for i := range bigs + 1 {
			s := &Site{ID: int64(i + 1), Key: string(rune('a'+i)) + ".test", Host: string(rune('a'+i)) + ".test"}
			sites = append(sites, s)
			f.Add(s)
			f.Resolved(s, addr(9), t0) // shared hosting
			if i < bigs {
				f.Found(s, 20, 0, t0)
			} else {
				f.Found(s, 1, 0, t0)
			}
		}
		small := sites[bigs]
		visits := map[int64]int{}
		for range 10 {
			s := f.Next(t0)
			if s == nil {
				t.Fatal("no site to visit")
			}
			if f.Next(t0) != nil { // as the engine's dispatch asks while robots are free
				t.Fatal("two visits to one address at once")
			}
			visits[s.ID]++
			f.Take(s, min(s.Pending, 10), 0)
			if s != small {
				f.Found(s, 10, 0, t0) // its recrawls queue as many again
			}
			f.Release(s, t0, t0) // no politeness delay
		}
		if visits[small.ID] == 0 {
			t.Errorf("%d big sites: visits %v: the small site never had its turn", bigs, visits)
		}
	}
}

// A site whose turn it is to use a free address, and that is parked
// before it is visited, passes its turn on: the address is never left
// free with sites blocked behind it.
func TestParkedSitePassesItsTurn(t *testing.T) {
	f := New(Length{}, true)
	a := &Site{ID: 1, Key: "a.test", Host: "a.test"}
	b := &Site{ID: 2, Key: "b.test", Host: "b.test"}
	c := &Site{ID: 3, Key: "c.test", Host: "c.test"}
	for i, s := range []*Site{a, b, c} {
		f.Add(s)
		f.Resolved(s, addr(9), t0)
		f.Found(s, int64(30-10*i), 0, t0)
	}
	if s := f.Next(t0); s != a {
		t.Fatalf("first visit to %v, want a", s)
	}
	if f.Next(t0) != nil { // b and c find the address busy
		t.Fatal("two visits to one address at once")
	}
	f.Take(a, 30, 0)
	f.Found(a, 30, 0, t0)
	f.Release(a, t0, t0) // b's turn
	f.Park(b, t0)
	s := f.Next(t0)
	if s != c {
		t.Fatalf("after b was parked in its turn, Next = %v, want c (blocked: %d)", s, f.Count(Blocked))
	}
}
