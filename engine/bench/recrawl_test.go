package bench

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRecrawlSmall(t *testing.T) {
	var o RecrawlOptions
	fs := flag.NewFlagSet("recrawl", flag.ContinueOnError)
	o.RegisterFlags(fs)
	out := t.TempDir()
	if err := fs.Parse([]string{"-channels", "200", "-days", "1", "-wolf-pages", "100", "-wolf-ratios", "2", "-out", out}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	res, err := Recrawl(context.Background(), o, &buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 10 {
		t.Fatalf("%d runs, want 2 set-ups × 5 policies", len(res.Runs))
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	last := lines[len(lines)-10:]
	for i, want := range []string{"setup=rec policy=fixed ", "setup=rec policy=iir ", "setup=ruc policy=adaptive "} {
		idx := map[int]int{0: 0, 1: 1, 2: 9}[i]
		if !strings.HasPrefix(last[idx], want) || !strings.Contains(last[idx], " update_quality_w=") || !strings.Contains(last[idx], " age_s=") {
			t.Errorf("line %q, want it to start %q with the key=value fields", last[idx], want)
		}
	}
	for _, name := range []string{"recrawl.csv", "recrawl-groups.csv", "recrawl-intervals.csv", "recrawl-wolf.csv", "recrawl.png"} {
		if st, err := os.Stat(filepath.Join(out, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
}
