package bench

import (
	"flag"
	"time"
)

// The flags several benchmarks share, each declared once here; a
// benchmark gives its own defaults. The synthetic web's are
// simweb.WebFlags.

// crawlerFlags registers --robots (r) and -c.
func crawlerFlags(fs *flag.FlagSet, robots *int, defRobots int, perVisit *int, defPerVisit int) {
	fs.IntVar(robots, "robots", defRobots, "r: sites visited at once")
	fs.IntVar(perVisit, "c", defPerVisit, "c: pages per visit, over one keep-alive connection")
}

// dirFlag registers --dir, the directory of what the runs write.
func dirFlag(fs *flag.FlagSet, dir *string, what string) {
	fs.StringVar(dir, "dir", "", "directory for "+what+" (default: a temporary one, removed after)")
}

// limitFlag registers --limit: a run still going after it is stopped.
func limitFlag(fs *flag.FlagSet, limit *time.Duration, def time.Duration) {
	fs.DurationVar(limit, "limit", def, "longest time one run may take; a run still going is stopped and reported unfinished")
}

// progressFlag registers --progress.
func progressFlag(fs *flag.FlagSet, every *time.Duration) {
	fs.DurationVar(every, "progress", 5*time.Second, "progress line interval")
}
