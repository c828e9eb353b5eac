package simweb

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestCommandExport(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	err := Command(context.Background(), []string{"--sites", "20", "--seed", "3", "--export", dir}, &out, &errOut)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	for _, f := range []string{"pages.csv", "edges.csv", "sites.csv", "README.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(out.String(), "1000 pages") {
		t.Errorf("output: %s", out.String())
	}
	if err := Command(context.Background(), []string{"-h"}, io.Discard, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v", err)
	}
	if err := Command(context.Background(), []string{"--sites", "-3"}, io.Discard, io.Discard); err == nil {
		t.Error("negative sites accepted")
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestCommandServes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- Command(ctx, []string{"--sites", "10", "--seed", "1", "--seeds", "2"}, &out, io.Discard)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "Serving until interrupted") {
		if time.Now().After(deadline) {
			t.Fatalf("no banner; output so far:\n%s", out.String())
		}
		select {
		case err := <-done:
			t.Fatalf("Command returned early: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	var admin string
	for _, line := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "Admin:" {
			admin = f[1]
		}
	}
	resp, err := http.Get(admin)
	if err != nil {
		t.Fatalf("admin %q: %v\n%s", admin, err, out.String())
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("admin: %s", resp.Status)
	}
	if n := strings.Count(out.String(), "http://www.") + strings.Count(out.String(), "http://site"); n < 2 {
		t.Errorf("seed URLs missing:\n%s", out.String())
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Command: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Command did not return after cancel")
	}
}

func TestCommandExportsChanges(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	err := Command(context.Background(), []string{"--sites", "5", "--pages", "40", "--changes", "--export-until", "3h", "--export", dir}, &out, &errOut)
	if err != nil {
		t.Fatalf("%v: %s", err, errOut.String())
	}
	for _, f := range []string{"pages.csv", "channels.csv", "change_pages.csv", "changes.csv"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}
