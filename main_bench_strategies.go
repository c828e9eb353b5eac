package main

import (
	"flag"
	"io"

	"lidi/engine"
	"lidi/engine/bench"
	"lidi/storage"
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
	opt.OpenStore = func(path string) (engine.Store, io.Closer, error) {
		db, err := storage.Open(path, storage.Options{})
		return db, db, err
	}
	_, err := bench.Strategies(ctx, opt, stdout)
	return err
}
