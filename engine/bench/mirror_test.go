package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lidi/engine/dedup"
)

// TestMirror runs the benchmark on a miniature of the real sites: 25
// entries of the Jargon File as www.catb.org serves them and as the HTTrack
// mirror on milosophical.me does (engine/dedup's testdata), the original
// given an index linking them, and the blog four pages of its own, one a
// reading list of its copies, and one entry only its copy holds. With
// detection, the directory rule is learned and most copies are never
// fetched; without it, every copy is; the blog's own pages are kept.
func TestMirror(t *testing.T) {
	src := filepath.Join("..", "dedup", "testdata", "realweb", "jargon")
	root := t.TempDir()
	orig := filepath.Join(root, "catb.org-jargon", "html")
	blog := filepath.Join(root, "sinewalker.github.io")
	mirror := filepath.Join(blog, "jargon", "html")
	var entries []string
	err := filepath.WalkDir(filepath.Join(src, "catb"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join(src, "catb"), p)
		entries = append(entries, filepath.ToSlash(rel))
		for from, to := range map[string]string{"catb": orig, "milosophical": mirror} {
			b, err := os.ReadFile(filepath.Join(src, from, rel))
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(to, rel)), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(to, rel), b, 0o644); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || len(entries) < 20 {
		t.Fatalf("%d entries: %v", len(entries), err)
	}
	var index strings.Builder
	index.WriteString("<html><head><title>The Jargon File</title></head><body><h1>Glossary</h1><ul>")
	for _, e := range entries {
		fmt.Fprintf(&index, "<li><a href=\"%s\">%s</a></li>", e, strings.TrimSuffix(filepath.Base(e), ".html"))
	}
	index.WriteString("</ul></body></html>")
	write := func(path, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(orig, "index.html"), index.String())
	// The mirror's copy of the index, with the note HTTrack leaves.
	write(filepath.Join(mirror, "index.html"), "<!-- Mirrored from www.catb.org/~esr/jargon/html/index.html by HTTrack Website Copier/3.x [XR&CO'2014] -->\n"+index.String())
	// The blog links the entries of its copy from a reading list, not
	// through the copy's index (which would be a duplicate, and its
	// links not followed).
	write(filepath.Join(blog, "index.html"), `<html><head><title>Milosophical Me</title></head><body><p>Notes on hacking, Linux and the
		Jargon File, which this site keeps a copy of; see the <a href="/blog/reading.html">reading list</a> and a <a href="/blog/first.html">first post</a>.</p></body></html>`)
	// The copy also holds an entry the original does not (its URL there
	// answers 404), linked only from the end of a chain of the blog's
	// posts, so that the rule covers it when it is found (the copies, two
	// links from home, are fetched before): it must be fetched after all.
	var reading strings.Builder
	reading.WriteString(`<html><head><title>Reading list</title></head><body><p>Entries of the Jargon File worth reading on a slow
		afternoon, from the copy this blog keeps, each with a word on why: some for their history, some for the jokes, and some because
		they explain a habit of mind that outlasted the machines it grew on.</p><ol>`)
	for i, e := range entries {
		fmt.Fprintf(&reading, "<li>Number %d: <a href=\"/jargon/html/%s\">read it here</a></li>", i+1, e)
	}
	reading.WriteString("</ol></body></html>")
	write(filepath.Join(blog, "blog", "reading.html"), reading.String())
	write(filepath.Join(blog, "blog", "second.html"), `<html><head><title>A second post</title></head><body><p>The second post says
		that one entry of the file is only in this copy: <a href="/jargon/html/M/mirror-only.html">mirror-only</a>, kept from another version.</p></body></html>`)
	write(filepath.Join(mirror, "M", "mirror-only.html"), `<html><head><title>mirror-only</title></head><body><dl><dt>mirror-only</dt>
		<dd><p>An entry of another version of the file, which only this copy still holds: its text is its own, long enough to count as
		a page of its own and not a copy of any other entry in either site.</p></dd></dl></body></html>`)
	write(filepath.Join(blog, "blog", "first.html"), `<html><head><title>A first post</title></head><body><p>This blog starts today with
		a post about keeping notes in plain text files under version control, one file a day, and a script that builds the site.
		Next: <a href="/blog/second.html">a second post</a>.</p></body></html>`)

	// One site at a time: the copies are met after their originals, as a
	// crawl meets a mirror found late; two sites crawled at once meet
	// copies on both sides, and how many are fetched before the rule then
	// depends on timing (4 to 12 of 25 seen).
	// Then two races: both copies' home pages crawled at once by two
	// robots; the original must be kept whichever copy answers first.
	o := MirrorOptions{Realweb: root, Robots: 2, PagesPerVisit: 100, Limit: 3 * time.Minute, OpenStore: openTestStore, ProgressInterval: time.Minute, Races: 2}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	runs, err := Mirror(ctx, o, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 4 {
		t.Fatalf("%d runs, want 4", len(runs))
	}
	on, off := runs[0], runs[1]
	if !on.Detect || off.Detect || on.Copies != len(entries)+1 { // and the index
		t.Fatalf("runs %+v, %+v", on, off)
	}
	if on.Stopped || off.Stopped {
		t.Fatal("a run reached its time limit")
	}
	if off.CopiesFetched != len(entries)+1 || off.OriginalFetched < len(entries)+1 {
		t.Errorf("without detection: %d copies fetched on both sites and %d original pages fetched, want %d each", off.CopiesFetched, off.OriginalFetched, len(entries)+1)
	}
	// One rule, that sends the mirror's entries to the original's, and
	// leaves the blog's own pages alone. Which copy the crawl meets first
	// depends on timing; which one is kept must not.
	if len(on.Rules) != 1 {
		t.Fatalf("rules %v, want one", on.Rules)
	}
	r := on.Rules[0]
	port := r.Origin[strings.LastIndexByte(r.Origin, ':'):]
	catb, copyURL := "http://www.catb.org"+port+"/jargon/html/"+entries[0], "http://milosophical.me"+port+"/jargon/html/"+entries[0]
	if got, ok := r.Rewrite(copyURL); !ok || got != catb {
		t.Errorf("rule %v rewrites %s to %q, %v; want the original", r.String(), copyURL, got, ok)
	}
	if !r.Choice.ByEvidence || r.Choice.For[dedup.SignalMirrorNote] == 0 {
		t.Errorf("rule %v chosen by %v, want HTTrack's notes", r.String(), r.Choice)
	}
	if got, ok := r.Rewrite("http://milosophical.me" + port + "/blog/first.html"); ok && got != "http://milosophical.me"+port+"/blog/first.html" {
		t.Errorf("rule %v rewrites the blog's own page to %q", r.String(), got)
	}
	t.Logf("with detection, %d of %d copies fetched on the mirror; without, %d", on.MirrorCopiesFetched, on.Copies, off.MirrorCopiesFetched)
	if on.OriginalFetched < len(entries)+1 {
		t.Errorf("with detection, %d of the original's %d pages fetched", on.OriginalFetched, len(entries)+1)
	}
	if on.OwnFetched != off.OwnFetched || on.OwnFetched != 5 {
		t.Errorf("the blog's own pages: %d with detection, %d without; want its 4 and the entry only its copy holds", on.OwnFetched, off.OwnFetched)
	}
	for _, race := range runs[2:] {
		if !race.Race || race.Stopped {
			t.Fatalf("race %+v", race)
		}
		t.Logf("race: %d copies fetched on the mirror", race.MirrorCopiesFetched)
		if race.OriginalFetched < len(entries)+1 {
			t.Errorf("race: %d of the original's %d pages fetched", race.OriginalFetched, len(entries)+1)
		}
		for _, r := range race.Rules {
			if strings.Contains(r.Origin, "catb") {
				t.Errorf("race: rule %v rewrites the original", r.String())
			}
		}
	}
}
