package config

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"

	"lidi/engine"
)

// checkTLS reads fetch.ca_file: its certificates are trusted for HTTPS
// besides the system's.
func (f *File) checkTLS() error {
	f.rootCAs = nil
	if f.CAFile == "" {
		return nil
	}
	bad := func(err error) error { return &engine.ConfigError{Key: "fetch.ca_file", Err: err} }
	pem, err := os.ReadFile(f.CAFile)
	if err != nil {
		return bad(err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool() // no system store: the file's CAs alone
	}
	if !pool.AppendCertsFromPEM(pem) {
		return bad(fmt.Errorf("%s holds no PEM certificate", f.CAFile))
	}
	f.rootCAs = pool
	return nil
}

// checkProxy parses fetch.proxy: http://, https:// or socks5:// with a
// host. Empty means the environment's HTTP_PROXY, HTTPS_PROXY and NO_PROXY.
func (f *File) checkProxy() error {
	f.proxy = nil
	if f.Proxy == "" {
		return nil
	}
	bad := func(err error) error { return &engine.ConfigError{Key: "fetch.proxy", Err: err} }
	u, err := url.Parse(f.Proxy)
	if err != nil {
		return bad(err)
	}
	switch u.Scheme {
	case "http", "https", "socks5", "socks5h":
	default:
		return bad(fmt.Errorf("%q: the scheme must be http, https or socks5", f.Proxy))
	}
	if u.Hostname() == "" {
		return bad(errors.New("no proxy host in " + f.Proxy))
	}
	f.proxy = u
	return nil
}
