package main

import (
	"flag"
	"io"

	"lidi/engine/bench"
)

// benchPrecisionCmd runs `lidi bench precision`: crawling precision and
// recall against simweb's traps, with detection on and with a fixed depth.
func benchPrecisionCmd(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench precision", flag.ContinueOnError)
	var opt bench.PrecisionOptions
	opt.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	opt.OpenStore = openBenchStore
	_, err := bench.Precision(ctx, opt, stdout)
	return err
}
