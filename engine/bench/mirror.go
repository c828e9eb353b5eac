package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"lidi/engine"
	"lidi/engine/dedup"
	"lidi/engine/dns"
	"lidi/engine/record"
)

// MirrorOptions sets up `lidi bench mirror`. The zero value is not usable:
// OpenStore must be set (main.go wires it) and Realweb name the folder of
// real sites, as RegisterFlags does.
type MirrorOptions struct {
	// Realweb is the folder of real sites copied from public repositories
	// (../shared/realweb/sites in the project's workspace): it must hold
	// catb.org-jargon and sinewalker.github.io.
	Realweb       string
	Robots        int
	PagesPerVisit int
	// Races is the number of runs that crawl the two copies of the
	// Jargon File from their home pages at once (and the blog from its
	// own), so that either copy may answer first: each run says which
	// one detection kept.
	Races            int
	Limit            time.Duration // longest time one run may take
	Dir              string        // where the crawl databases go ("": a temporary directory)
	OpenStore        func(path string) (record.Store, io.Closer, error)
	ProgressInterval time.Duration
}

// RegisterFlags adds the benchmark's flags to fs, with their defaults.
func (o *MirrorOptions) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Realweb, "realweb", "../shared/realweb/sites", "folder holding the real sites catb.org-jargon and sinewalker.github.io")
	crawlerFlags(fs, &o.Robots, 8, &o.PagesPerVisit, 100)
	fs.IntVar(&o.Races, "races", 10, "runs crawling both copies' home pages at once")
	limitFlag(fs, &o.Limit, 5*time.Minute)
	dirFlag(fs, &o.Dir, "the crawl databases")
	progressFlag(fs, &o.ProgressInterval)
}

// The two real sites: the Jargon File as www.catb.org serves it, and the
// blog milosophical.me, which holds an HTTrack mirror of it (re-encoded,
// with HTTrack's comments) under /jargon/html/ beside pages of its own.
const (
	mirrorOriginal = "www.catb.org"
	mirrorHost     = "milosophical.me"
	mirrorDir      = "/jargon/html/"
)

// MirrorRun is one crawl of the two sites.
type MirrorRun struct {
	Detect bool
	// Race is set for a run seeded with both copies' home pages.
	Race bool
	// CopiesFetched counts the pages fetched on both sites (same path
	// under the two directories): one of each pair was wasted, whichever
	// way detection took the copy. Copies is how many pairs there are.
	CopiesFetched, Copies int
	// OriginalFetched counts www.catb.org pages fetched; OwnFetched the
	// mirror host's pages outside the mirror directory.
	OriginalFetched, OwnFetched int
	// MirrorCopiesFetched counts the mirror's copies fetched: what
	// keeping the original costs (all of them, had the mirror been kept).
	MirrorCopiesFetched int
	Rules               []dedup.Rule
	Dup                 engine.DupStats
	Elapsed             time.Duration
	Stopped             bool
}

// Mirror crawls a real host that keeps a mirror of another real site in
// one of its directories, with and without duplicate detection, over
// loopback: what the mirror costs, and what detection saves without losing
// the host's own pages.
func Mirror(ctx context.Context, o MirrorOptions, out io.Writer) ([]MirrorRun, error) {
	orig := filepath.Join(o.Realweb, "catb.org-jargon")
	host := filepath.Join(o.Realweb, "sinewalker.github.io")
	for _, d := range []string{orig, host} {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("bench: mirror needs the real site %s (see -realweb): %v", d, err)
		}
	}
	copies, err := mirrorCopies(filepath.Join(orig, "html"), filepath.Join(host, strings.Trim(mirrorDir, "/")))
	if err != nil {
		return nil, err
	}
	dir, cleanup, err := benchDir(o.Dir)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	srv, port, err := serveSites(map[string]http.Handler{
		mirrorOriginal: http.StripPrefix("/jargon", http.FileServer(noListing{http.Dir(orig)})),
		mirrorHost:     http.FileServer(noListing{http.Dir(host)}),
	})
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	hosts := filepath.Join(dir, "hosts")
	if err := os.WriteFile(hosts, []byte("127.0.0.1 "+mirrorOriginal+" "+mirrorHost+"\n"), 0o644); err != nil {
		return nil, err
	}
	origin := func(h string) string { return "http://" + h + ":" + strconv.Itoa(port) }
	fmt.Fprintf(out, "bench mirror: %s (the Jargon File, %d pages in %s) and %s (a blog holding an HTTrack mirror of it in %s), served from %s on 127.0.0.1:%d; r=%d c=%d w=0\n",
		mirrorOriginal, len(copies), "/jargon/html/", mirrorHost, mirrorDir, o.Realweb, port, o.Robots, o.PagesPerVisit)

	var runs []MirrorRun
	type plan struct {
		detect, race bool
		seeds        []string
	}
	plans := []plan{{true, false, []string{origin(mirrorOriginal) + mirrorDir, origin(mirrorHost) + "/"}}, {false, false, []string{origin(mirrorOriginal) + mirrorDir, origin(mirrorHost) + "/"}}}
	for range o.Races {
		// The two copies' home pages and the blog's, at once: whichever
		// copy answers first, the original is to be kept.
		plans = append(plans, plan{true, true, []string{origin(mirrorHost) + mirrorDir, origin(mirrorOriginal) + mirrorDir, origin(mirrorHost) + "/"}})
	}
	for k, pl := range plans {
		detect := pl.detect
		cfg := benchConfig(pl.seeds, o.Robots, o.PagesPerVisit)
		cfg.Detect = detect
		// Only the two origins on this port: the pages' absolute links
		// name the real sites' port 80, which is not theirs here.
		cfg.Scope.Include = []string{"^" + regexp.QuoteMeta(origin(mirrorOriginal)) + "/", "^" + regexp.QuoteMeta(origin(mirrorHost)) + "/"}
		fmt.Fprintf(out, "\nrun detection=%v race=%v\n", detect, pl.race)
		// Every name in scope is in the hosts file; a name that is not is
		// asked of a loopback port where no server answers.
		dnsCfg := dns.Config{Servers: []string{"127.0.0.1:9"}, HostsFile: hosts, Timeout: 200 * time.Millisecond}
		c, err := runRecorded(ctx, cfg, o.OpenStore, filepath.Join(dir, fmt.Sprintf("mirror-%d-detect-%v.db", k, detect)), dnsCfg, o.Limit, o.ProgressInterval, out)
		if err != nil {
			return nil, err
		}
		run := MirrorRun{Detect: detect, Race: pl.race, Copies: len(copies), Rules: c.Rules, Dup: c.Stats.Dup, Elapsed: c.Elapsed, Stopped: c.Stopped}
		seen := map[string]bool{}
		for _, f := range c.fetched {
			if f.Status >= 200 && f.Status < 300 {
				seen[f.URL] = true
			}
		}
		origDir, copyDir := origin(mirrorOriginal)+mirrorDir, origin(mirrorHost)+mirrorDir
		// A directory's URL is its index page.
		rel := func(u, dir string) string {
			r := strings.TrimPrefix(u, dir)
			if r == "" || strings.HasSuffix(r, "/") {
				r += "index.html"
			}
			return r
		}
		fetched := func(dir, rel string) bool {
			return seen[dir+rel] || strings.HasSuffix(rel, "index.html") && seen[dir+strings.TrimSuffix(rel, "index.html")]
		}
		for u := range seen {
			switch {
			case strings.HasPrefix(u, origin(mirrorOriginal)+"/"):
				run.OriginalFetched++
				if r := rel(u, origDir); copies[r] && fetched(copyDir, r) {
					run.CopiesFetched++
				}
			case strings.HasPrefix(u, copyDir) && copies[rel(u, copyDir)]:
				run.MirrorCopiesFetched++
			case strings.HasPrefix(u, origin(mirrorHost)+"/"):
				run.OwnFetched++
			}
		}
		runs = append(runs, run)
		for _, r := range run.Rules {
			fmt.Fprintf(out, "  rule %s (supported by %d pairs, covered %d URLs)\n", r.String(), r.Supports, r.Covered)
		}
	}

	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "detection\trace\tcatb pages\tmirror copies\tfetched on both sites\tof\tmilosophical own pages\trules\tnear\texact\ttime\t")
	for _, r := range runs {
		fmt.Fprintf(tw, "%v\t%v\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s%s\t\n", r.Detect, r.Race, r.OriginalFetched, r.MirrorCopiesFetched, r.CopiesFetched, r.Copies, r.OwnFetched,
			len(r.Rules), r.Dup.Near, r.Dup.Exact, r.Elapsed.Round(100*time.Millisecond), stoppedNote(r.Stopped))
	}
	tw.Flush()
	on, off := runs[0], runs[1]
	kept, races := 0, 0
	var mirrorFetched []int
	for _, r := range runs[2:] {
		races++
		if r.OriginKept() {
			kept++
		}
		mirrorFetched = append(mirrorFetched, r.MirrorCopiesFetched)
	}
	slices.Sort(mirrorFetched)
	median := 0
	if len(mirrorFetched) > 0 {
		median = mirrorFetched[len(mirrorFetched)/2]
	}
	ownRecall := 1.0
	if off.OwnFetched > 0 {
		ownRecall = float64(on.OwnFetched) / float64(off.OwnFetched)
	}
	fmt.Fprintf(out, "mirror_copies=%d copies_fetched=%d copies_fetched_without_detection=%d own_pages=%d own_recall=%.4f rules=%d races=%d origin_kept=%d race_mirror_copies_fetched_median=%d\n",
		on.Copies, on.CopiesFetched, off.CopiesFetched, off.OwnFetched, ownRecall, len(on.Rules), races, kept, median)
	return runs, nil
}

// OriginKept reports whether the run kept the original: at least 99% of
// the Jargon File fetched at its source, and at most 1% of the mirror's
// copies.
func (r *MirrorRun) OriginKept() bool {
	return 100*r.OriginalFetched >= 99*r.Copies && 100*r.MirrorCopiesFetched <= r.Copies
}

// mirrorCopies returns the relative paths of the HTML pages found in both
// the original's directory and the mirror's.
func mirrorCopies(orig, mirror string) (map[string]bool, error) {
	out := map[string]bool{}
	err := filepath.WalkDir(orig, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".html" {
			return err
		}
		rel, err := filepath.Rel(orig, p)
		if err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(mirror, rel)); err == nil {
			out[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("bench: no page of %s is in %s", orig, mirror)
	}
	return out, err
}

// serveSites serves each host's handler on one loopback port, chosen by
// the Host header; other hosts get 404.
func serveSites(sites map[string]http.Handler) (*http.Server, int, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, 0, err
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			host, _, err := net.SplitHostPort(r.Host)
			if err != nil {
				host = r.Host
			}
			h, ok := sites[strings.ToLower(host)]
			if !ok {
				http.NotFound(w, r)
				return
			}
			h.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "bench: mirror server:", err)
		}
	}()
	return srv, ln.Addr().(*net.TCPAddr).Port, nil
}

// noListing serves files, and a directory only through its index.html: a
// generated listing would link pages the real site never linked.
type noListing struct{ fs http.FileSystem }

func (n noListing) Open(name string) (http.File, error) {
	f, err := n.fs.Open(name)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil || !st.IsDir() {
		return f, err
	}
	idx, err := n.fs.Open(strings.TrimSuffix(name, "/") + "/index.html")
	if err != nil {
		f.Close()
		return nil, fs.ErrNotExist
	}
	idx.Close()
	return f, nil
}
