package tui

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"

	"lidi/engine"
	"lidi/internal/testkit"
)

func TestRunQuitsOnQ(t *testing.T) {
	c := newFake(crawlSeries(3, engine.StateRunning))
	var out bytes.Buffer
	pr, pw := io.Pipe()
	defer pw.Close()
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), c, Options{Input: pr, Output: &out, Refresh: time.Millisecond})
	}()
	testkit.WaitFor(t, time.Minute, "polls", func() bool { n, _ := c.served(); return n >= 3 })
	if _, err := pw.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after q")
	}
	if c.pauses+c.resumes+c.snapshots+len(c.robotCalls) != 0 {
		t.Error("quitting steered the crawl; stopping it is the caller's job")
	}
}

func TestRunReturnsWhenContextEnds(t *testing.T) {
	c := newFake(crawlSeries(3, engine.StateRunning))
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe() // input that never comes
	defer pw.Close()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, c, Options{Input: pr, Output: io.Discard, Refresh: time.Millisecond})
	}()
	testkit.WaitFor(t, time.Minute, "polls", func() bool { n, _ := c.served(); return n >= 3 })
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return when its context ended")
	}
}

func TestColorProfile(t *testing.T) {
	env := func(kv map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
	}
	for _, tc := range []struct {
		name string
		opt  Options
		env  map[string]string
		want colorprofile.Profile
	}{
		{"detect", Options{}, nil, colorprofile.Unknown},
		{"NO_COLOR=1", Options{}, map[string]string{"NO_COLOR": "1"}, colorprofile.Ascii},
		{"NO_COLOR=yes", Options{}, map[string]string{"NO_COLOR": "yes"}, colorprofile.Ascii}, // any non-empty value
		{"NO_COLOR empty", Options{}, map[string]string{"NO_COLOR": ""}, colorprofile.Unknown},
		{"forced", Options{Profile: colorprofile.ANSI256}, map[string]string{"NO_COLOR": "1"}, colorprofile.ANSI256},
	} {
		if got := colorProfile(tc.opt, env(tc.env)); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
