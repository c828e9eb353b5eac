package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"

	"lidi/engine"
)

// A command is one of lidi's commands, in the manner of the go and git
// tools: `lidi help` lists it, `lidi NAME -h` prints its usage with every
// flag, and `lidi NAME [flags]` runs it. Adding a command is one entry in
// commands (main.go) and its setup function.
type command struct {
	name     string // what follows lidi: "crawl", "bench crawl"
	synopsis string // the arguments after the name in its usage line
	summary  string // one line for `lidi help`
	doc      string // what `lidi NAME -h` says before the flags ("": the summary)
	// setup registers the command's flags on fs and returns what runs the
	// command once they are parsed.
	setup func(fs *flag.FlagSet) runFunc
}

// A runFunc runs a command whose flags are parsed. ctx ends on SIGINT or
// SIGTERM.
type runFunc func(ctx context.Context, out output) error

// output is where a command writes.
type output struct {
	stdout, stderr io.Writer
}

// errUsage reports bad command-line use (exit status 2); what was wrong
// and the usage have been printed.
var errUsage = errors.New("usage")

// A usageError is bad command-line use found after the flags were parsed:
// the message is printed with the command's usage, or with lidi's overview
// when the command was not named (lidi alone without a config file).
type usageError struct {
	msg      string
	overview bool
}

func (e *usageError) Error() string { return e.msg }

// defaultCommand runs when the first argument is a flag or absent.
const defaultCommand = "crawl"

const overview = `lidi is a terminal-UI web crawler console.

usage: lidi [COMMAND] [flags]

With no command, lidi crawls what config.yaml (or --config FILE) says, in
the console: the same as lidi crawl.

The commands are:
`

// run is lidi with its arguments: it finds the command, parses its flags
// and runs it, and returns the exit status (0 done, 1 failed, 2 bad usage).
func run(args []string, stdout, stderr io.Writer) int {
	out := output{stdout, stderr}
	err := dispatch(args, out)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsage):
		return 2
	case errors.Is(err, engine.ErrStopped):
		fmt.Fprintln(stderr, "lidi: stopped; the state is saved: run the same command again to continue")
		return 0
	default:
		fmt.Fprintln(stderr, "lidi:", err)
		return 1
	}
}

func dispatch(args []string, out output) error {
	if len(args) > 0 {
		switch args[0] {
		case "help":
			return helpCmd(args[1:], out)
		case "-h", "-help", "--help":
			printOverview(out.stdout)
			return nil
		}
	}
	cmd, rest, err := findCommand(versionFlag(args))
	if err != nil {
		fmt.Fprintf(out.stderr, "lidi: %v\n\n", err)
		printOverview(out.stderr)
		return errUsage
	}
	if cmd == nil { // a group named alone: lidi bench
		group := strings.Join(args[:len(args)-len(rest)], " ")
		if len(rest) > 0 && isHelpFlag(rest[0]) {
			printGroup(out.stdout, group)
			return nil
		}
		if len(rest) > 0 {
			fmt.Fprintf(out.stderr, "lidi: unknown command \"%s %s\"\n\n", group, rest[0])
		}
		printGroup(out.stderr, group)
		return errUsage
	}
	return cmd.run(rest, out)
}

// versionFlag turns lidi --version into lidi version.
func versionFlag(args []string) []string {
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		return append([]string{"version"}, args[1:]...)
	}
	return args
}

func isHelpFlag(s string) bool { return s == "-h" || s == "-help" || s == "--help" }

// findCommand matches the longest command name at the start of args and
// returns the arguments after it. A first argument that is a flag, or none,
// names the default command. A name that only starts commands (a group,
// such as "bench") returns a nil command.
func findCommand(args []string) (*command, []string, error) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return lookup(defaultCommand), args, nil
	}
	for n := len(args); n > 0; n-- {
		if c := lookup(strings.Join(args[:n], " ")); c != nil {
			return c, args[n:], nil
		}
	}
	if isGroup(args[0]) {
		return nil, args[1:], nil
	}
	return nil, nil, fmt.Errorf("unknown command %q", args[0])
}

func lookup(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

func isGroup(word string) bool {
	for _, c := range commands {
		if strings.HasPrefix(c.name, word+" ") {
			return true
		}
	}
	return false
}

// flagSet makes the command's flag set with its flags registered; its
// errors and usage are printed by the caller, to stdout or stderr.
func (c *command) flagSet() (*flag.FlagSet, runFunc) {
	fs := flag.NewFlagSet("lidi "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs, c.setup(fs)
}

func (c *command) run(args []string, out output) error {
	fs, run := c.flagSet()
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		c.printUsage(out.stdout, fs)
		return nil
	case err != nil:
		fmt.Fprintf(out.stderr, "lidi %s: %v\n\n", c.name, err)
		c.printUsage(out.stderr, fs)
		return errUsage
	case fs.NArg() > 0:
		fmt.Fprintf(out.stderr, "lidi %s: unexpected arguments %q\n\n", c.name, fs.Args())
		c.printUsage(out.stderr, fs)
		return errUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = run(ctx, out)
	var bad *usageError
	if errors.As(err, &bad) {
		fmt.Fprintf(out.stderr, "lidi %s: %s\n\n", c.name, bad.msg)
		if bad.overview {
			printOverview(out.stderr)
		} else {
			c.printUsage(out.stderr, fs)
		}
		return errUsage
	}
	return err
}

// printUsage prints the usage line, the description and every flag.
func (c *command) printUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: lidi %s %s\n\n", c.name, c.synopsis)
	doc := c.doc
	if doc == "" {
		doc = c.summary + "."
	}
	fmt.Fprintf(w, "%s\n", strings.TrimSpace(doc))
	if hasFlags(fs) {
		fmt.Fprintf(w, "\nflags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// printOverview prints what lidi is and every command.
func printOverview(w io.Writer) {
	fmt.Fprint(w, overview)
	printCommands(w, "")
	fmt.Fprint(w, "\nRun 'lidi help COMMAND' or 'lidi COMMAND -h' for a command's usage and flags.\n")
}

// printGroup prints the commands that start with group ("bench").
func printGroup(w io.Writer, group string) {
	fmt.Fprintf(w, "usage: lidi %s COMMAND [flags]\n\nThe %s commands are:\n", group, group)
	printCommands(w, group+" ")
	fmt.Fprintf(w, "\nRun 'lidi help %s COMMAND' for a command's usage and flags.\n", group)
}

func printCommands(w io.Writer, prefix string) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw)
	for _, c := range commands {
		if strings.HasPrefix(c.name, prefix) {
			fmt.Fprintf(tw, "\t%s\t%s\n", c.name, c.summary)
		}
	}
	tw.Flush()
}

// helpCmd is `lidi help [COMMAND]`.
func helpCmd(args []string, out output) error {
	if len(args) == 0 {
		printOverview(out.stdout)
		return nil
	}
	name := strings.Join(args, " ")
	if c := lookup(name); c != nil {
		fs, _ := c.flagSet()
		c.printUsage(out.stdout, fs)
		return nil
	}
	if len(args) == 1 && isGroup(name) {
		printGroup(out.stdout, name)
		return nil
	}
	fmt.Fprintf(out.stderr, "lidi help: unknown command %q\n\n", name)
	printOverview(out.stderr)
	return errUsage
}
