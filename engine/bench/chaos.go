package bench

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"lidi/engine/config"
	"lidi/engine/simweb"
)

// ChaosOptions sets up `lidi bench chaos`. The zero value is not usable:
// Crawler and OpenDB must be set (main.go wires them) and the sizes given,
// as RegisterFlags does.
type ChaosOptions struct {
	Sites, Pages int   // the synthetic web
	Seed         int64 // the synthetic web's seed
	Seeds        int   // seed URLs: the home pages of the most popular sites
	Kills        int   // SIGKILLs before the crawl is let finish
	// KillSeed seeds the choice of the kill moments: the same seed picks
	// the same moments, counted in pages requested.
	KillSeed      int64
	Robots        int           // r
	PagesPerVisit int           // c
	Delay         time.Duration // w, also the cap on robots.txt Crawl-delay
	FlushInterval time.Duration // storage.flush_interval of the crawls
	// Jitter is the most a kill waits, at random, after its moment came:
	// kills then fall anywhere in a visit and between flushes, not only
	// right after a page. Zero kills at once.
	Jitter time.Duration
	// Limit bounds each run of the crawler: a run still going after it
	// fails the benchmark.
	Limit time.Duration
	Dir   string // where the crawl databases and logs go ("": a temporary directory)
	// Crawler is the argv that runs lidi's crawl command, such as
	// {"/usr/bin/lidi", "crawl"}; the harness adds --headless and
	// --config. Env is added to its environment.
	Crawler []string
	Env     []string
	// OpenDB opens a crawl database written by Crawler, once that process
	// has ended.
	OpenDB func(path string) (ChaosDB, error)
}

// ChaosDB is what the harness reads in a crawl database.
type ChaosDB interface {
	// FetchedLinks calls fn for every fetched page.
	FetchedLinks(ctx context.Context, fn func(page uint64, url string, links []uint64)) error
	// IntegrityCheck returns SQLite's PRAGMA integrity_check answer: "ok"
	// or the problems found.
	IntegrityCheck(ctx context.Context) (string, error)
	Close() error
}

// RegisterFlags adds the benchmark's flags to fs, with their defaults.
func (o *ChaosOptions) RegisterFlags(fs *flag.FlagSet) {
	simweb.WebFlags(fs, &o.Sites, 60, &o.Pages, 6000, &o.Seed)
	fs.IntVar(&o.Seeds, "seeds", 5, "seed URLs (home pages of the most popular sites)")
	fs.IntVar(&o.Kills, "kills", 20, "SIGKILLs before the crawl is let finish")
	fs.Int64Var(&o.KillSeed, "kill-seed", 1, "seed of the random kill moments")
	crawlerFlags(fs, &o.Robots, 32, &o.PagesPerVisit, 100)
	fs.DurationVar(&o.Delay, "w", 20*time.Millisecond, "w: delay between two requests to one site")
	fs.DurationVar(&o.FlushInterval, "flush-interval", config.Default().FlushEvery, "storage.flush_interval of the crawls")
	fs.DurationVar(&o.Jitter, "jitter", time.Second, "longest random wait between a kill's moment and the kill")
	limitFlag(fs, &o.Limit, 5*time.Minute)
	dirFlag(fs, &o.Dir, "the crawl databases and logs")
}

// ChaosKill is one kill of the crawler.
type ChaosKill struct {
	At        time.Duration // since the chaos crawl's first start
	RunFor    time.Duration // since this run's start
	Target    int           // the pages requested the kill waited for
	Requested int           // pages requested when it was sent
	Stored    int           // pages in the database it left
	// Due counts the pages the database must hold after this kill: those
	// answered more than flush_interval + 1 s before the kill that ended
	// the run they were fetched in (this one or an earlier one). Missing
	// lists those absent from the database this kill left.
	Due     int
	Missing []string
}

// ChaosResult is what the benchmark found. The goal is no page lost, none
// refetched, integrity "ok" and Equal.
type ChaosResult struct {
	Kills []ChaosKill
	// Reference is the number of pages the uninterrupted crawl stored.
	Reference int
	// Lost lists the pages that were due (see ChaosKill.Due) yet missing
	// from the database a kill left or from the final one.
	Lost []string
	// Refetched lists the pages requested again after they were due: their
	// fetch should have been kept. Redone counts the other pages requested
	// more than once, which a kill excuses: in flight when it came, or
	// answered within flush_interval + 1 s before it.
	Refetched []string
	Redone    int
	Integrity string // PRAGMA integrity_check of the final database
	// Ended says the final run ended on its own, as the uninterrupted one
	// did.
	Ended bool
	// Missing and Extra are the pages the uninterrupted crawl stored and
	// the final database lacks, and the other way round; Equal says both
	// are empty and the final run ended.
	Missing, Extra []string
	Equal          bool
}

// KeyValues is the benchmark's last line.
func (r *ChaosResult) KeyValues() string {
	integrity := r.Integrity
	if integrity != "ok" {
		integrity = "failed"
	}
	return fmt.Sprintf("kills=%d lost=%d refetched=%d integrity=%s equal=%t",
		len(r.Kills), len(r.Lost), len(r.Refetched), integrity, r.Equal)
}

// chaosGrace is how long before a kill a page may have been answered and
// still be missing from the database: storage.flush_interval plus this.
const chaosGrace = time.Second

// Chaos runs the chaos benchmark: it serves simweb in this process (with
// its page log on), crawls it once with lidi's crawl command run to the
// end, then crawls it again into a new database, killing the crawler with
// SIGKILL at o.Kills random moments and restarting it each time before
// letting it finish. It writes one line per kill and a report to out,
// ending with the line ChaosResult.KeyValues returns.
func Chaos(ctx context.Context, o ChaosOptions, out io.Writer) (*ChaosResult, error) {
	if len(o.Crawler) == 0 || o.OpenDB == nil {
		return nil, errors.New("bench: chaos needs Crawler and OpenDB")
	}
	dir, cleanup, err := benchDir(o.Dir)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	web, err := simweb.Generate(simweb.Options{Seed: o.Seed, Sites: o.Sites, Pages: o.Pages})
	if err != nil {
		return nil, err
	}
	srv, err := simweb.Start(ctx, web, simweb.ServerConfig{LogPages: true})
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	grace := o.FlushInterval + chaosGrace
	fmt.Fprintf(out, "bench chaos: simweb of %d sites, %d pages (seed %d), %d seeds; r=%d c=%d w=%s flush_interval=%s; %d kills (kill seed %d, jitter %s); storage in %s\n",
		o.Sites, o.Pages, o.Seed, o.Seeds, o.Robots, o.PagesPerVisit, o.Delay, o.FlushInterval, o.Kills, o.KillSeed, o.Jitter, dir)

	h := &chaosHarness{o: o, srv: srv, dir: dir}
	ref, err := h.reference(ctx, out)
	if err != nil {
		return nil, err
	}

	// The crawl under chaos: kill moments are counts of pages requested,
	// drawn over the uninterrupted crawl's, each followed by a random wait.
	srv.ResetWitness()
	rng := rand.New(rand.NewPCG(uint64(o.KillSeed), 0x6c696469))
	targets := make([]int, o.Kills)
	for i := range targets {
		targets[i] = 1 + rng.IntN(len(ref)-1)
	}
	slices.Sort(targets)
	cfg, err := h.writeConfig("chaos")
	if err != nil {
		return nil, err
	}
	dbPath := filepath.Join(dir, "chaos.db")
	res := &ChaosResult{Reference: len(ref)}
	// due maps each page that became due to its request count then: a
	// later request is a refetch.
	due := make(map[string]int64)
	lost := make(map[string]bool)
	start := time.Now()
	for i, target := range targets {
		wait := time.Duration(0)
		if o.Jitter > 0 {
			wait = time.Duration(rng.Int64N(int64(o.Jitter)))
		}
		k, killedAt, ended, err := h.runAndKill(ctx, cfg, fmt.Sprintf("chaos-%02d", i+1), target, wait)
		if err != nil {
			return nil, err
		}
		if ended {
			fmt.Fprintf(out, "kill %2d/%d: the crawl ended on its own before its moment (%d pages requested, target %d)\n", i+1, o.Kills, srv.PagesRequested(), target)
			break
		}
		k.At = killedAt.Sub(start)
		stored, _, err := h.readDB(ctx, dbPath, false)
		if err != nil {
			return nil, err
		}
		k.Stored = len(stored)
		// Pages answered in this run long enough before the kill are due
		// from now on; those answered in an earlier run became due then
		// or were excused by that run's kill (an answer cut short by it
		// ends before this run started).
		runStart := killedAt.Add(-k.RunFor)
		for u, r := range srv.PageRequests() {
			if _, ok := due[u]; !ok && r.LastDone.After(runStart) && r.LastDone.Before(killedAt.Add(-grace)) {
				due[u] = r.Requests
			}
		}
		for u := range due {
			if !stored[u] {
				k.Missing = append(k.Missing, u)
				lost[u] = true
			}
		}
		k.Due = len(due)
		slices.Sort(k.Missing)
		res.Kills = append(res.Kills, k)
		fmt.Fprintf(out, "kill %2d/%d at %7.3fs (%s into run %d): %d pages requested (target %d), %d stored, %d due, %d of them missing%s\n",
			i+1, o.Kills, k.At.Seconds(), k.RunFor.Round(time.Millisecond), i+1, k.Requested, target, k.Stored, k.Due, len(k.Missing), sample(k.Missing))
	}
	res.Ended, err = h.runToEnd(ctx, cfg, "chaos-final")
	if err != nil {
		return nil, err
	}
	if !res.Ended {
		fmt.Fprintf(out, "final run: the crawl had not ended after %s: stopped with SIGINT; its log ends:\n%s\n", o.Limit, h.tail("chaos-final"))
	}
	final, integrity, err := h.readDB(ctx, dbPath, true)
	if err != nil {
		return nil, err
	}
	res.Integrity = integrity
	log := srv.PageRequests()
	fmt.Fprintf(out, "final run: %s in all, %d pages stored, %d requested\n",
		time.Since(start).Round(time.Millisecond), len(final), len(log))

	for u, n := range due {
		if !final[u] {
			lost[u] = true
		}
		if log[u].Requests > n {
			res.Refetched = append(res.Refetched, u)
		}
	}
	for u, r := range log {
		if n, ok := due[u]; r.Requests > 1 && (!ok || r.Requests == n) {
			res.Redone++
		}
	}
	res.Lost = slices.Sorted(maps.Keys(lost))
	slices.Sort(res.Refetched)
	for u := range ref {
		if !final[u] {
			res.Missing = append(res.Missing, u)
		}
	}
	for u := range final {
		if !ref[u] {
			res.Extra = append(res.Extra, u)
		}
	}
	slices.Sort(res.Missing)
	slices.Sort(res.Extra)
	res.Equal = res.Ended && len(res.Missing) == 0 && len(res.Extra) == 0

	fmt.Fprintf(out, "pages lost           %d%s\n", len(res.Lost), sample(res.Lost))
	fmt.Fprintf(out, "pages refetched      %d%s (besides %d redone: in flight at a kill or answered within %s before it)\n", len(res.Refetched), sample(res.Refetched), res.Redone, grace)
	fmt.Fprintf(out, "integrity_check      %s\n", res.Integrity)
	fmt.Fprintf(out, "equal to reference   %t (%d pages; %d missing%s, %d extra%s; ended on its own: %t)\n",
		res.Equal, len(ref), len(res.Missing), sample(res.Missing), len(res.Extra), sample(res.Extra), res.Ended)
	fmt.Fprintln(out, res.KeyValues())
	return res, nil
}

// reference runs the uninterrupted crawl and returns the pages it stored.
func (h *chaosHarness) reference(ctx context.Context, out io.Writer) (map[string]bool, error) {
	cfg, err := h.writeConfig("reference")
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if ended, err := h.runToEnd(ctx, cfg, "reference"); err != nil || !ended {
		if err == nil {
			err = fmt.Errorf("bench: the uninterrupted crawl did not end within %s; its log ends:\n%s", h.o.Limit, h.tail("reference"))
		}
		return nil, err
	}
	took := time.Since(start)
	ref, _, err := h.readDB(ctx, filepath.Join(h.dir, "reference.db"), false)
	if err != nil {
		return nil, err
	}
	log := h.srv.PageRequests()
	twice := 0
	for _, r := range log {
		if r.Requests > 1 {
			twice++
		}
	}
	fmt.Fprintf(out, "reference: the uninterrupted crawl stored %d pages in %s; %d pages requested, %d of them more than once\n",
		len(ref), took.Round(time.Millisecond), len(log), twice)
	if len(ref) < 2 {
		return nil, fmt.Errorf("bench: the uninterrupted crawl stored %d pages: nothing to kill", len(ref))
	}
	return ref, nil
}

// sample formats up to five of urls for a report line.
func sample(urls []string) string {
	if len(urls) == 0 {
		return ""
	}
	const n = 5
	s := ": " + strings.Join(urls[:min(n, len(urls))], " ")
	if len(urls) > n {
		s += fmt.Sprintf(" and %d more", len(urls)-n)
	}
	return s
}

// chaosHarness runs the crawler as a child process.
type chaosHarness struct {
	o   ChaosOptions
	srv *simweb.Server
	dir string
}

// writeConfig writes the config.yaml of the crawl named name (its database
// is name.db) and returns its path.
func (h *chaosHarness) writeConfig(name string) (string, error) {
	o := h.o
	cfg := config.Default()
	cfg.Seeds = h.srv.SeedURLs(o.Seeds)
	cfg.Scope.AllowedDomains = []string{"test"} // simweb's hosts
	cfg.Robots = o.Robots
	cfg.Delay = o.Delay
	cfg.MaxDelay = o.Delay // simweb's Crawl-delays would make the crawl last hours
	cfg.PagesPerVisit = o.PagesPerVisit
	cfg.DNS.Servers = []string{h.srv.DNSAddr()}
	// Sites whose robots.txt answers 5xx are retried soon, then parked,
	// so the crawl ends.
	cfg.RobotsRetry = 200 * time.Millisecond
	cfg.ParkAfter = 3
	cfg.StoragePath = filepath.Join(h.dir, name+".db")
	cfg.FlushEvery = o.FlushInterval
	if err := cfg.Check(); err != nil {
		return "", fmt.Errorf("bench: chaos crawl's configuration: %w", err)
	}
	data, err := cfg.Marshal()
	if err != nil {
		return "", err
	}
	path := filepath.Join(h.dir, name+".yaml")
	return path, os.WriteFile(path, data, 0o644)
}

// child is one run of the crawler.
type child struct {
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{} // closed when cmd.Wait returned
	err  error         // cmd.Wait's result, set before done closes
}

func (h *chaosHarness) start(cfgPath, name string) (*child, error) {
	log, err := os.Create(filepath.Join(h.dir, name+".log"))
	if err != nil {
		return nil, err
	}
	args := append(append([]string(nil), h.o.Crawler[1:]...), "--headless", "--config", cfgPath)
	cmd := exec.Command(h.o.Crawler[0], args...)
	cmd.Env = append(os.Environ(), h.o.Env...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("bench: starting the crawler: %w", err)
	}
	c := &child{cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		log.Close()
		close(c.done)
	}()
	return c, nil
}

// kill ends the child with SIGKILL and waits for it.
func (c *child) kill() {
	c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.done
}

// tail returns the last lines of a run's log, for a message.
func (h *chaosHarness) tail(name string) string {
	const lines = 5
	b, _ := os.ReadFile(filepath.Join(h.dir, name+".log"))
	ls := strings.Split(string(bytes.TrimSpace(b)), "\n")
	return strings.Join(ls[max(0, len(ls)-lines):], "\n")
}

// runToEnd runs the crawler until it exits, which must be with status 0.
// A run still going after o.Limit is stopped with SIGINT (its state saved)
// and reported as not finished.
func (h *chaosHarness) runToEnd(ctx context.Context, cfgPath, name string) (finished bool, err error) {
	c, err := h.start(cfgPath, name)
	if err != nil {
		return false, err
	}
	limit := time.NewTimer(h.o.Limit)
	defer limit.Stop()
	select {
	case <-c.done:
		finished = true
	case <-limit.C:
		c.cmd.Process.Signal(os.Interrupt)
		grace := time.NewTimer(30 * time.Second)
		defer grace.Stop()
		select {
		case <-c.done:
		case <-grace.C:
			c.kill()
		}
		return false, nil
	case <-ctx.Done():
		c.kill()
		return false, ctx.Err()
	}
	if c.err != nil {
		return false, fmt.Errorf("bench: crawl %s: %w; its log ends:\n%s", name, c.err, h.tail(name))
	}
	return true, nil
}

// runAndKill starts the crawler, waits until simweb's page log holds
// target pages, then wait more, and kills it, returning the kill and when
// SIGKILL was sent. ended reports a crawl that ended on its own first
// (with status 0; another status is an error).
func (h *chaosHarness) runAndKill(ctx context.Context, cfgPath, name string, target int, wait time.Duration) (k ChaosKill, at time.Time, ended bool, err error) {
	c, err := h.start(cfgPath, name)
	if err != nil {
		return k, at, false, err
	}
	began := time.Now()
	limit := time.NewTimer(h.o.Limit)
	defer limit.Stop()
	poll := time.NewTicker(2 * time.Millisecond)
	defer poll.Stop()
	var due <-chan time.Time // the kill's moment, once the target is reached
	for {
		select {
		case <-c.done:
			if c.err != nil {
				return k, at, false, fmt.Errorf("bench: crawl %s: %w; its log ends:\n%s", name, c.err, h.tail(name))
			}
			return k, at, true, nil
		case <-limit.C:
			c.kill()
			return k, at, false, fmt.Errorf("bench: crawl %s requested %d of %d pages in %s; its log ends:\n%s", name, h.srv.PagesRequested(), target, h.o.Limit, h.tail(name))
		case <-ctx.Done():
			c.kill()
			return k, at, false, ctx.Err()
		case <-poll.C:
			if due != nil || h.srv.PagesRequested() < target {
				continue
			}
			t := time.NewTimer(wait)
			defer t.Stop()
			due = t.C
		case <-due:
			k.Target = target
			k.Requested = h.srv.PagesRequested()
			at = time.Now()
			k.RunFor = at.Sub(began)
			c.kill()
			return k, at, false, nil
		}
	}
}

// readDB opens a crawl database once its crawler has ended and returns the
// URLs of its fetched pages and, when integrity is set, its integrity
// check. A database not created yet has no pages.
func (h *chaosHarness) readDB(ctx context.Context, path string, integrity bool) (map[string]bool, string, error) {
	pages := make(map[string]bool)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) && !integrity {
		return pages, "", nil
	}
	db, err := h.o.OpenDB(path)
	if err != nil {
		return nil, "", err
	}
	check := ""
	if integrity {
		// A damaged file may answer with an error rather than a list.
		if check, err = db.IntegrityCheck(ctx); err != nil {
			check = err.Error()
		}
	}
	err = db.FetchedLinks(ctx, func(_ uint64, url string, _ []uint64) { pages[url] = true })
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return pages, check, err
}
