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
		sites := onOneAddress(f, bigs+1, func(i int, s *Site) {
			if i < bigs {
				f.Found(s, 20, 0, t0)
			} else {
				f.Found(s, 1, 0, t0)
			}
		})
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
	sites := onOneAddress(f, 3, func(i int, s *Site) { f.Found(s, int64(30-10*i), 0, t0) })
	a, b, c := sites[0], sites[1], sites[2]
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

// A site with only pages held back never holds an address's turn while
// others wait for it: NextUnheld would stop at it and leave the address
// free with sites blocked behind it. Held when the turn comes (it is
// passed over), or after it got the turn (the turn is dropped).
func TestHeldSiteHoldsNoTurn(t *testing.T) {
	for _, heldAfter := range []bool{false, true} {
		f := New(Optimal{}, true)
		// x's head first, then h's, then a's
		sites := onOneAddress(f, 3, func(i int, s *Site) { f.Found(s, 5, float64(i), t0) })
		x, h, a := sites[0], sites[1], sites[2]
		if s := f.NextUnheld(t0); s != x {
			t.Fatalf("first visit to %v, want x", s)
		}
		if f.NextUnheld(t0) != nil { // h and a find the address busy
			t.Fatal("two visits to one address at once")
		}
		if !heldAfter {
			f.Reprioritized(h, Held)
		}
		f.Take(x, 5, 0)
		f.Release(x, t0, t0) // x has nothing left
		if heldAfter {
			f.Reprioritized(h, Held)
		}
		if s := f.NextUnheld(t0); s != a {
			t.Errorf("held after its turn came: %v; NextUnheld = %v, want a (blocked %d)", heldAfter, s, f.Count(Blocked))
		}
	}
}

// A visit claimed before its site's address was known (a lease saved
// without one) makes the address busy once it is resolved.
func TestClaimedBeforeResolvedKeepsAddressBusy(t *testing.T) {
	f := New(Length{}, true)
	u := &Site{ID: 1, Key: "u.test", Host: "u.test"}
	v := &Site{ID: 2, Key: "v.test", Host: "v.test"}
	f.Add(u)
	f.Add(v)
	f.Found(u, 3, 0, t0)
	if !f.Claim(u) {
		t.Fatal("an unresolved site could not be claimed")
	}
	f.Resolved(u, addr(9), t0)
	f.Resolved(v, addr(9), t0)
	f.Found(v, 3, 0, t0)
	if s := f.Next(t0); s != nil {
		t.Errorf("Next = %v while u's claimed visit is on the address", s.Key)
	}
	f.Release(u, t0, t0)
	if s := f.Next(t0); s == nil {
		t.Error("no visit once u's ended")
	}
}

// onOneAddress adds n sites (a.test, b.test, ...) to f, all resolved to
// one address (shared hosting), and calls found for each in turn.
func onOneAddress(f *Frontier, n int, found func(i int, s *Site)) []*Site {
	var sites []*Site
	for i := range n {
		host := string(rune('a'+i)) + ".test"
		s := &Site{ID: int64(i + 1), Key: host, Host: host}
		sites = append(sites, s)
		f.Add(s)
		f.Resolved(s, addr(9), t0)
		found(i, s)
	}
	return sites
}
