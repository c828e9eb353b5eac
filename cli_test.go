package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every command `lidi help` lists runs with -h: exit 0, its usage line and
// every one of its flags on stdout, nothing on stderr.
func TestEveryCommandHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"help"}, &out, &errOut); code != 0 {
		t.Fatalf("lidi help: exit %d: %s", code, errOut.String())
	}
	listed := out.String()
	for _, c := range commands {
		if !regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(c.name) + `\s{2,}\S`).MatchString(listed) {
			t.Errorf("lidi help does not list %q:\n%s", c.name, listed)
		}
		t.Run(c.name, func(t *testing.T) {
			for _, args := range [][]string{
				append(strings.Fields(c.name), "-h"),
				append(strings.Fields(c.name), "--help"),
				append([]string{"help"}, strings.Fields(c.name)...),
			} {
				var out, errOut bytes.Buffer
				if code := run(args, &out, &errOut); code != 0 || errOut.Len() > 0 {
					t.Fatalf("lidi %s: exit %d, stderr %q", strings.Join(args, " "), code, errOut.String())
				}
				help := out.String()
				if !strings.HasPrefix(help, "usage: lidi "+c.name+" ") {
					t.Errorf("lidi %s: no usage line:\n%s", strings.Join(args, " "), help)
				}
				fs, _ := c.flagSet()
				fs.VisitAll(func(f *flag.Flag) {
					if !regexp.MustCompile(`(?m)^\s+-` + regexp.QuoteMeta(f.Name) + `\b`).MatchString(help) {
						t.Errorf("lidi %s: flag -%s missing from:\n%s", strings.Join(args, " "), f.Name, help)
					}
				})
			}
		})
	}
}

// readmeCommands returns the lidi command lines README.md shows, in
// backquotes or in indented code blocks, with [optional] brackets removed.
func readmeCommands(t *testing.T) []string {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, m := range regexp.MustCompile("`(lidi(?: [^`]*)?)`").FindAllStringSubmatch(string(readme), -1) {
		lines = append(lines, m[1])
	}
	for _, m := range regexp.MustCompile(`(?m)^(?:    |\t)(?:\$ )?(lidi(?: .*)?)$`).FindAllStringSubmatch(string(readme), -1) {
		lines = append(lines, m[1])
	}
	if len(lines) < 5 {
		t.Fatalf("README.md shows only %d lidi commands", len(lines))
	}
	return lines
}

// Every lidi command line in the README names a command that runs with -h,
// and its flags parse as that command's (they are parsed, not run).
func TestReadmeCommands(t *testing.T) {
	for _, line := range readmeCommands(t) {
		args := strings.Fields(strings.NewReplacer("[", " ", "]", " ", "...", " ", "&", " ").Replace(line))[1:]
		if len(args) > 0 && args[0] == "help" {
			args = args[1:]
		}
		if slices.Contains(args, "COMMAND") {
			continue // "lidi COMMAND -h": TestEveryCommandHelp runs them all
		}
		c, flags, err := findCommand(versionFlag(args))
		if err != nil || c == nil {
			t.Errorf("README's %q: not a command (%v)", line, err)
			continue
		}
		fs, _ := c.flagSet()
		if err := fs.Parse(flags); err != nil && !errors.Is(err, flag.ErrHelp) || fs.NArg() > 0 {
			t.Errorf("README's %q: %v %q", line, err, fs.Args())
		}
		var out, errOut bytes.Buffer
		if code := run(append(strings.Fields(c.name), "-h"), &out, &errOut); code != 0 || errOut.Len() > 0 {
			t.Errorf("lidi %s -h: exit %d, stderr %q", c.name, code, errOut.String())
		}
	}
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	cwd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil { // no config.yaml here
		t.Fatal(err)
	}
	defer os.Chdir(cwd)
	for _, tc := range []struct {
		args   []string
		code   int
		stdout []string // on stdout, or on stderr when code != 0
	}{
		{[]string{"-h"}, 0, []string{"The commands are", "bench precision", "bench strategies"}},
		{[]string{"--help"}, 0, []string{"The commands are"}},
		{[]string{"help"}, 0, []string{"The commands are", "demo"}},
		{[]string{"help", "bench"}, 0, []string{"bench crawl", "bench strategies"}},
		{[]string{"bench", "-h"}, 0, []string{"bench crawl", "bench precision"}},
		{[]string{}, 2, []string{"no config.yaml here", "--config FILE", "The commands are"}},
		{[]string{"--headless"}, 2, []string{"no config.yaml here"}},
		{[]string{"--frobnicate"}, 2, []string{"flag provided but not defined: -frobnicate", "usage: lidi crawl", "-headless"}},
		{[]string{"demo", "--robots", "3"}, 2, []string{"lidi demo: flag provided but not defined: -robots", "usage: lidi demo", "-strategy"}},
		{[]string{"sim", "--robots", "3"}, 2, []string{"usage: lidi sim", "-max-pages"}},
		{[]string{"bench", "crawl", "--nosuch"}, 2, []string{"usage: lidi bench crawl", "-heap-limit-mb"}},
		{[]string{"export", "--db", "x.db"}, 2, []string{"--out is required", "usage: lidi export"}},
		{[]string{"demo", "extra"}, 2, []string{"unexpected arguments", "usage: lidi demo"}},
		{[]string{"frobnicate"}, 2, []string{`unknown command "frobnicate"`, "The commands are"}},
		{[]string{"bench"}, 2, []string{"usage: lidi bench COMMAND", "bench crawl"}},
		{[]string{"bench", "nosuch"}, 2, []string{`unknown command "bench nosuch"`, "bench crawl"}},
		{[]string{"help", "nosuch"}, 2, []string{`unknown command "nosuch"`}},
		{[]string{"--config", "missing.yaml"}, 1, []string{"missing.yaml"}},
	} {
		var out, errOut bytes.Buffer
		code := run(tc.args, &out, &errOut)
		got := out.String()
		if code != 0 {
			got = errOut.String()
		}
		if code != tc.code {
			t.Errorf("lidi %s: exit %d, want %d; stderr %q", strings.Join(tc.args, " "), code, tc.code, errOut.String())
		}
		for _, want := range tc.stdout {
			if !strings.Contains(got, want) {
				t.Errorf("lidi %s: %q missing from:\n%s", strings.Join(tc.args, " "), want, got)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "crawl.db")); err == nil {
		t.Error("a usage error created crawl.db")
	}
}
