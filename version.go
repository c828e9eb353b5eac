package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
)

func versionCmd(*flag.FlagSet) runFunc {
	return func(_ context.Context, out output) error {
		fmt.Fprintln(out.stdout, versionLine(debug.ReadBuildInfo()))
		return nil
	}
}

// versionLine says which lidi this is, from the build information the Go
// toolchain records: the module's version ("(devel)" for a build of a
// checkout, a tag or a pseudo-version for go install lidi@VERSION), the
// commit it was built from and whether the checkout had changes, and the
// toolchain. ok is false for a binary built without module support.
func versionLine(bi *debug.BuildInfo, ok bool) string {
	platform := runtime.GOOS + "/" + runtime.GOARCH
	if !ok {
		return fmt.Sprintf("lidi (no build information) %s %s", runtime.Version(), platform)
	}
	version := bi.Main.Version
	if version == "" {
		version = "(devel)"
	}
	var commit, when, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	line := "lidi " + version
	if commit != "" {
		line += " commit " + commit
		if when != "" {
			line += " of " + when
		}
		if modified == "true" {
			line += " with uncommitted changes"
		}
	} else {
		line += " (no commit recorded: built outside a git checkout, with -buildvcs=false, or by go test)"
	}
	return line + " " + bi.GoVersion + " " + platform
}
