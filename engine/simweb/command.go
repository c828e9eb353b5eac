package simweb

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

// CommandDoc says what "lidi simweb" does, for its usage.
const CommandDoc = `Serve a synthetic web on loopback addresses with its own DNS server (and a
witness of politeness at http://ADMIN/witness) until interrupted, or export
its link graph and PageRank as CSV.`

// CommandFlags registers the flags of "lidi simweb" on fs and returns the
// function that runs the command once fs is parsed: it generates the web,
// then either exports it (-export DIR) and returns, or serves it, prints the
// seed URLs and the DNS and admin addresses to stdout, and returns when ctx
// is done.
func CommandFlags(fs *flag.FlagSet) func(ctx context.Context, stdout io.Writer) error {
	opt := Options{Sites: DefaultSites}
	opt.RegisterFlags(fs)
	var cfg ServerConfig
	cfg.RegisterFlags(fs)
	export := fs.String("export", "", "write pages.csv, edges.csv, sites.csv and README.txt into `DIR` and exit")
	seeds := fs.Int("seeds", 10, "number of seed URLs to print")
	until := fs.Duration("export-until", 24*time.Hour, "with --export and --changes, also write every change up to this virtual `time` (changes.csv, channels.csv, change_pages.csv)")
	caFile := fs.String("ca", "", "with --tls, write the CA certificate (PEM) that signs the hosts' certificates to `FILE` (for fetch.ca_file)")
	return func(ctx context.Context, stdout io.Writer) error {
		w, err := Generate(opt)
		if err != nil {
			return err
		}
		st := w.Stats()
		if *export != "" {
			write := w.Export
			if opt.Change.Enabled {
				write = func(dir string) error { return w.ExportChanges(dir, *until) }
			}
			if err := write(*export); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "simweb: wrote %d pages, %d links, %d sites to %s (generated in %v)\n",
				st.Pages, st.Links, st.Sites, *export, st.GenerateTime.Round(1e6))
			return nil
		}
		if *caFile != "" && !opt.TLS {
			return errors.New("simweb: --ca needs --tls")
		}
		s, err := Start(ctx, w, cfg)
		if err != nil {
			return err
		}
		if *caFile != "" {
			if err := os.WriteFile(*caFile, s.CA(), 0o644); err != nil {
				s.Close()
				return fmt.Errorf("simweb: %w", err)
			}
			fmt.Fprintf(stdout, "CA:      %s (trust it with fetch.ca_file)\n", *caFile)
		}
		fmt.Fprint(stdout, s.Info(*seeds))
		fmt.Fprintf(stdout, "Serving until interrupted (generated in %v).\n", st.GenerateTime.Round(1e6))
		<-ctx.Done()
		if err := s.Close(); err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		return nil
	}
}

// Command runs "lidi simweb" with its command-line arguments (without the
// subcommand name), as CommandFlags describes. Flag errors and usage go to
// stderr; -h returns flag.ErrHelp.
func Command(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("simweb", flag.ContinueOnError)
	fs.SetOutput(stderr)
	run := CommandFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: lidi simweb [flags]\n\n%s\n\n", CommandDoc)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("simweb: unexpected arguments %q", fs.Args())
	}
	return run(ctx, stdout)
}
