package sim

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"lidi/engine/simweb"
)

// keyValues parses the key=value lines of a summary.
func keyValues(out string) map[string]string {
	kv := make(map[string]string)
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.Contains(k, " ") {
			kv[k] = v
		}
	}
	return kv
}

func TestCommand(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "fetches.csv")
	var stdout, stderr bytes.Buffer
	args := []string{"--sites", "20", "--pages", "400", "--strategy", "partial", "-r", "4", "-c", "2", "-w", "5s", "--bandwidth", "100000", "--out", csvPath}
	if err := Command(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	// The pages robots.txt lets a crawl reach.
	_, want := collectionOf(t, simweb.Options{Seed: 1, Sites: 20, Pages: 400}, 10)
	kv := keyValues(stdout.String())
	if kv["strategy"] != "partial" || kv["pages"] != strconv.Itoa(want) || kv["coverage"] != "1.000000" {
		t.Errorf("summary:\n%s", stdout.String())
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	lines, last := 0, ""
	for sc.Scan() {
		lines++
		last = sc.Text()
	}
	if lines != want+1 {
		t.Errorf("CSV has %d lines, want %d", lines, want+1)
	}
	cols := strings.Split(last, ",")
	if cov, err := strconv.ParseFloat(cols[len(cols)-1], 64); err != nil || cov < 0.999999 {
		t.Errorf("last CSV line %q", last)
	}
}

func TestCommandGraph(t *testing.T) {
	sw, err := simweb.Generate(simweb.Options{Seed: 2, Sites: 15, Pages: 300})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := sw.Export(dir); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := Command(context.Background(), []string{"--graph", dir, "--strategy", "optimal", "-r", "8"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	loaded, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, want := loaded.Collection()
	if kv := keyValues(stdout.String()); kv["pages"] != strconv.Itoa(want) || kv["strategy"] != "optimal" {
		t.Errorf("summary:\n%s", stdout.String())
	}
}

// collectionOf returns the pages a complete crawl of a simweb fetches.
func collectionOf(t *testing.T, opt simweb.Options, seeds int) ([]bool, int) {
	t.Helper()
	sw, err := simweb.Generate(opt)
	if err != nil {
		t.Fatal(err)
	}
	return FromSimweb(sw, seeds).Collection()
}

func TestCommandErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--strategy", "nope", "--sites", "5", "--pages", "50"},
		{"extra"},
		{"--graph", "/nonexistent/lidi-sim"},
	} {
		var stdout, stderr bytes.Buffer
		if err := Command(context.Background(), args, &stdout, &stderr); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
	var stdout, stderr bytes.Buffer
	if err := Command(context.Background(), []string{"-h"}, &stdout, &stderr); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v", err)
	}
}
