// Package cluster runs one crawl across machines on NATS JetStream: a
// master that embeds a NATS server (or connects to one) and hands leases to
// light slaves, and the slaves that crawl them. The master alone does DNS
// look-ups and holds the seen set and the frontier; a slave gets a site's
// URLs with its address, fetches them politely, and sends back what it
// found, compressed with zlib, batched per lease (LiDi's light slaves, Cho's
// exchange mode).
//
// Streams and subjects (see streams.go): leases go to a work-queue stream a
// slave pulls from; results go to a second work-queue stream the master
// pulls from, each with a message id so that a retry is applied once; slaves
// announce themselves with status messages on plain NATS subjects.
package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Errors a caller may test for.
var (
	// ErrNoStoreDir: an embedded server needs a store directory; an
	// empty one would make JetStream write under /tmp.
	ErrNoStoreDir = errors.New("cluster: the embedded server needs a store directory")
	// ErrNoAuth: the master never runs without authentication.
	ErrNoAuth = errors.New("cluster: a token or an nkey is required")
)

// Auth is how a client proves itself to the NATS server: a token, or an
// nkey (the server knows the public key, the client signs with the seed).
// Its zero value authenticates nobody.
type Auth struct {
	Token string
	// NKey is a user's public nkey ("U..."): the server accepts it.
	NKey string
	// NKeySeedFile holds the seed a client signs with.
	NKeySeedFile string
}

// TLSFiles names the PEM files of an optional TLS set-up. Its zero value
// means no TLS.
type TLSFiles struct {
	Cert, Key string // the server's certificate and key
	CA        string // the authority that signed it, for clients
}

// ServerOptions configures the NATS server a master embeds.
type ServerOptions struct {
	Listen   string // host:port; port 0 picks a free one
	StoreDir string // JetStream's directory, beside the crawl database
	Auth     Auth   // a token or an nkey, required
	TLS      TLSFiles
	// SyncInterval is how often JetStream forces its files to disk; 0
	// means on every write (the master's choice, see StartServer).
	SyncInterval time.Duration
}

// Server is an embedded NATS server with JetStream. It is safe for
// concurrent use.
type Server struct {
	ns  *server.Server
	url string
}

// StartServer starts a NATS server with JetStream enabled and waits until
// it accepts connections.
//
// fsync policy: with SyncInterval 0 JetStream syncs on every write. The
// traffic is one message per lease and per result batch (tens of pages), so
// the cost is small, and an acknowledged lease or result then survives a
// crash of the machine, not only of the process (JetStream's default defers
// fsync by two minutes).
func StartServer(opt ServerOptions) (*Server, error) {
	if opt.StoreDir == "" {
		return nil, ErrNoStoreDir
	}
	host, portStr, err := net.SplitHostPort(opt.Listen)
	if err != nil {
		return nil, fmt.Errorf("cluster: listen address %q: %w", opt.Listen, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("cluster: listen address %q: bad port", opt.Listen)
	}
	if err := os.MkdirAll(opt.StoreDir, 0o700); err != nil {
		return nil, fmt.Errorf("cluster: store directory: %w", err)
	}
	if port == 0 {
		port = server.RANDOM_PORT // nats-server reads 0 as its default, 4222
	}
	so := &server.Options{
		ServerName: "lidi-master",
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   opt.StoreDir,
		NoSigs:     true, // the process handles its own signals
		NoLog:      true,
		// Result batches carry compressed bodies: allow up to 8 MiB.
		MaxPayload: 8 << 20,
	}
	if opt.SyncInterval > 0 {
		so.SyncInterval = opt.SyncInterval
	} else {
		so.SyncAlways = true
	}
	switch {
	case opt.Auth.NKey != "":
		so.Nkeys = []*server.NkeyUser{{Nkey: opt.Auth.NKey}}
	case opt.Auth.Token != "":
		so.Authorization = opt.Auth.Token
	default:
		return nil, ErrNoAuth
	}
	if opt.TLS.Cert != "" || opt.TLS.Key != "" {
		cert, err := tls.LoadX509KeyPair(opt.TLS.Cert, opt.TLS.Key)
		if err != nil {
			return nil, fmt.Errorf("cluster: tls: %w", err)
		}
		so.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		so.TLS = true
	}
	ns, err := server.NewServer(so)
	if err != nil {
		return nil, fmt.Errorf("cluster: nats server: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, errors.New("cluster: nats server did not start within 10s")
	}
	return &Server{ns: ns, url: ns.ClientURL()}, nil
}

// URL is the address clients connect to (nats://host:port).
func (s *Server) URL() string { return s.url }

// Close stops the server; JetStream's files stay for the next start. On a
// nil *Server (a master on an external NATS server) it does nothing.
func (s *Server) Close() {
	if s == nil {
		return
	}
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
}

// ClientAddr returns the network address of the client connected under the
// connection name, or "" when none is.
func (s *Server) ClientAddr(name string) string {
	cz, err := s.ns.Connz(&server.ConnzOptions{})
	if err != nil {
		return ""
	}
	for _, c := range cz.Conns {
		if c.Name == name {
			return net.JoinHostPort(c.IP, strconv.Itoa(c.Port))
		}
	}
	return ""
}

// loadCA reads a PEM bundle of authorities.
func loadCA(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("cluster: tls ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("cluster: tls ca %s: no certificate in it", file)
	}
	return pool, nil
}
