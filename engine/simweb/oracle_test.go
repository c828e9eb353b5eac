package simweb

import (
	"math"
	"strings"
	"testing"
)

func TestOracleKnowsEveryPageOnce(t *testing.T) {
	w := testWeb(t, Options{Seed: 3, Sites: 20, Pages: 400, Traps: 2})
	o := w.Oracle()
	sum := 0.0
	for p := range w.NumPages() {
		u := w.URL(p)
		pr, ok := o.PageRank(u)
		if !ok || pr != w.PageRank()[p] {
			t.Fatalf("page %d %s: %v %v, want %v", p, u, pr, ok, w.PageRank()[p])
		}
		sum += pr
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Errorf("PageRank of every page sums to %v", sum)
	}
	// A port changes nothing; copies, redirects and strangers are unknown.
	if pr, ok := o.PageRank(strings.Replace(w.URL(0), ".test/", ".test:8080/", 1)); !ok || pr != w.PageRank()[0] {
		t.Errorf("with a port: %v %v", pr, ok)
	}
	for _, u := range []string{w.URL(0) + "no-such-page-zz/", "http://nowhere.test/", "::", w.URL(1) + "?sessionid=1"} {
		if _, ok := o.PageRank(u); ok {
			t.Errorf("%s known", u)
		}
	}
	if _, ok := (Oracle{}).PageRank(w.URL(0)); ok {
		t.Error("the zero Oracle knows a page")
	}
}
