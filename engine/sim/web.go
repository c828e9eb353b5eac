package sim

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"lidi/engine/rank"
	"lidi/engine/simweb"
)

// Web is what the simulator crawls: a link graph whose node i is page i,
// each page's site and size, the oracle's PageRank, each site's latency and
// bandwidth, and the seed pages. Pages of a site need not be contiguous.
//
// A Web is a plain value: Run only reads it, so one Web may serve several
// simulations at once. The zero Web has no pages.
type Web struct {
	Graph    *rank.Graph // page i links to Graph.Out(i)
	PageSite []int32     // site of each page, an index into Sites
	PageSize []int32     // bytes of each page's response body
	PageRank []float64   // the oracle: each page's final PageRank
	Sites    []Site
	Seeds    []int32 // pages the crawl starts from, in order
}

// Site is how a simulated site answers.
type Site struct {
	// Latency is the time from a request to the first byte of its answer.
	// Opening a visit's connection costs it once more (the TCP handshake).
	Latency time.Duration
	// Bandwidth is the most bytes per second the site sends; 0 means
	// unlimited (the crawler's link is then the only limit).
	Bandwidth int64
}

// ErrBadWeb reports a Web whose parts do not fit together.
var ErrBadWeb = errors.New("sim: malformed web")

// NumPages returns the number of pages.
func (w *Web) NumPages() int { return len(w.PageSite) }

// Validate checks that the parts of w fit together.
func (w *Web) Validate() error {
	n := len(w.PageSite)
	switch {
	case w.Graph == nil:
		return fmt.Errorf("%w: no graph", ErrBadWeb)
	case w.Graph.NumNodes() != n:
		return fmt.Errorf("%w: graph has %d nodes for %d pages", ErrBadWeb, w.Graph.NumNodes(), n)
	case len(w.PageSize) != n:
		return fmt.Errorf("%w: %d sizes for %d pages", ErrBadWeb, len(w.PageSize), n)
	case len(w.PageRank) != n:
		return fmt.Errorf("%w: %d PageRank values for %d pages", ErrBadWeb, len(w.PageRank), n)
	}
	for p, s := range w.PageSite {
		if s < 0 || int(s) >= len(w.Sites) {
			return fmt.Errorf("%w: page %d on site %d of %d", ErrBadWeb, p, s, len(w.Sites))
		}
	}
	for _, p := range w.Seeds {
		if p < 0 || int(p) >= n {
			return fmt.Errorf("%w: seed page %d of %d", ErrBadWeb, p, n)
		}
	}
	for i, s := range w.Sites {
		if s.Latency < 0 || s.Bandwidth < 0 {
			return fmt.Errorf("%w: site %d has latency %v, bandwidth %d", ErrBadWeb, i, s.Latency, s.Bandwidth)
		}
	}
	return nil
}

// FromSimweb returns the simulator's view of a simweb Web, starting from
// the home pages of its seeds most popular sites. Page sizes are measured
// by rendering every page once (on all CPUs: about 16 µs per page per
// core), so a size is exactly what the simweb server sends.
func FromSimweb(sw *simweb.Web, seeds int) *Web {
	n := sw.NumPages()
	w := &Web{
		Graph:    sw.Graph(),
		PageSite: make([]int32, n),
		PageSize: make([]int32, n),
		PageRank: sw.PageRank(),
		Sites:    make([]Site, sw.NumSites()),
	}
	for s := range w.Sites {
		si := sw.Site(s)
		w.Sites[s] = Site{Latency: si.Latency, Bandwidth: si.Bandwidth}
		for p := si.HomePage; p < si.HomePage+si.Pages; p++ {
			w.PageSite[p] = int32(s)
		}
	}
	for _, p := range sw.Seeds(seeds) {
		w.Seeds = append(w.Seeds, int32(p))
	}
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	const chunk = 4096
	var mu sync.Mutex
	next := 0
	for range workers {
		wg.Go(func() {
			var buf []byte
			for {
				mu.Lock()
				a := next
				next += chunk
				mu.Unlock()
				if a >= n {
					return
				}
				for p := a; p < min(a+chunk, n); p++ {
					buf = sw.AppendHTML(buf[:0], p, 0)
					w.PageSize[p] = int32(len(buf))
				}
			}
		})
	}
	wg.Wait()
	return w
}

// LoadOptions fill in what an exported simweb directory does not say.
// The zero value gives every page DefaultPageSize bytes and every site no
// latency and unlimited bandwidth, and starts from the 10 most popular
// sites.
type LoadOptions struct {
	Seeds     int           // home pages of the most popular sites to start from; 0 means 10
	PageSize  int           // bytes per page; 0 means DefaultPageSize
	Latency   time.Duration // of every site
	Bandwidth int64         // of every site, bytes per second; 0 means unlimited
}

// DefaultPageSize is the page size Load gives pages when LoadOptions says
// nothing: simweb's median.
const DefaultPageSize = simweb.DefaultPageSizeMedian

// Load reads a web exported by "lidi simweb --export DIR" (pages.csv,
// edges.csv, sites.csv; see simweb.Web.Export), or any graph written in the
// same columns. Only pages.csv's id, pagerank and site columns, edges.csv
// and sites.csv's id, home_page and popularity columns are used.
func Load(dir string, opt LoadOptions) (*Web, error) {
	if opt.Seeds == 0 {
		opt.Seeds = 10
	}
	if opt.PageSize == 0 {
		opt.PageSize = DefaultPageSize
	}
	w := &Web{}
	// sites.csv: id,host,addr,pages,robots_kind,crawl_delay_s,home_page,popularity
	type siteRow struct{ id, home, pop int }
	var rows []siteRow
	err := readCSV(filepath.Join(dir, "sites.csv"), []string{"id", "home_page", "popularity"}, func(f []string) error {
		id, err1 := strconv.Atoi(f[0])
		home, err2 := strconv.Atoi(f[1])
		pop, err3 := strconv.Atoi(f[2])
		if err := errors.Join(err1, err2, err3); err != nil {
			return err
		}
		rows = append(rows, siteRow{id, home, pop})
		return nil
	})
	if err != nil {
		return nil, err
	}
	w.Sites = make([]Site, len(rows))
	for i := range w.Sites {
		w.Sites[i] = Site{Latency: opt.Latency, Bandwidth: opt.Bandwidth}
	}
	// pages.csv: id,url_path,host,depth,pagerank,site,kind,disallowed
	err = readCSV(filepath.Join(dir, "pages.csv"), []string{"id", "pagerank", "site"}, func(f []string) error {
		id, err1 := strconv.Atoi(f[0])
		pr, err2 := strconv.ParseFloat(f[1], 64)
		site, err3 := strconv.Atoi(f[2])
		if err := errors.Join(err1, err2, err3); err != nil {
			return err
		}
		if id != len(w.PageSite) {
			return fmt.Errorf("page id %d out of order (want %d)", id, len(w.PageSite))
		}
		w.PageSite = append(w.PageSite, int32(site))
		w.PageRank = append(w.PageRank, pr)
		return nil
	})
	if err != nil {
		return nil, err
	}
	n := len(w.PageSite)
	var from, to []int32
	err = readCSV(filepath.Join(dir, "edges.csv"), []string{"from", "to"}, func(f []string) error {
		a, err1 := strconv.ParseInt(f[0], 10, 32)
		b, err2 := strconv.ParseInt(f[1], 10, 32)
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		from, to = append(from, int32(a)), append(to, int32(b))
		return nil
	})
	if err != nil {
		return nil, err
	}
	w.Graph, err = rank.NewGraph(n, func(yield func(int32, int32) bool) {
		for i := range from {
			if !yield(from[i], to[i]) {
				return
			}
		}
	})
	if err != nil {
		return nil, fmt.Errorf("sim: load %s: %w", dir, err)
	}
	w.PageSize = make([]int32, n)
	for i := range w.PageSize {
		w.PageSize[i] = int32(opt.PageSize)
	}
	slices.SortFunc(rows, func(a, b siteRow) int { return cmp.Compare(a.pop, b.pop) })
	for _, r := range rows[:min(opt.Seeds, len(rows))] {
		w.Seeds = append(w.Seeds, int32(r.home))
	}
	if err := w.Validate(); err != nil {
		return nil, fmt.Errorf("sim: load %s: %w", dir, err)
	}
	return w, nil
}

// readCSV calls row with the named columns of every data line of a CSV file
// without quoting (as simweb writes them).
func readCSV(name string, cols []string, row func([]string) error) error {
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	if !sc.Scan() {
		return fmt.Errorf("sim: %s: no header line", name)
	}
	header := strings.Split(strings.TrimSpace(sc.Text()), ",")
	idx := make([]int, len(cols))
	for i, c := range cols {
		idx[i] = slices.Index(header, c)
		if idx[i] < 0 {
			return fmt.Errorf("sim: %s: no column %q", name, c)
		}
	}
	vals := make([]string, len(cols))
	var fields []string
	line := 1
	for sc.Scan() {
		line++
		text := sc.Text()
		if text == "" {
			continue
		}
		fields = fields[:0]
		for {
			i := strings.IndexByte(text, ',')
			if i < 0 {
				fields = append(fields, text)
				break
			}
			fields = append(fields, text[:i])
			text = text[i+1:]
		}
		for i, j := range idx {
			if j >= len(fields) {
				return fmt.Errorf("sim: %s:%d: %d fields, want %d", name, line, len(fields), len(header))
			}
			vals[i] = fields[j]
		}
		if err := row(vals); err != nil {
			return fmt.Errorf("sim: %s:%d: %w", name, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("sim: %s: %w", name, err)
	}
	return nil
}
