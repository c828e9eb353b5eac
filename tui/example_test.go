package tui_test

import (
	"context"
	"errors"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"lidi/engine"
	"lidi/tui"
)

// crawl stands for *engine.Engine, which is what lidi passes to Run.
type crawl struct{ robots int }

func (c *crawl) Stats() engine.Stats {
	return engine.Stats{Time: time.Now(), State: engine.StateRunning, Robots: c.robots}
}
func (c *crawl) Pause()          {}
func (c *crawl) Resume()         {}
func (c *crawl) SetRobots(n int) { c.robots = n }
func (c *crawl) Snapshot(context.Context) (string, error) {
	return "", errors.New("example: this crawl keeps nothing to snapshot")
}

// Run shows the console until the user quits; the caller then stops the
// crawl, which saves its state, so running lidi again continues it.
func ExampleRun() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c := &crawl{robots: 16}
	if err := tui.Run(ctx, c, tui.Options{}); err != nil {
		log.Fatal(err) // no terminal: use lidi --headless
	}
	// Stop the engine here.
}
