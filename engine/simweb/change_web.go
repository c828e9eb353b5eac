package simweb

import (
	"bufio"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// How a changing web uses its change model: the channels are the sites, a
// page at version k > 0 has its text drawn afresh (its title and links stay,
// so the graph and PageRank hold at every time), and a stamped site's pages
// print the time they are served.

// layOutChanges builds the change model over the sites.
func (w *Web) layOutChanges() error {
	sizes := make([]int, len(w.siteStart)-1)
	for s := range sizes {
		sizes[s] = w.sitePages(s)
	}
	c, err := NewChanges(w.opt.Seed, w.opt.Change, sizes)
	if err != nil {
		return err
	}
	w.changes = c
	return nil
}

// Changes returns the web's change model, the ground truth of every page's
// versions: its channels are the sites, by id. For a web generated without
// Options.Change.Enabled, nothing in it ever changes.
func (w *Web) Changes() *Changes { return w.changes }

// pageAt is what a render needs of time: the page's version, and for a
// stamped site the virtual wall time to print (zero for none).
type pageAt struct {
	version int
	stamp   time.Time
}

// textRNG returns the stream the text of page p at version v is drawn
// from; version 0 is the text of a web whose pages never change.
func (w *Web) textRNG(p int32, v int) rng {
	if v == 0 {
		return newRNG(w.opt.Seed, tagText, uint64(p))
	}
	return newRNG(w.opt.Seed, tagChangeText, uint64(p)<<32|uint64(uint32(v)))
}

// appendStamp appends the paragraph a stamped site adds to its pages.
func (at pageAt) appendStamp(dst []byte) []byte {
	if at.stamp.IsZero() {
		return dst
	}
	dst = append(dst, "<p class=\"generated\">Page generated "...)
	dst = at.stamp.UTC().AppendFormat(dst, "Mon, 02 Jan 2006 15:04:05 MST")
	return append(dst, ".</p>\n"...)
}

// at returns what a render of page p at virtual time d needs.
func (w *Web) at(p int32, clk Clock, d time.Duration) pageAt {
	c := w.changes
	if !c.Enabled() {
		return pageAt{}
	}
	pa := pageAt{version: c.Version(int(p), d)}
	if c.Stamped(w.siteOf(p)) {
		pa.stamp = clk.Time(d)
	}
	return pa
}

// AppendHTMLAt appends the HTML of a page as a server whose clock is clk
// serves it at virtual time d (an offset from clk's epoch): its version
// then, and the time printed by a stamped site. For a web whose pages
// never change it is AppendHTML. It is safe for concurrent use.
func (w *Web) AppendHTMLAt(dst []byte, page, port int, clk Clock, d time.Duration) []byte {
	return w.appendPageAt(dst, int32(page), port, viewPlain, w.at(int32(page), clk, d))
}

// RegisterFlags defines command-line flags that set o's fields, with o's
// current values as the flags' defaults.
func (o *ChangeOptions) RegisterFlags(fs *flag.FlagSet) {
	fs.BoolVar(&o.Enabled, "changes", o.Enabled, "make pages change over time (Poisson by default, with SARSS's group intervals)")
	fs.Var(intervalsFlag{&o.Intervals}, "change-intervals", "comma-separated mean change `intervals` of the priority groups, most often changing first (empty = 60m,2h,4h,8h,16h)")
	fs.Float64Var(&o.Pareto, "change-pareto", o.Pareto, "fraction of pages with Pareto (heavy-tailed) change gaps")
	fs.Float64Var(&o.Quasi, "change-quasi", o.Quasi, "fraction of pages with quasi-deterministic change times")
	fs.Float64Var(&o.Spread, "change-spread", o.Spread, "log standard deviation of pages' change intervals around their group's")
	fs.BoolVar(&o.Together, "change-together", o.Together, "the pages of a site change together, at the site's change times (SARSS's channels)")
}

// intervalsFlag is the --change-intervals flag: durations separated by
// commas.
type intervalsFlag struct {
	d *[MaxChangeGroups]time.Duration
}

func (f intervalsFlag) String() string {
	if f.d == nil {
		return ""
	}
	var parts []string
	for _, d := range f.d {
		if d == 0 {
			break
		}
		parts = append(parts, d.String())
	}
	return strings.Join(parts, ",")
}

func (f intervalsFlag) Set(s string) error {
	var ds [MaxChangeGroups]time.Duration
	if s != "" {
		parts := strings.Split(s, ",")
		if len(parts) > MaxChangeGroups {
			return fmt.Errorf("simweb: --change-intervals: %d groups, at most %d", len(parts), MaxChangeGroups)
		}
		for i, part := range parts {
			d, err := time.ParseDuration(strings.TrimSpace(part))
			if err != nil {
				return fmt.Errorf("simweb: --change-intervals: %w", err)
			}
			if d <= 0 {
				return fmt.Errorf("simweb: --change-intervals: %v not positive", d)
			}
			ds[i] = d
		}
	}
	*f.d = ds
	return nil
}

// ExportChanges writes the ground truth of the changes up to virtual time
// until into dir (created if needed):
//
//	channels.csv  channel,host,group,interval_s,validators,stamped
//	changes.csv   page,version,at_s (one row per change, by page then time)
//
// Times are seconds from the epoch. Pages' kinds and mean intervals are in
// change_pages.csv: page,channel,kind,mean_s.
func (w *Web) ExportChanges(dir string, until time.Duration) error {
	c := w.changes
	if !c.Enabled() {
		return errors.New("simweb: export changes: the web's pages do not change (Options.Change.Enabled is false)")
	}
	if err := w.Export(dir); err != nil {
		return err
	}
	return errors.Join(
		w.writeFile(filepath.Join(dir, "channels.csv"), func(bw *bufio.Writer) error {
			cw := csv.NewWriter(bw)
			cw.Write([]string{"channel", "host", "group", "interval_s", "validators", "stamped"})
			for ch := range c.Channels() {
				g := c.Group(ch)
				cw.Write([]string{strconv.Itoa(ch), w.sites[ch].host, strconv.Itoa(g),
					strconv.FormatFloat(c.GroupInterval(g).Seconds(), 'g', -1, 64),
					c.Validators(ch).String(), strconv.FormatBool(c.Stamped(ch))})
			}
			cw.Flush()
			return cw.Error()
		}),
		w.writeFile(filepath.Join(dir, "change_pages.csv"), func(bw *bufio.Writer) error {
			cw := csv.NewWriter(bw)
			cw.Write([]string{"page", "channel", "kind", "mean_s"})
			for p := range c.Pages() {
				pc := c.Page(p)
				cw.Write([]string{strconv.Itoa(p), strconv.Itoa(w.siteOf(int32(p))), pc.Kind.String(),
					strconv.FormatFloat(pc.Mean.Seconds(), 'g', -1, 64)})
			}
			cw.Flush()
			return cw.Error()
		}),
		w.writeFile(filepath.Join(dir, "changes.csv"), func(bw *bufio.Writer) error {
			bw.WriteString("page,version,at_s\n")
			var line []byte
			for p := range c.Pages() {
				st := c.Stream(p)
				for v := 1; st.Peek() <= until; v++ {
					t := st.Next()
					line = strconv.AppendInt(line[:0], int64(p), 10)
					line = append(line, ',')
					line = strconv.AppendInt(line, int64(v), 10)
					line = append(line, ',')
					line = strconv.AppendFloat(line, t.Seconds(), 'f', 3, 64)
					line = append(line, '\n')
					bw.Write(line)
				}
			}
			return nil
		}),
	)
}
