// Package race tells tests whether the race detector is built in, for the
// few whose cost it multiplies and whose code it cannot find a race in.
package race

import "testing"

// SkipSingleGoroutine skips t when the race detector is built in. Call it
// only from a test whose code runs in one goroutine (a simulation driven
// step by step from the test's own goroutine): the detector reports races
// between goroutines, so there it finds nothing, and it makes such a test
// ten times slower (engine/recrawl's took CI past its ten minutes). The
// README's test command (which .ci/run runs) runs these packages once
// more without -race, so every such test still runs: a package that starts
// calling it must be added to that command's second part, or its skipped
// tests run nowhere in CI.
func SkipSingleGoroutine(t testing.TB) {
	t.Helper()
	if Enabled {
		t.Skip("one goroutine, where the race detector finds nothing and costs 10x: run without -race (the README's test command does)")
	}
}
