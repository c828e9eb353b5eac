package cluster

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// TokenFile returns the token kept in path, creating a random one (0600)
// when the file does not exist. created tells the caller to print it: the
// slaves need it.
func TokenFile(path string) (token string, created bool, err error) {
	b, err := os.ReadFile(path)
	if err == nil {
		token = strings.TrimSpace(string(b))
		if token == "" {
			return "", false, fmt.Errorf("cluster: token file %s is empty", path)
		}
		return token, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", false, fmt.Errorf("cluster: token file: %w", err)
	}
	var raw [24]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", false, fmt.Errorf("cluster: token: %w", err)
	}
	token = hex.EncodeToString(raw[:])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", false, fmt.Errorf("cluster: token file: %w", err)
	}
	if _, err := f.WriteString(token + "\n"); err != nil {
		f.Close()
		return "", false, fmt.Errorf("cluster: token file: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", false, fmt.Errorf("cluster: token file: %w", err)
	}
	return token, true, nil
}

// DialOptions says how to reach the NATS server.
type DialOptions struct {
	URL  string
	Name string // the connection's name, shown by the server
	Auth Auth
	// CA names PEM authorities the server's certificate must chain to;
	// "" means the system's. A TLS server is always verified: there is
	// no way to skip it. With CA set, a server without TLS is refused.
	CA string
	// OnState, when not nil, hears of disconnections and reconnections.
	OnState func(connected bool)
	// retry keeps trying when the first connection fails (slaves).
	retry bool
	// inProcess connects to an embedded server without a socket (the
	// master to its own server: no TLS to verify between the two).
	inProcess nats.InProcessConnProvider
}

// Dial connects to the NATS server, and keeps reconnecting for ever when the
// connection is lost: a slave cut off from its master finishes its leases
// and delivers later.
func Dial(opt DialOptions) (*nats.Conn, error) {
	opts := []nats.Option{
		nats.Name(opt.Name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.ReconnectBufSize(-1), // nothing is published blind while away: the spool keeps it
	}
	switch {
	case opt.Auth.NKeySeedFile != "":
		o, err := nats.NkeyOptionFromSeed(opt.Auth.NKeySeedFile)
		if err != nil {
			return nil, fmt.Errorf("cluster: nkey seed: %w", err)
		}
		opts = append(opts, o)
	case opt.Auth.Token != "":
		opts = append(opts, nats.Token(opt.Auth.Token))
	}
	// The configuration TLS uses whenever the server asks for it (or the
	// URL says tls://): verification on, against CA or the system's
	// authorities.
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if opt.CA != "" {
		pool, err := loadCA(opt.CA)
		if err != nil {
			return nil, err
		}
		tc.RootCAs = pool
		opts = append(opts, nats.Secure(tc))
	} else {
		opts = append(opts, func(o *nats.Options) error { o.TLSConfig = tc; return nil })
	}
	if opt.inProcess != nil {
		opts = append(opts, nats.InProcessServer(opt.inProcess))
	}
	if opt.retry {
		opts = append(opts, nats.RetryOnFailedConnect(true))
	}
	if opt.OnState != nil {
		opts = append(opts,
			nats.DisconnectErrHandler(func(*nats.Conn, error) { opt.OnState(false) }),
			nats.ReconnectHandler(func(*nats.Conn) { opt.OnState(true) }),
			// A first connection made after retries (RetryOnFailedConnect)
			// is no reconnection.
			nats.ConnectHandler(func(*nats.Conn) { opt.OnState(true) }))
	}
	nc, err := nats.Connect(opt.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("cluster: connecting to %s: %w", opt.URL, err)
	}
	return nc, nil
}
