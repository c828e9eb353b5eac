package dedup

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lidi/engine/extract"
)

// claimed returns the Page the crawler gives the detector for body at
// url, with what the page claims of its origin read as the robot reads it.
func claimed(t *testing.T, u string, body []byte) Page {
	t.Helper()
	p := pageOf(u, body)
	base, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	var r extract.Result
	if err := extract.Links(body, "text/html", base, &r); err != nil {
		t.Fatal(err)
	}
	p.Canonical, p.OGURL, p.MirroredFrom = r.Canonical, r.OGURL, r.MirroredFrom
	return p
}

// The Jargon File and its HTTrack mirror, each copy observed before its
// original (a blog's mirror that answered first): the notes HTTrack left
// in the copies ("Mirrored from www.catb.org/~esr/jargon/html/...") make
// each original the original as it comes, and the rule keeps
// www.catb.org, whatever port it is crawled on.
func TestOriginalByMirrorNote(t *testing.T) {
	const dir = "testdata/realweb/jargon"
	var paths []string
	err := filepath.WalkDir(filepath.Join(dir, "catb"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(filepath.Join(dir, "catb"), p)
			paths = append(paths, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil || len(paths) < 20 {
		t.Fatalf("%d pages: %v", len(paths), err)
	}
	const orig, mirror = "http://www.catb.org:8080/jargon/html/", "http://milosophical.me:8080/jargon/html/"
	d := New(Config{})
	var rules []Rule
	demoted := map[string]string{}
	for _, p := range paths[:len(paths)-1] {
		for _, side := range []struct{ dir, base string }{{"milosophical", mirror}, {"catb", orig}} {
			body, err := os.ReadFile(filepath.Join(dir, side.dir, p))
			if err != nil {
				t.Fatal(err)
			}
			dec := d.Observe(claimed(t, side.base+p, body))
			if side.base == orig && dec.Kind != Unique {
				t.Errorf("%s: %v of %s, want the original", side.base+p, dec.Kind, dec.OfURL)
			}
			for _, dm := range dec.Demoted {
				demoted[dm.CopyURL] = dm.OfURL
			}
			rules = append(rules, dec.Learned...)
			if len(rules) > 0 {
				break // the rule covers the rest of the mirror
			}
		}
	}
	if len(rules) != 1 || rules[0].Kind != SwapHost || !strings.HasPrefix(rules[0].Origin, "http://milosophical.me") {
		t.Fatalf("rules %v, want one swap of the mirror for www.catb.org", rules)
	}
	ch := rules[0].Choice
	if !ch.ByEvidence || ch.For[SignalMirrorNote] == 0 || ch.Score() <= 0 {
		t.Errorf("choice %v, want the mirror notes for it", ch)
	}
	if len(demoted) < DefaultMirrorEvidence {
		t.Errorf("demoted %v, want the copies observed first", demoted)
	}
	for c, o := range demoted {
		if !strings.HasPrefix(c, mirror) || o != orig+strings.TrimPrefix(c, mirror) {
			t.Errorf("demoted %s as a copy of %s", c, o)
		}
	}
	last := paths[len(paths)-1]
	if canon, _, covered := d.Canonical(mirror + last); !covered || canon != orig+last {
		t.Errorf("Canonical(mirror's %s) = %s, %v; want the original", last, canon, covered)
	}
	if _, _, covered := d.Canonical(orig + last); covered {
		t.Errorf("the original's %s is covered", last)
	}
	if back, err := ParseChoice(ch.String()); err != nil || back != ch {
		t.Errorf("ParseChoice(%q) = %v, %v", ch.String(), back, err)
	}
}

// Which copy is the original, on webs whose names no code of lidi knows.
func TestOriginalByEvidence(t *testing.T) {
	w := newWeb("https://docs.example.net", 41)
	page := func(path string, n uint64) fetch { return w.page(path, n, pageOpt{}) }
	obs := func(d *Detector, f fetch, canonical string) Decision {
		p := pageOf(f.url, f.body)
		p.Canonical = canonical
		return d.Observe(p)
	}

	t.Run("nested in another site's directory", func(t *testing.T) {
		// The copies answer first; nothing in them names the original,
		// but they sit three levels down an unrelated host.
		const mirror = "http://ftp.mirror-site.org/pub/mirrors/docs"
		d := New(Config{})
		var rules []Rule
		for i, p := range []string{"/guide/a.html", "/guide/b.html", "/api/c.html", "/api/d.html", "/", "/guide/e.html"} {
			f := page(p, uint64(i))
			rules = append(rules, obs(d, w.at(mirror, f), "").Learned...)
			rules = append(rules, obs(d, f, "").Learned...)
		}
		if len(rules) != 1 || rules[0].Origin != "http://ftp.mirror-site.org" || rules[0].Choice.For[SignalNesting] != 1 {
			t.Fatalf("rules %v, want the mirror's directory swapped for the original's", rules)
		}
		if _, _, covered := d.Canonical(w.s.origin + "/api/x.html"); covered {
			t.Error("the original is covered")
		}
	})

	t.Run("reversed when the kept side turns out to be the copy", func(t *testing.T) {
		// A whole-host mirror at the same paths, its first pages
		// observed first and saying nothing: arrival makes the original
		// the copy. Its later pages, fetched under that rule, name the
		// original as their canonical URL: the rule is reversed.
		const mirror = "http://docs-mirror.example.org"
		d := New(Config{})
		var ds []Decision
		for i, p := range []string{"/", "/guide/a.html", "/api/c.html"} {
			f := page(p, uint64(i))
			ds = append(ds, obs(d, w.at(mirror, f), ""), obs(d, f, ""))
		}
		first := learned(ds)
		if len(first) != 1 || first[0].Origin != w.s.origin || first[0].Choice.ByEvidence {
			t.Fatalf("first rules %v, want the original swapped for the mirror by arrival", first)
		}
		if canon, _, covered := d.Canonical(w.s.origin + "/guide/z.html"); !covered || !strings.HasPrefix(canon, mirror) {
			t.Fatalf("before: Canonical = %s, %v", canon, covered)
		}
		var rev []Decision
		for i, p := range []string{"/guide/b.html", "/api/d.html", "/api/e.html"} {
			f := page(p, uint64(10+i))
			rev = append(rev, obs(d, w.at(mirror, f), f.url))
		}
		var withdrawn, again []Rule
		var demoted []Demotion
		for _, dec := range rev {
			withdrawn, again, demoted = append(withdrawn, dec.Withdrawn...), append(again, dec.Learned...), append(demoted, dec.Demoted...)
		}
		if len(withdrawn) != 1 || withdrawn[0].Key() != first[0].Key() || !withdrawn[0].Choice.Reversed || len(withdrawn[0].Contradictions) != 0 {
			t.Fatalf("withdrawn %v, want the first rule, reversed", withdrawn)
		}
		if len(again) != 1 || again[0].Origin != mirror || !again[0].Choice.Reversed || again[0].Choice.For[SignalCanonical] < reverseMargin {
			t.Fatalf("learned %v, want the mirror swapped for the original on its canonical claims", again)
		}
		if len(demoted) < 5 {
			t.Errorf("demoted %v, want the mirror's pages fetched so far", demoted)
		}
		for _, dm := range demoted {
			if !strings.HasPrefix(dm.CopyURL, mirror) || dm.OfURL != w.s.origin+strings.TrimPrefix(dm.CopyURL, mirror) {
				t.Errorf("demoted %s as a copy of %s", dm.CopyURL, dm.OfURL)
			}
		}
		if _, _, covered := d.Canonical(w.s.origin + "/guide/z.html"); covered {
			t.Error("after: the original is still covered")
		}
		if canon, _, covered := d.Canonical(mirror + "/guide/z.html"); !covered || canon != w.s.origin+"/guide/z.html" {
			t.Errorf("after: Canonical(mirror) = %s, %v", canon, covered)
		}
	})
}

// A canonical URL is a claim, never obeyed alone: one on another site,
// or naming a page with other content, or one the crawl never fetched,
// changes no verdict and makes no rule.
func TestCanonicalNotObeyed(t *testing.T) {
	w := newWeb("https://shop.example.com", 51)
	other := newWeb("https://competitor.example", 52)
	d := New(Config{})
	var ds []Decision
	home := other.page("/", 1, pageOpt{})
	ds = append(ds, d.Observe(pageOf(home.url, home.body)))
	for i := range 6 {
		// Every product page names the competitor's home page, or the
		// shop's own home page (a common misconfiguration), whose
		// content is other; or a URL never fetched.
		f := w.page("/item/"+string(rune('a'+i))+".html", uint64(10+i), pageOpt{})
		p := pageOf(f.url, f.body)
		switch i % 3 {
		case 0:
			p.Canonical = home.url
		case 1:
			p.Canonical = w.s.origin + "/"
		default:
			p.Canonical = w.s.origin + "/never-fetched.html"
		}
		ds = append(ds, d.Observe(p))
	}
	shopHome := w.page("/", 2, pageOpt{})
	ds = append(ds, d.Observe(pageOf(shopHome.url, shopHome.body)))
	for i, dec := range ds {
		if dec.Kind != Unique || len(dec.Demoted) > 0 || len(dec.Learned) > 0 {
			t.Errorf("page %d: %v of %s, demoted %v, learned %v", i, dec.Kind, dec.OfURL, dec.Demoted, dec.Learned)
		}
	}
	// A copy whose canonical names a third site is still the copy of the
	// page observed before it.
	f := w.page("/item/x.html", 30, pageOpt{})
	d.Observe(pageOf(f.url, f.body))
	p := pageOf(w.s.origin+"/item/x-copy.html", f.body)
	p.Canonical = home.url
	if dec := d.Observe(p); dec.Kind != Exact || dec.OfURL != f.url || len(dec.Demoted) > 0 {
		t.Errorf("copy naming a third site: %v of %s, demoted %v", dec.Kind, dec.OfURL, dec.Demoted)
	}
}

// A page whose mirroring tool's note names another host holds its
// directory back to one copy a visit (Unproven) and asks for
// the original it names (Prefer), until the pairs are in; pages outside
// the directory are not held back.
func TestMirrorNoteHoldsBack(t *testing.T) {
	w := newWeb("http://docs.example.org", 61)
	const mirror = "http://blog.example.net"
	d := New(Config{})
	home := w.page("/", 1, pageOpt{})
	d.Observe(pageOf(home.url, home.body))
	own := newWeb(mirror, 62).page("/posts/1.html", 2, pageOpt{})
	d.Observe(pageOf(own.url, own.body))
	for i, p := range []string{"/manual/a.html", "/manual/b/c.html"} {
		f := w.at(mirror+"/copies/docs", w.page(p, uint64(10+i), pageOpt{}))
		pg := pageOf(f.url, f.body)
		pg.MirroredFrom = "http://docs.example.org" + p
		want := []string{"http://docs.example.org/copies/docs" + p, "http://docs.example.org" + p}
		if got := d.Observe(pg).Prefer; !slices.Equal(got, want) {
			t.Errorf("prefer %v, want %v: the URL the note names, and the page's own path, on the host it names", got, want)
		}
	}
	if _, need, ok := d.Unproven(mirror + "/copies/docs/manual/d.html"); !ok || need != 1 {
		t.Errorf("a sibling of the copies: need %d, %v; want held back to one a visit", need, ok)
	}
	if _, _, ok := d.Unproven(mirror + "/posts/2.html"); ok {
		t.Error("the blog's own page is held back")
	}
}
