package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/dustin/go-humanize"

	"lidi/engine/config"
	"lidi/storage"
	"lidi/storage/warcexport"
)

// warcFlags are lidi export's flags for a web archive.
type warcFlags struct {
	dir, prefix, config *string
	maxSize             *int64
}

func addWarcFlags(fs *flag.FlagSet) *warcFlags {
	return &warcFlags{
		dir:     fs.String("warc", "", "write the crawl as WARC/1.1 files and a CDXJ index into this `directory` (created if missing) instead of a snapshot"),
		prefix:  fs.String("prefix", "lidi", "with --warc: the WARC files' name prefix"),
		config:  fs.String("config", "", "with --warc: the crawl's configuration `file`, recorded in the archive (its user agent and robots policy in warcinfo)"),
		maxSize: fs.Int64("max-size", warcexport.DefaultMaxSize, "with --warc: start a new WARC file past this many `bytes`"),
	}
}

// exportWARC writes the crawl in dbPath (a crawl database, even one a
// crawl is writing, or a snapshot) as a web archive.
func exportWARC(ctx context.Context, out output, dbPath string, f *warcFlags) error {
	opt := warcexport.Options{Dir: *f.dir, Prefix: *f.prefix, MaxSize: *f.maxSize,
		Info: [][2]string{{"robots", "obey robots.txt (RFC 9309)"}}}
	if *f.config != "" {
		cfg, err := config.Load(*f.config)
		if err != nil {
			return err
		}
		if opt.Config, err = os.ReadFile(*f.config); err != nil {
			return err
		}
		opt.ConfigName = *f.config
		opt.Info = [][2]string{
			{"http-header-user-agent", cfg.UserAgent},
			{"robots", fmt.Sprintf("obey robots.txt (RFC 9309); rel=nofollow honoured: %v; robots meta tags and X-Robots-Tag honoured: %v",
				cfg.HonourNofollow, cfg.HonourMetaRobots)},
		}
	}
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return err
	}
	src, err := storage.OpenCaptures(ctx, dbPath)
	if err != nil {
		return err
	}
	defer src.Close()
	bar := newProgressBar(out.stderr)
	opt.Progress = bar.update
	start := time.Now()
	sum, err := warcexport.Export(ctx, src, opt)
	bar.finish()
	if err != nil {
		return err
	}
	printSummary(out.stdout, sum, time.Since(start))
	return nil
}

// printSummary says what the export wrote and what the crawl did not keep.
func printSummary(w io.Writer, s *warcexport.Summary, took time.Duration) {
	var records int64
	var types []string
	for _, t := range []string{"warcinfo", "request", "response", "revisit", "metadata", "resource"} {
		if n := s.Records[t]; n > 0 {
			records += n
			types = append(types, fmt.Sprintf("%s %s", humanize.Comma(n), t))
		}
	}
	fmt.Fprintf(w, "%d WARC files, %s records (%s), %s, index %s\n", len(s.Files), humanize.Comma(records),
		strings.Join(types, ", "), humanize.Bytes(uint64(s.Bytes)), s.Index)
	secs := max(took.Seconds(), 1e-3)
	fmt.Fprintf(w, "in %s: %.0f records/s, %.1f MB/s\n", took.Round(time.Millisecond), float64(records)/secs, float64(s.Bytes)/1e6/secs)
	m := s.Missing
	if m.Total() == 0 {
		return
	}
	fmt.Fprintf(w, "missing from the archive (the crawl did not keep them):\n")
	for _, l := range []struct {
		n    int64
		what string
	}{
		{m.Headers, "fetches without their headers (storage.keep_headers off, or an older lidi): a metadata record stands in for each response"},
		{m.Bodies, "responses without their body (storage.keep_bodies off, or replaced by a later fetch that changed it): a metadata record stands in for each"},
		{m.NoResponse, "fetches that got no response: nothing written"},
		{m.RobotsHeaders, "robots.txt files without their headers: written as resource records"},
	} {
		if l.n > 0 {
			fmt.Fprintf(w, "  %s %s\n", humanize.Comma(l.n), l.what)
		}
	}
}

// progressBar draws an export's progress on a terminal, redrawn in place,
// or prints a line every few seconds otherwise.
type progressBar struct {
	w     io.Writer
	tty   bool
	start time.Time
	last  time.Time
	drawn bool
}

func newProgressBar(w io.Writer) *progressBar {
	f, ok := w.(*os.File)
	now := time.Now()
	return &progressBar{w: w, tty: ok && term.IsTerminal(f.Fd()), start: now, last: now}
}

func (b *progressBar) update(p warcexport.Progress) {
	now := time.Now()
	every := 5 * time.Second
	if b.tty {
		every = 200 * time.Millisecond
	}
	if now.Sub(b.last) < every || p.TotalFetches == 0 {
		return
	}
	b.last = now
	frac := min(float64(p.Fetches)/float64(p.TotalFetches), 1)
	eta := "?"
	if frac > 0 {
		eta = (time.Duration(float64(now.Sub(b.start)) * (1 - frac) / frac)).Round(time.Second).String()
	}
	const width = 30
	fill := int(frac * width)
	line := fmt.Sprintf("[%s%s] %3.0f%% %s/%s fetches, %s records, %s, ETA %s", strings.Repeat("#", fill), strings.Repeat(".", width-fill),
		100*frac, humanize.Comma(p.Fetches), humanize.Comma(p.TotalFetches), humanize.Comma(p.Records), humanize.Bytes(uint64(p.Bytes)), eta)
	if b.tty {
		fmt.Fprintf(b.w, "\r%s\x1b[K", line)
		b.drawn = true
	} else {
		fmt.Fprintln(b.w, line)
	}
}

func (b *progressBar) finish() {
	if b.drawn {
		fmt.Fprint(b.w, "\r\x1b[K")
	}
}
