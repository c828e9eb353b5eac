// Package simwebtest starts synthetic webs for tests, as net/http/httptest
// starts servers: generated, served on loopback, and closed when the test
// that started them ends.
package simwebtest

import (
	"context"
	"testing"

	"lidi/engine/simweb"
)

// Start generates the web that opt describes and serves it on loopback
// with the default ServerConfig (Serve says what happens then).
func Start(t testing.TB, opt simweb.Options) *simweb.Server {
	t.Helper()
	web, err := simweb.Generate(opt)
	if err != nil {
		t.Fatal(err)
	}
	return Serve(t, web, simweb.ServerConfig{})
}

// Serve serves web on loopback with cfg until the test ends. It stops the
// test (t.Fatal) when the server cannot start.
func Serve(t testing.TB, web *simweb.Web, cfg simweb.ServerConfig) *simweb.Server {
	t.Helper()
	srv, err := simweb.Start(context.Background(), web, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}
