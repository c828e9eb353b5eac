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

	"lidi/engine/fetch"
	"lidi/engine/rank"
	"lidi/engine/robots"
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
	// Disallowed marks the pages robots.txt forbids; nil means none. As in
	// the engine, such a page is queued and handed to a visit like any
	// other, then dropped without a request, so its links are never learnt.
	Disallowed []bool
}

// disallowed reports whether robots.txt forbids page p.
func (w *Web) disallowed(p int32) bool { return w.Disallowed != nil && w.Disallowed[p] }

// Site is how a simulated site answers.
type Site struct {
	// Latency is the time from a request to the first byte of its answer.
	// Opening a visit's connection costs it once more (the TCP handshake).
	Latency time.Duration
	// Bandwidth is the most bytes per second the site sends; 0 means
	// unlimited (the crawler's link is then the only limit).
	Bandwidth int64
	// Robots says whether the site's first visit asks for /robots.txt
	// before any page, as the engine does, and how the site answers;
	// RobotsSize is the answer's size in bytes.
	Robots     RobotsTxt
	RobotsSize int32
}

// RobotsTxt is how a simulated site answers /robots.txt.
type RobotsTxt uint8

const (
	// RobotsUnmodelled: no robots.txt request is made (the zero value).
	RobotsUnmodelled RobotsTxt = iota
	// RobotsOK: the first visit asks for robots.txt (one request, w before
	// the first page); its rules are Web.Disallowed.
	RobotsOK
	// RobotsError: robots.txt answers 5xx, which RFC 9309 reads as
	// "disallow everything": the site is given up after its first visit, as
	// the engine does with errors.park_after = 1.
	RobotsError
)

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
	if w.Disallowed != nil && len(w.Disallowed) != n {
		return fmt.Errorf("%w: %d robots marks for %d pages", ErrBadWeb, len(w.Disallowed), n)
	}
	for i, s := range w.Sites {
		if s.Latency < 0 || s.Bandwidth < 0 || s.RobotsSize < 0 || s.Robots > RobotsError {
			return fmt.Errorf("%w: site %d has latency %v, bandwidth %d", ErrBadWeb, i, s.Latency, s.Bandwidth)
		}
	}
	return nil
}

// FromSimweb returns the simulator's view of a simweb Web, starting from
// the home pages of its seeds most popular sites, with simweb's PageRank as
// the oracle (see CollectionRank for the chapter's). Page sizes are
// measured by rendering every page once (on all CPUs: about 16 µs per page
// per core), so a size is exactly what the simweb server sends. robots.txt
// is read as the engine reads it, with lidi's engine/robots for the agent
// RobotsAgent, so the simulator cannot drift from the engine's reading.
func FromSimweb(sw *simweb.Web, seeds int) *Web {
	n := sw.NumPages()
	w := &Web{
		Graph:      sw.Graph(),
		PageSite:   make([]int32, n),
		PageSize:   make([]int32, n),
		PageRank:   sw.PageRank(),
		Sites:      make([]Site, sw.NumSites()),
		Disallowed: make([]bool, n),
	}
	rules := make([]*robots.Rules, len(w.Sites))
	for s := range w.Sites {
		si := sw.Site(s)
		status, body := sw.RobotsTxt(s)
		rules[s] = robots.FromResponse(status, body)
		w.Sites[s] = Site{Latency: si.Latency, Bandwidth: si.Bandwidth, Robots: RobotsOK, RobotsSize: int32(len(body))}
		if rules[s].Kind().Temporary() {
			w.Sites[s].Robots = RobotsError // the engine backs off, then gives up
		}
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
					w.Disallowed[p] = !rules[w.PageSite[p]].Allowed(RobotsAgent, sw.Page(p).Path)
				}
			}
		})
	}
	wg.Wait()
	return w
}

// RobotsAgent is the user agent FromSimweb reads robots.txt for: the
// product token of lidi's default user agent, which is what engine/robots
// matches groups by.
var RobotsAgent = robots.ProductToken(fetch.DefaultUserAgent)

// LoadOptions fill in what an exported simweb directory does not say.
// The zero value gives every page DefaultPageSize bytes, every site no
// latency, unlimited bandwidth and an empty robots.txt answer, and starts
// from the 10 most popular sites.
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
// same columns. Only pages.csv's id, pagerank, site and disallowed columns,
// edges.csv and sites.csv's id, home_page, popularity and robots_kind
// columns are used.
func Load(dir string, opt LoadOptions) (*Web, error) {
	if opt.Seeds == 0 {
		opt.Seeds = 10
	}
	if opt.PageSize == 0 {
		opt.PageSize = DefaultPageSize
	}
	w := &Web{}
	// sites.csv: id,host,addr,pages,robots_kind,crawl_delay_s,home_page,popularity
	type siteRow struct {
		id, home, pop int
		robots        RobotsTxt
	}
	var rows []siteRow
	err := readCSV(filepath.Join(dir, "sites.csv"), []string{"id", "home_page", "popularity", "robots_kind"}, func(f []string) error {
		id, err1 := strconv.Atoi(f[0])
		home, err2 := strconv.Atoi(f[1])
		pop, err3 := strconv.Atoi(f[2])
		if err := errors.Join(err1, err2, err3); err != nil {
			return err
		}
		robots := RobotsOK
		if f[3] == simweb.RobotsServerError.String() {
			robots = RobotsError
		}
		rows = append(rows, siteRow{id, home, pop, robots})
		return nil
	})
	if err != nil {
		return nil, err
	}
	w.Sites = make([]Site, len(rows))
	for i, r := range rows {
		if r.id != i {
			return nil, fmt.Errorf("sim: %s: site id %d out of order (want %d)", dir, r.id, i)
		}
		w.Sites[i] = Site{Latency: opt.Latency, Bandwidth: opt.Bandwidth, Robots: r.robots}
	}
	// pages.csv: id,url_path,host,depth,pagerank,site,kind,disallowed
	err = readCSV(filepath.Join(dir, "pages.csv"), []string{"id", "pagerank", "site", "disallowed"}, func(f []string) error {
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
		w.Disallowed = append(w.Disallowed, f[3] == "1")
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
