package main

import (
	"flag"
	"io"

	"lidi/engine/bench"
)

// benchStrategiesCmd runs `lidi bench strategies`: Castillo's chapter 6
// reproduced on simweb (Figures 6.5, 6.6 and 6.13, Table 6.1).
func benchStrategiesCmd(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench strategies", flag.ContinueOnError)
	var opt bench.StrategiesOptions
	opt.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	opt.OpenStore = openBenchStore
	_, err := bench.Strategies(ctx, opt, stdout)
	return err
}
