package main

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionLine(t *testing.T) {
	platform := " " + runtime.GOOS + "/" + runtime.GOARCH
	vcs := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	for _, tc := range []struct {
		bi   debug.BuildInfo
		ok   bool
		want string
	}{
		{debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "lidi", Version: "v0.0.0-20261126134219-cc00ecb5ef18"},
			Settings: vcs("vcs", "git", "vcs.revision", "cc00ecb5ef18e82dbe76dba527db4a9c2d59f060", "vcs.time", "2026-11-26T13:42:19Z", "vcs.modified", "false")}, true,
			"lidi v0.0.0-20261126134219-cc00ecb5ef18 commit cc00ecb5ef18e82dbe76dba527db4a9c2d59f060 of 2026-11-26T13:42:19Z go1.26.8" + platform},
		{debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "lidi", Version: "v0.2.0+dirty"},
			Settings: vcs("vcs.revision", "cc00ecb5ef18", "vcs.modified", "true")}, true,
			"lidi v0.2.0+dirty commit cc00ecb5ef18 with uncommitted changes go1.26.8" + platform},
		{debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "lidi", Version: "(devel)"}}, true,
			"lidi (devel) (no commit recorded: built outside a git checkout, with -buildvcs=false, or by go test) go1.26.8" + platform},
		{debug.BuildInfo{}, false, "lidi (no build information) " + runtime.Version() + platform},
	} {
		if got := versionLine(&tc.bi, tc.ok); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}

// lidi version and lidi --version print the same line: this binary's.
func TestVersionCommand(t *testing.T) {
	want := versionLine(debug.ReadBuildInfo()) + "\n"
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		var out, errOut bytes.Buffer
		if code := run(args, &out, &errOut); code != 0 || out.String() != want || errOut.Len() > 0 {
			t.Errorf("lidi %s: exit %d, %q, stderr %q; want %q", strings.Join(args, " "), code, out.String(), errOut.String(), want)
		}
	}
}
