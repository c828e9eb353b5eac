package dedup

import (
	"fmt"
	"strings"
	"testing"
)

// vouchedWeb returns a detector on which three hosts learned, each from
// pairs of its own, drop ?campaign (two values on three paths), a
// drop-index of default.aspx (two hosts) and of home.asp (one), and
// fold-case: names no code of lidi knows.
func vouchedWeb(t *testing.T) *Detector {
	t.Helper()
	d := New(Config{})
	for k, index := range []string{"default.aspx", "default.aspx", "home.asp"} {
		origin := fmt.Sprintf("http://shop%d.example", k)
		w := newWeb(origin, uint64(200+k))
		var fs []fetch
		for i, p := range []string{"/a.html", "/b/c.html", "/d/e.html"} {
			n := uint64(10 * i)
			fs = append(fs, w.page(p, n, pageOpt{}), w.page(p+fmt.Sprintf("?campaign=v%d", i%2), n, pageOpt{}))
		}
		for i, dir := range []string{"/x/", "/y/", "/z/"} {
			n := uint64(10*i + 1)
			fs = append(fs, w.page(dir, n, pageOpt{}), w.page(dir+index, n, pageOpt{}))
		}
		for i, p := range []string{"/m/Guide.html", "/n/Intro.html", "/o/Terms.html"} {
			n := uint64(10*i + 2)
			fs = append(fs, w.page(strings.ToLower(p), n, pageOpt{}), w.page(p, n, pageOpt{}))
		}
		kinds := map[RuleKind]bool{}
		for _, r := range learned(crawl(d, fs)) {
			kinds[r.Kind] = true
		}
		if !kinds[DropParam] || !kinds[DropIndex] || !kinds[FoldCase] {
			t.Fatalf("%s learned %v, want drop ?campaign, drop-index and fold-case", origin, kinds)
		}
	}
	return d
}

// A rewrite that other hosts proved from their own pairs is put in force
// on the next host with none, once the canonical spelling answered a
// page of its own (the probe, which the copy waits for); never under
// another name, for a parameter shown to matter, for a canonical URL
// that answered 404 or a copy of another page, nor for an index file
// given arguments; and a page that differs withdraws it everywhere.
func TestRuleFromPrior(t *testing.T) {
	const host = "http://next.example"
	w := newWeb(host, 300)
	observe := func(d *Detector, path string, n uint64) {
		d.Observe(pageOf(host+path, w.page(path, n, pageOpt{}).body))
	}
	tests := []struct {
		name  string
		setup func(d *Detector)
		copy  string
		canon string // "" for no rule
		await bool   // the copy waits for its canonical URL
	}{
		{name: "parameter, canonical fetched", setup: func(d *Detector) { observe(d, "/p.html", 1) },
			copy: "/p.html?campaign=spring", canon: "/p.html"},
		{name: "parameter, canonical not fetched yet", setup: func(*Detector) {},
			copy: "/p.html?campaign=spring", await: true},
		{name: "canonical answered 404", setup: func(d *Detector) { d.NotFound(ID(host + "/p.html")) },
			copy: "/p.html?campaign=spring"},
		{name: "another name", setup: func(d *Detector) { observe(d, "/p.html", 1) },
			copy: "/p.html?campaing=spring"},
		{name: "a parameter that matters elsewhere", setup: func(d *Detector) {
			f := newWeb("http://forum.example", 301)
			crawl(d, []fetch{f.page("/t?campaign=2", 1, pageOpt{}), f.page("/t?campaign=3", 2, pageOpt{})})
			observe(d, "/p.html", 1)
		}, copy: "/p.html?campaign=spring"},
		{name: "canonical a copy of another page", setup: func(d *Detector) {
			observe(d, "/news/a.html", 5)
			d.Observe(pageOf(host+"/q.html", w.page("/news/a.html", 5, pageOpt{}).body))
		}, copy: "/q.html?campaign=spring"},
		{name: "index file of two hosts", setup: func(d *Detector) { observe(d, "/docs/", 2) },
			copy: "/docs/default.aspx", canon: "/docs/"},
		{name: "index file of one host", setup: func(d *Detector) { observe(d, "/docs/", 2) },
			copy: "/docs/home.asp"},
		{name: "index file given arguments", setup: func(d *Detector) { observe(d, "/docs/?cat=2", 2) },
			copy: "/docs/default.aspx?cat=2"},
		{name: "case", setup: func(d *Detector) { observe(d, "/docs/guide.html", 3) },
			copy: "/Docs/Guide.html", canon: "/docs/guide.html"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := vouchedWeb(t)
			tt.setup(d)
			r, ok := d.FromPrior(host + tt.copy)
			if tt.canon == "" {
				if ok {
					t.Fatalf("put %v in force", r.String())
				}
			} else {
				if !ok || r.Supports != 0 || r.Prior < namedVouchHosts || r.Origin != host {
					t.Fatalf("FromPrior = %v, %v; want a rule with no pair and a prior", r.String(), ok)
				}
				if c, _, covered := d.Canonical(host + tt.copy); !covered || c != host+tt.canon {
					t.Errorf("Canonical = %s, %v; want %s", c, covered, host+tt.canon)
				}
			}
			var asked string
			waits := d.Awaits(host+tt.copy, func(c string) bool { asked = c; return true })
			if waits != tt.await {
				t.Errorf("Awaits = %v (for %q), want %v", waits, asked, tt.await)
			}
		})
	}
}

// A rule put in force from the prior is withdrawn by a page that differs
// from its canonical page, and no host takes that rewrite from the prior
// after.
func TestRuleFromPriorWithdrawn(t *testing.T) {
	d := vouchedWeb(t)
	a := newWeb("http://next.example", 310)
	d.Observe(pageOf("http://next.example/p.html", a.page("/p.html", 1, pageOpt{}).body))
	if _, ok := d.FromPrior("http://next.example/p.html?campaign=x"); !ok {
		t.Fatal("no rule from the prior")
	}
	d.Observe(pageOf("http://next.example/r.html", a.page("/r.html", 2, pageOpt{}).body))
	dec := d.Observe(pageOf("http://next.example/r.html?campaign=b", a.page("/r.html?campaign=b", 3, pageOpt{}).body))
	if len(dec.Withdrawn) != 1 || dec.Withdrawn[0].Prior == 0 {
		t.Fatalf("withdrawn %v, want the rule from the prior", dec.Withdrawn)
	}
	b := newWeb("http://other.example", 311)
	d.Observe(pageOf("http://other.example/p.html", b.page("/p.html", 1, pageOpt{}).body))
	if r, ok := d.FromPrior("http://other.example/p.html?campaign=x"); ok {
		t.Errorf("put %v in force after a host contradicted it", r.String())
	}
}

// A rule taken from the prior and withdrawn contradicts its rewrite on
// every host, whatever its kind (a parameter's withdrawal also marks the
// parameter as one that matters; a fold-case rule's has only the vouch's
// record), and across a restart: withdrawn before it (the replay does
// not recreate a rule with no pair, so only the stored rule says so), or
// restored in force and withdrawn after it (found through its candidate).
func TestRuleFromPriorWithdrawnEverywhere(t *testing.T) {
	type kind struct {
		name                        string
		canon, copy, other, otherCp string // paths on next.example
		probe, probeCopy            string // paths on other.example
	}
	kinds := []kind{
		{"parameter", "/p.html", "/p.html?campaign=x", "/r.html", "/r.html?campaign=b", "/p.html", "/p.html?campaign=x"},
		{"fold case", "/docs/guide.html", "/Docs/Guide.html", "/docs/other.html", "/Docs/Other.html", "/p.html", "/P.html"},
	}
	for _, k := range kinds {
		for _, restart := range []string{"none", "after the withdrawal", "before the withdrawal"} {
			t.Run(k.name+", restart "+restart, func(t *testing.T) {
				const host = "http://next.example"
				a := newWeb(host, 310)
				var stored []Page // what a store keeps, in order
				observe := func(d *Detector, path string, n uint64) Decision {
					p := pageOf(host+path, a.page(path, n, pageOpt{}).body)
					stored = append(stored, p)
					return d.Observe(p)
				}
				restore := func(rules ...Rule) *Detector {
					d := vouchedWeb(t)
					for _, p := range stored {
						d.Restore(p)
					}
					for _, r := range rules {
						d.RestoreRule(r)
					}
					return d
				}
				d := vouchedWeb(t)
				observe(d, k.canon, 1)
				taken, ok := d.FromPrior(host + k.copy)
				if !ok {
					t.Fatalf("no rule from the prior for %s", k.copy)
				}
				if restart == "before the withdrawal" {
					d = restore(taken)
				}
				observe(d, k.other, 2)
				dec := observe(d, k.otherCp, 3) // differs from k.other
				if len(dec.Withdrawn) != 1 || dec.Withdrawn[0].Prior == 0 {
					t.Fatalf("withdrawn %v, want the rule from the prior", dec.Withdrawn)
				}
				if restart == "after the withdrawal" {
					d = restore(dec.Withdrawn[0])
				}
				if r, ok := d.FromPrior(host + k.copy); ok {
					t.Errorf("put %v in force again on the host that contradicted it", r.String())
				}
				b := newWeb("http://other.example", 311)
				d.Observe(pageOf("http://other.example"+k.probe, b.page(k.probe, 1, pageOpt{}).body))
				if r, ok := d.FromPrior("http://other.example" + k.probeCopy); ok {
					t.Errorf("put %v in force on another host after a host contradicted it", r.String())
				}
			})
		}
	}
}

// An origin gets a record of a vouched rewrite only when it does
// something with it (a copy waits, or the canonical URL declines it),
// not on every host where the rewrite merely applies: a host whose
// canonical page was fetched first takes the rule with no record.
func TestVouchRecordsOnlyWhatOriginsDid(t *testing.T) {
	d := vouchedWeb(t)
	for i := range 50 {
		host := fmt.Sprintf("http://h%d.example", i)
		w := newWeb(host, uint64(400+i))
		d.Observe(pageOf(host+"/p.html", w.page("/p.html", 1, pageOpt{}).body))
		if _, ok := d.FromPrior(host + "/P.html"); !ok {
			t.Fatalf("%s: no fold-case rule from the prior", host)
		}
	}
	if n := len(d.vouchOrigins); n != 0 {
		t.Errorf("%d records for 50 hosts that only took the rule, want 0", n)
	}
	const waiter = "http://w.example"
	if !d.Awaits(waiter+"/Q.html", func(string) bool { return true }) {
		t.Fatal("the copy does not wait for its canonical URL")
	}
	if n := len(d.vouchOrigins); n != 1 {
		t.Errorf("%d records after one host's copy waited, want 1", n)
	}
}
