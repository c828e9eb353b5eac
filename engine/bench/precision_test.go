package bench_test

import (
	"bytes"
	"context"
	"flag"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lidi/engine/bench"
	"lidi/engine/record"
	"lidi/engine/simweb"
	"lidi/storage"
)

// ScoreCrawl counts a content once, at its first 200 answer, whatever URL
// carries it; junk and non-200 answers are retrieved pages without content.
// A page wasted is charged to the trap that made it a copy, even when the
// copy's URL is the ordinary one, fetched after the trap's.
func TestScoreCrawl(t *testing.T) {
	web, err := simweb.Generate(simweb.Options{Seed: 3, Sites: 4, Pages: 40, Traps: 1})
	if err != nil {
		t.Fatal(err)
	}
	seeds := web.Seeds(1)
	reach := web.ReachableUnique(seeds)
	home := web.URL(seeds[0])
	var alias, aliased, soft404 string
	for _, in := range web.Traps() {
		switch in.Kind {
		case simweb.TrapHostMirror:
			alias, aliased = in.URL, in.Original
		case simweb.TrapSoft404:
			soft404 = in.URL
		}
	}
	if alias == "" || soft404 == "" {
		t.Fatal("the web lacks a host mirror or a soft 404")
	}
	aliasContent := web.Truth(alias).Content
	fetched := []bench.Fetch{
		{URL: home, Status: 200},                   // unique
		{URL: home + "?utm_source=x", Status: 200}, // the same content again
		{URL: home, Status: 0},                     // no answer
		{URL: soft404, Status: 200},                // junk
		{URL: alias, Status: 200},                  // the alias's content, unique unless it is the home page's
		{URL: alias, Status: 500},                  // an error
		{URL: aliased, Status: 200},                // the alias's content again, under its ordinary URL
	}
	wantUnique := 2
	if aliasContent == web.Truth(home).Content {
		wantUnique = 1
	}
	sc := bench.ScoreCrawl(web, reach, fetched)
	if sc.Pages != 7 || sc.Unique != wantUnique {
		t.Fatalf("pages %d unique %d, want 7 and %d", sc.Pages, sc.Unique, wantUnique)
	}
	if want := float64(wantUnique) / 7; sc.Precision != want {
		t.Errorf("precision %v, want %v", sc.Precision, want)
	}
	wasted := 0
	for _, r := range sc.ByTrap {
		wasted += r.Wasted
	}
	if wasted != sc.Pages-sc.Unique {
		t.Errorf("%d pages wasted by trap, %d in all", wasted, sc.Pages-sc.Unique)
	}
	// The alias's error and the ordinary URL fetched after the alias (or,
	// when the alias is the home page's twin, the alias itself) are the
	// host mirror's waste.
	if got := sc.ByTrap[simweb.TrapHostMirror]; got.Wasted != 2 || got.Pages != 2 {
		t.Errorf("host mirror: %+v, want 2 pages retrieved and 2 wasted", got)
	}
	if sc.Reachable != reach.Unique || sc.Recall != float64(sc.Recalled)/float64(reach.Unique) {
		t.Errorf("recall %v (%d of %d), reach %d", sc.Recall, sc.Recalled, sc.Reachable, reach.Unique)
	}
	missed := 0
	for _, n := range sc.Missed {
		missed += n
	}
	if missed != sc.Reachable-sc.Recalled {
		t.Errorf("missed %d by kind, %d in all", missed, sc.Reachable-sc.Recalled)
	}
	if got := bench.ScoreCrawl(web, reach, nil); got.Precision != 0 || got.Recall != 0 || got.Unique != 0 {
		t.Errorf("empty crawl scored %+v", got)
	}
}

// The whole benchmark on a tiny trapped web: both runs, the table and the
// key=value lines, with lidi ahead of the fixed-depth crawler.
func TestPrecisionSmallWeb(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls a web twice")
	}
	t.Parallel() // checks no timing; its detection time is per thread
	var o bench.PrecisionOptions
	o.Sites, o.Pages, o.Traps, o.Seed, o.Seeds = 30, 1200, 1, 5, 3
	o.FixedDepth = 10
	o.Modes = []string{bench.ModeLidi, bench.ModeFixedDepth}
	o.Robots, o.PagesPerVisit = 16, 50
	// A bound against a hang, not a speed goal: the runs take some 15 s
	// alone and over a minute each on a machine loaded 20 times over.
	o.Limit = 5 * time.Minute
	o.ProgressInterval = time.Minute
	o.Dir = t.TempDir()
	o.OpenStore = func(path string) (record.Store, io.Closer, error) {
		db, err := storage.Open(path, storage.Options{})
		return db, db, err
	}
	var out bytes.Buffer
	runs, err := bench.Precision(context.Background(), o, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Log(out.String())
	if len(runs) != 2 {
		t.Fatalf("%d runs", len(runs))
	}
	lidi, fixed := runs[0], runs[1]
	if lidi.Stopped || fixed.Stopped {
		t.Fatal("a run reached the time limit")
	}
	if lidi.Score.Recall < fixed.Score.Recall || lidi.Score.Precision < fixed.Score.Precision {
		t.Errorf("lidi precision %.3f recall %.3f, fixed depth %.3f and %.3f: lidi behind", lidi.Score.Precision, lidi.Score.Recall, fixed.Score.Precision, fixed.Score.Recall)
	}
	if lidi.DetectPerPage <= 0 || fixed.DetectPerPage != 0 {
		t.Errorf("detection per page: lidi %v, fixed depth %v", lidi.DetectPerPage, fixed.DetectPerPage)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for i, mode := range []string{"lidi", "fixed-depth"} {
		if l := lines[len(lines)-2+i]; !strings.HasPrefix(l, "mode="+mode+" pages=") || !strings.Contains(l, " detect_us_per_page=") {
			t.Errorf("key=value line %q", l)
		}
	}
}

// -word-hash reaches the runs: the crawl file of a run names the word hash
// its fingerprints were made with, the flag's, whichever it is.
func TestPrecisionWordHash(t *testing.T) {
	for _, name := range []string{"fnv1a64", "mix64"} {
		t.Run(name, func(t *testing.T) {
			var o bench.PrecisionOptions
			fs := flag.NewFlagSet("precision", flag.ContinueOnError)
			o.RegisterFlags(fs)
			dir := t.TempDir()
			if err := fs.Parse([]string{"-sites", "6", "-pages", "120", "-traps", "0", "-seeds", "2",
				"-modes", bench.ModeLidi, "-progress", "1m", "-limit", "2m", "-dir", dir, "-word-hash", name}); err != nil {
				t.Fatal(err)
			}
			o.OpenStore = func(path string) (record.Store, io.Closer, error) {
				db, err := storage.Open(path, storage.Options{})
				return db, db, err
			}
			var out bytes.Buffer
			if _, err := bench.Precision(context.Background(), o, &out); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			db, err := storage.Open(filepath.Join(dir, "precision-"+bench.ModeLidi+".db"), storage.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if v, ok, err := db.Meta(context.Background(), "dedup.word_hash"); err != nil || v != name {
				t.Errorf("the run's crawl file names word hash %q (%v, %v), want %q", v, ok, err, name)
			}
			if !strings.Contains(out.String(), "word hash "+name+";") {
				t.Errorf("the report's first line does not name %s:\n%s", name, out.String())
			}
		})
	}
}
