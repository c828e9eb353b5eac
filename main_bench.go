package main

import (
	"context"
	"flag"
	"io"

	"lidi/engine/bench"
)

// runBench parses a benchmark's flags (registered by register) and runs it
// until it ends or SIGINT/SIGTERM.
func runBench(name string, args []string, register func(*flag.FlagSet), run func(context.Context) error) error {
	fs := flag.NewFlagSet("bench "+name, flag.ContinueOnError)
	register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	return run(ctx)
}

// benchPrecisionCmd runs `lidi bench precision`: crawling precision and
// recall against simweb's traps, with detection on and with a fixed depth.
func benchPrecisionCmd(args []string, stdout io.Writer) error {
	opt := bench.PrecisionOptions{OpenStore: openBenchStore}
	return runBench("precision", args, opt.RegisterFlags, func(ctx context.Context) error {
		_, err := bench.Precision(ctx, opt, stdout)
		return err
	})
}

// benchStrategiesCmd runs `lidi bench strategies`: Castillo's chapter 6
// reproduced on simweb (Figures 6.5, 6.6 and 6.13, Table 6.1).
func benchStrategiesCmd(args []string, stdout io.Writer) error {
	opt := bench.StrategiesOptions{OpenStore: openBenchStore}
	return runBench("strategies", args, opt.RegisterFlags, func(ctx context.Context) error {
		_, err := bench.Strategies(ctx, opt, stdout)
		return err
	})
}
