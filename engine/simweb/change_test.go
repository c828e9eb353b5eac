package simweb

import (
	"bytes"
	"encoding/csv"
	"errors"
	"flag"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"lidi/engine/recrawl/change"
)

func testChanges(t testing.TB, opt ChangeOptions, channels, pagesEach int) *Changes {
	t.Helper()
	sizes := make([]int, channels)
	for i := range sizes {
		sizes[i] = pagesEach
	}
	opt.Enabled = true
	c, err := NewChanges(7, opt, sizes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestChangesMeanInterval(t *testing.T) {
	const horizon = 400 * 24 * time.Hour
	for _, tc := range []struct {
		name string
		opt  ChangeOptions
		kind change.Kind
		tol  float64 // relative error allowed on the mean rate
	}{
		{"poisson", ChangeOptions{}, change.Poisson, 0.03},
		{"pareto", ChangeOptions{Pareto: 1}, change.Pareto, 0.15},
		{"quasi", ChangeOptions{Quasi: 1}, change.Quasi, 0.03},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testChanges(t, tc.opt, 50, 4)
			// Per group: changes counted over the horizon against the
			// expected count horizon/θ.
			count := make([]float64, c.Groups())
			want := make([]float64, c.Groups())
			for p := range c.Pages() {
				pc := c.Page(p)
				if pc.Kind != tc.kind {
					t.Fatalf("page %d kind %v, want %v", p, pc.Kind, tc.kind)
				}
				g := c.Group(c.ChannelOf(p))
				if pc.Mean != c.GroupInterval(g) {
					t.Fatalf("page %d mean %v, group %d's interval %v", p, pc.Mean, g, c.GroupInterval(g))
				}
				count[g] += float64(c.Version(p, horizon))
				want[g] += float64(horizon) / float64(pc.Mean)
			}
			for g := range count {
				if want[g] == 0 {
					continue
				}
				if rel := math.Abs(count[g]-want[g]) / want[g]; rel > tc.tol {
					t.Errorf("group %d: %v changes over %v, want %.0f (off by %.1f%%)", g, count[g], horizon, want[g], 100*rel)
				}
			}
		})
	}
}

func TestChangesGroupShares(t *testing.T) {
	// SARSS's Table 1 gives, through tasks·θ per group, about 3.5%, 24%,
	// 45%, 24% and 3.5% of the channels in groups 0..4.
	c := testChanges(t, ChangeOptions{}, 20000, 1)
	want := []float64{0.035, 0.24, 0.45, 0.24, 0.035}
	got := make([]float64, c.Groups())
	for ch := range c.Channels() {
		got[c.Group(ch)]++
	}
	for g := range got {
		got[g] /= float64(c.Channels())
		if math.Abs(got[g]-want[g]) > 0.02 {
			t.Errorf("group %d holds %.3f of the channels, want about %.3f", g, got[g], want[g])
		}
	}
}

func TestChangesDeterministic(t *testing.T) {
	opt := ChangeOptions{Pareto: 0.3, Quasi: 0.1, Spread: 0.5}
	a, b := testChanges(t, opt, 30, 5), testChanges(t, opt, 30, 5)
	distinct := map[time.Duration]bool{}
	for p := range a.Pages() {
		ia, ib := a.Stream(p), b.Stream(p)
		last := time.Duration(0)
		for range 20 {
			ta, tb := ia.Next(), ib.Next()
			if ta != tb {
				t.Fatalf("page %d: change at %v and %v from the same seed", p, ta, tb)
			}
			if ta <= last {
				t.Fatalf("page %d: change at %v after %v", p, ta, last)
			}
			last = ta
		}
		distinct[last] = true
	}
	if len(distinct) < a.Pages()*9/10 {
		t.Errorf("only %d distinct 20th change times over %d pages", len(distinct), a.Pages())
	}
}

func TestChangesFreshAndAge(t *testing.T) {
	c := testChanges(t, ChangeOptions{Pareto: 0.5}, 5, 4)
	for p := range c.Pages() {
		it := c.Stream(p)
		t1, t2 := it.Next(), it.Next()
		for _, tc := range []struct {
			fetched, at time.Duration
			fresh       bool
			age         time.Duration
		}{
			{0, t1 - 1, true, 0},
			{0, t1, false, 0},
			{0, t2, false, t2 - t1},
			{t1, t2 - 1, true, 0},
			{t1, t2 + time.Minute, false, time.Minute},
		} {
			if got := c.Fresh(p, tc.fetched, tc.at); got != tc.fresh {
				t.Errorf("page %d: Fresh(%v, %v) = %v", p, tc.fetched, tc.at, got)
			}
			if got := c.Age(p, tc.fetched, tc.at); got != tc.age {
				t.Errorf("page %d: Age(%v, %v) = %v, want %v", p, tc.fetched, tc.at, got, tc.age)
			}
			if fresh := c.Version(p, tc.fetched) == c.Version(p, tc.at); fresh != tc.fresh {
				t.Errorf("page %d: versions at %v and %v disagree with Fresh", p, tc.fetched, tc.at)
			}
		}
		if v, last := c.State(p, t2); v != 2 || last != t2 {
			t.Errorf("page %d: State at its second change = %d, %v; want 2, %v", p, v, last, t2)
		}
	}
}

func TestChangesDisabled(t *testing.T) {
	c, err := NewChanges(1, ChangeOptions{Pareto: 1}, []int{3, 4})
	if err != nil {
		t.Fatal(err)
	}
	if c.Enabled() || c.Groups() != 0 || c.Pages() != 7 || c.Group(1) != -1 {
		t.Fatalf("disabled model: enabled %v, %d groups, %d pages, group %d", c.Enabled(), c.Groups(), c.Pages(), c.Group(1))
	}
	if v := c.Version(5, 1000*time.Hour); v != 0 {
		t.Errorf("a page of a static web reached version %d", v)
	}
	if _, ok := c.NextChange(5, 0); ok {
		t.Error("a page of a static web has a next change")
	}
}

func TestChangeOptionsInvalid(t *testing.T) {
	for _, opt := range []ChangeOptions{
		{Intervals: [MaxChangeGroups]time.Duration{time.Millisecond}},
		{Intervals: [MaxChangeGroups]time.Duration{time.Hour, 0, time.Hour}},
		{Pareto: 0.7, Quasi: 0.5},
		{Pareto: -0.1},
		{ParetoAlpha: 0.9},
		{QuasiProb: 1.5},
		{Spread: -1},
		{NoValidators: 2},
	} {
		opt.Enabled = true
		if _, err := NewChanges(1, opt, []int{2}); !errors.Is(err, ErrChangeOptions) {
			t.Errorf("NewChanges(%+v) = %v, want ErrChangeOptions", opt, err)
		}
	}
	if _, err := NewChanges(1, ChangeOptions{Enabled: true}, []int{2, -1}); !errors.Is(err, ErrChangeOptions) {
		t.Errorf("negative channel size: %v", err)
	}
}

func TestChangesFlags(t *testing.T) {
	var o Options
	fs := flag.NewFlagSet("simweb", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.RegisterFlags(fs)
	if err := fs.Parse([]string{"--changes", "--change-intervals", "30m,1h,3h", "--change-pareto", "0.3"}); err != nil {
		t.Fatal(err)
	}
	want := ChangeOptions{Enabled: true, Pareto: 0.3, Intervals: [MaxChangeGroups]time.Duration{30 * time.Minute, time.Hour, 3 * time.Hour}}
	if o.Change != want {
		t.Errorf("flags gave %+v, want %+v", o.Change, want)
	}
	if err := fs.Parse([]string{"--change-intervals", "1h,-2h"}); err == nil {
		t.Error("a negative interval was accepted")
	}
}

// changingWeb is a small web whose pages change every few virtual minutes.
var changingWeb = Options{Seed: 5, Sites: 30, Pages: 300, Change: ChangeOptions{Enabled: true,
	Intervals: [MaxChangeGroups]time.Duration{5 * time.Minute, 10 * time.Minute, 20 * time.Minute}}}

// pageOn returns a page of a site whose validators are v (and stamped or
// not), for a site with more than one page.
func pageOn(t *testing.T, w *Web, v Validators, stamped bool) int {
	t.Helper()
	c := w.Changes()
	for s := range w.NumSites() {
		if c.Validators(s) == v && c.Stamped(s) == stamped && w.Site(s).Pages > 1 && !w.Page(w.Site(s).HomePage+1).Disallowed {
			return w.Site(s).HomePage + 1
		}
	}
	t.Fatalf("no site with validators %v, stamped %v", v, stamped)
	return 0
}

func conditional(t *testing.T, c *http.Client, u, etag, lastModified string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	if lastModified != "" {
		req.Header.Set("If-Modified-Since", lastModified)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	body.ReadFrom(resp.Body)
	return resp, body.Bytes()
}

func TestServeConditional(t *testing.T) {
	w := testWeb(t, changingWeb)
	ch := w.Changes()
	clk := newFakeClock()
	s := startServer(t, w, ServerConfig{Now: clk.Now, TimeScale: 60})
	c := resolvingClient(s, 1)
	for _, tc := range []struct {
		v       Validators
		stamped bool
	}{{ValidatorsBoth, false}, {ValidatorsETag, false}, {ValidatorsLastModified, false}, {ValidatorsNone, false}, {ValidatorsNone, true}} {
		p := pageOn(t, w, tc.v, tc.stamped)
		u := s.URL(p)
		d := s.Clock().Offset()
		resp, body := get(t, c, u)
		etag, lm := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
		if (etag != "") != tc.v.ETag() || (lm != "") != tc.v.LastModified() {
			t.Fatalf("%v: ETag %q, Last-Modified %q", tc.v, etag, lm)
		}
		if want := s.RenderAt(p, d); !bytes.Equal(body, want) {
			t.Fatalf("%v: body differs from RenderAt", tc.v)
		}
		if date, _ := http.ParseTime(resp.Header.Get("Date")); !date.Equal(s.Clock().Time(d).Truncate(time.Second)) {
			t.Errorf("%v: Date %v, want the virtual %v", tc.v, date, s.Clock().Time(d))
		}
		// Unchanged: 304 when a validator is sent, 200 otherwise.
		next, _ := ch.NextChange(p, d)
		clk.Advance((next - d) / 2 / 60)
		resp, body2 := conditional(t, c, u, etag, lm)
		switch {
		case tc.v == ValidatorsNone && resp.StatusCode != http.StatusOK:
			t.Errorf("%v: unchanged page without validators answered %d", tc.v, resp.StatusCode)
		case tc.v != ValidatorsNone && (resp.StatusCode != http.StatusNotModified || len(body2) != 0):
			t.Errorf("%v: unchanged page answered %d with %d bytes, want 304", tc.v, resp.StatusCode, len(body2))
		}
		if tc.v == ValidatorsNone {
			if tc.stamped == bytes.Equal(body, body2) {
				t.Errorf("stamped %v: unchanged page's bytes equal: %v", tc.stamped, bytes.Equal(body, body2))
			}
			if !tc.stamped && !bytes.Equal(body, body2) {
				t.Error("unchanged page without a stamp served other bytes")
			}
		}
		// Changed: 200 with the new version and new validators.
		clk.Advance((next-s.Clock().Offset())/60 + time.Second)
		resp, body3 := conditional(t, c, u, etag, lm)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%v: changed page answered %d", tc.v, resp.StatusCode)
		}
		now := s.Clock().Offset()
		if bytes.Equal(body3, body) || !bytes.Equal(body3, s.RenderAt(p, now)) {
			t.Errorf("%v: changed page's body is the old one or not RenderAt's", tc.v)
		}
		if tc.v.ETag() && resp.Header.Get("ETag") != ch.ETag(p, ch.Version(p, now)) {
			t.Errorf("%v: ETag %q after the change, want %q", tc.v, resp.Header.Get("ETag"), ch.ETag(p, ch.Version(p, now)))
		}
		if tc.v.LastModified() {
			_, last := ch.State(p, now)
			if got, _ := http.ParseTime(resp.Header.Get("Last-Modified")); !got.Equal(s.Clock().Time(last).Truncate(time.Second)) {
				t.Errorf("%v: Last-Modified %v, want %v", tc.v, got, s.Clock().Time(last))
			}
		}
	}
}

func TestNotModified(t *testing.T) {
	mod := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		inm, ims string
		etag     string
		modified time.Time
		want     bool
	}{
		{`"a"`, "", `"a"`, mod, true},
		{`"b", "a"`, "", `"a"`, mod, true},
		{`W/"a"`, "", `"a"`, mod, true},
		{`*`, "", "", time.Time{}, true},
		{`"b"`, mod.Format(http.TimeFormat), `"a"`, mod, false}, // If-None-Match decides alone
		{`"a"`, "", "", mod, false},
		{"", mod.Format(http.TimeFormat), `"a"`, mod, true},
		{"", mod.Add(-time.Second).Format(http.TimeFormat), `"a"`, mod, false},
		{"", mod.Format(http.TimeFormat), `"a"`, time.Time{}, false},
		{"", "yesterday", `"a"`, mod, false},
	} {
		r, _ := http.NewRequest(http.MethodGet, "http://x.test/", nil)
		if tc.inm != "" {
			r.Header.Set("If-None-Match", tc.inm)
		}
		if tc.ims != "" {
			r.Header.Set("If-Modified-Since", tc.ims)
		}
		if got := notModified(r, tc.etag, tc.modified); got != tc.want {
			t.Errorf("If-None-Match %q, If-Modified-Since %q against %q, %v: %v, want %v", tc.inm, tc.ims, tc.etag, tc.modified, got, tc.want)
		}
	}
}

func TestChangedPageKeepsLinks(t *testing.T) {
	w := testWeb(t, changingWeb)
	clk := Clock{Epoch: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	for p := range min(w.NumPages(), 60) {
		v0 := w.AppendHTMLAt(nil, p, 0, clk, 0)
		next, _ := w.Changes().NextChange(p, 0)
		v1 := w.AppendHTMLAt(nil, p, 0, clk, next)
		if bytes.Equal(v0, v1) {
			t.Fatalf("page %d: the same bytes after a change", p)
		}
		if !w.Changes().Stamped(w.Page(p).Site) && !bytes.Equal(v0, w.Render(p)) {
			t.Fatalf("page %d: version 0 differs from the static page", p)
		}
		resolved := func(html []byte) []string {
			var out []string
			for _, h := range hrefs(html) {
				out = append(out, resolveRef(t, w.URL(p), h))
			}
			return out
		}
		if a, b := resolved(v0), resolved(v1); !slices.Equal(a, b) {
			t.Fatalf("page %d: links changed with the text: %d then %d", p, len(a), len(b))
		}
	}
}

func TestExportChanges(t *testing.T) {
	w := testWeb(t, changingWeb)
	dir := t.TempDir()
	until := 2 * time.Hour
	if err := w.ExportChanges(dir, until); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "changes.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	perPage := map[int]int{}
	for _, row := range rows[1:] {
		p, _ := strconv.Atoi(row[0])
		v, _ := strconv.Atoi(row[1])
		perPage[p]++
		if v != perPage[p] {
			t.Fatalf("page %d: version %d after %d rows", p, v, perPage[p])
		}
	}
	for p := range w.NumPages() {
		if got, want := perPage[p], w.Changes().Version(p, until); got != want {
			t.Fatalf("page %d: %d rows, version %d at %v", p, got, want, until)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "channels.csv")); err != nil {
		t.Error(err)
	}
	static := testWeb(t, smallWeb)
	if err := static.ExportChanges(t.TempDir(), time.Hour); err == nil {
		t.Error("exporting the changes of a static web succeeded")
	}
}

func TestChangesTogether(t *testing.T) {
	c := testChanges(t, ChangeOptions{Together: true, Pareto: 0.5}, 6, 5)
	for ch := range c.Channels() {
		first, n := c.ChannelPages(ch)
		want := c.Stream(first)
		streams := make([]*change.Stream, n)
		for i := range n {
			streams[i] = c.Stream(first + i)
		}
		for range 20 {
			tw := want.Next()
			for i, s := range streams {
				if got := s.Next(); got != tw {
					t.Fatalf("channel %d: page %d changes at %v, its channel at %v", ch, first+i, got, tw)
				}
			}
		}
	}
	apart := testChanges(t, ChangeOptions{}, 6, 5)
	if a, b := apart.Stream(0).Next(), apart.Stream(1).Next(); a == b {
		t.Error("pages of a channel change together without Together")
	}
}
