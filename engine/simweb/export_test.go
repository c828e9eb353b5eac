package simweb

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func readCSV(t *testing.T, name string) [][]string {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return rows
}

func TestExport(t *testing.T) {
	w := testWeb(t, Options{Seed: 9, Sites: 50, Pages: 3000})
	dir := filepath.Join(t.TempDir(), "oracle")
	if err := w.Export(dir); err != nil {
		t.Fatal(err)
	}

	pages := readCSV(t, filepath.Join(dir, "pages.csv"))
	if got := pages[0]; len(got) != 8 || got[0] != "id" || got[1] != "url_path" || got[2] != "host" || got[4] != "pagerank" {
		t.Fatalf("pages header %v", got)
	}
	if len(pages)-1 != w.NumPages() {
		t.Fatalf("%d page rows for %d pages", len(pages)-1, w.NumPages())
	}
	sum := 0.0
	pr := make([]float64, w.NumPages())
	for _, row := range pages[1:] {
		id, err := strconv.Atoi(row[0])
		if err != nil {
			t.Fatal(err)
		}
		pg := w.Page(id)
		x, err := strconv.ParseFloat(row[4], 64)
		if err != nil {
			t.Fatal(err)
		}
		if row[1] != pg.Path || row[2] != w.Site(pg.Site).Host || row[3] != strconv.Itoa(pg.Depth) ||
			x != w.PageRank()[id] || row[5] != strconv.Itoa(pg.Site) || row[6] != pg.Kind.String() ||
			(row[7] == "1") != pg.Disallowed {
			t.Fatalf("row %v for page %+v", row, pg)
		}
		pr[id] = x
		sum += x
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Errorf("exported PageRank sums to %.12f", sum)
	}

	edges := readCSV(t, filepath.Join(dir, "edges.csv"))
	if len(edges)-1 != w.Graph().NumEdges() {
		t.Fatalf("%d edge rows for %d edges", len(edges)-1, w.Graph().NumEdges())
	}
	out := make([][]int, w.NumPages())
	for _, row := range edges[1:] {
		from, err1 := strconv.Atoi(row[0])
		to, err2 := strconv.Atoi(row[1])
		if err1 != nil || err2 != nil {
			t.Fatalf("edge row %v", row)
		}
		out[from] = append(out[from], to)
	}
	// Recompute PageRank from the exported files alone with a plain power
	// iteration, as a researcher would, and compare.
	n := float64(w.NumPages())
	r := make([]float64, w.NumPages())
	for i := range r {
		r[i] = 1 / n
	}
	for range 200 {
		next := make([]float64, len(r))
		dangling := 0.0
		for v, targets := range out {
			if len(targets) == 0 {
				dangling += r[v]
				continue
			}
			for _, u := range targets {
				next[u] += 0.85 * r[v] / float64(len(targets))
			}
		}
		for i := range next {
			next[i] += 0.15/n + 0.85*dangling/n
		}
		r = next
	}
	for i := range r {
		if math.Abs(r[i]-pr[i]) > 1e-9 {
			t.Fatalf("page %d: exported PageRank %v, recomputed %v", i, pr[i], r[i])
		}
	}

	sites := readCSV(t, filepath.Join(dir, "sites.csv"))
	if len(sites)-1 != w.NumSites() || sites[0][4] != "robots_kind" {
		t.Fatalf("%d site rows, header %v", len(sites)-1, sites[0])
	}
	for _, row := range sites[1:] {
		id, _ := strconv.Atoi(row[0])
		si := w.Site(id)
		if row[1] != si.Host || row[2] != si.Addr.String() || row[3] != strconv.Itoa(si.Pages) || row[4] != si.Robots.String() {
			t.Fatalf("site row %v for %+v", row, si)
		}
	}
	if info, err := os.Stat(filepath.Join(dir, "README.txt")); err != nil || info.Size() < 500 {
		t.Errorf("README.txt: %v", err)
	}
}
