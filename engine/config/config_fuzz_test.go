package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"lidi/engine"
)

// FuzzParse feeds arbitrary bytes to the config loader: it never panics,
// every error is prefixed "config:", an error is an
// engine.ConfigError that names its key or its line (yaml gives no line for
// some files that are not YAML), and a file it accepts gives a valid
// engine configuration, the same on a second parse. The seeds are in
// testdata/fuzz/FuzzParse; `go test -fuzz FuzzParse` explores further.
func FuzzParse(f *testing.F) {
	f.Add([]byte("seeds: [http://a.test/]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			if c != nil {
				t.Fatalf("Parse returned a config with error %v", err)
			}
			if !strings.HasPrefix(err.Error(), "config: ") {
				t.Fatalf("error %q lacks the config: prefix", err)
			}
			var ce *engine.ConfigError
			if errors.As(err, &ce) && ce.Key == "" && ce.Line == 0 && !strings.HasPrefix(ce.Err.Error(), "not YAML") {
				t.Fatalf("error %q names no key and no line", err)
			}
			return
		}
		ec := c.Engine()
		if err := ec.Validate(); err != nil {
			t.Fatalf("accepted config fails the engine's check: %v", err)
		}
		again, err := Parse(data)
		if err != nil || !reflect.DeepEqual(c, again) {
			t.Fatalf("second parse differs: %v", err)
		}
	})
}
