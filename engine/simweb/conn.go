package simweb

import (
	"crypto/tls"
	"io"
	"net"
)

// connKey is the context key of the connection's *connState.
type connKey struct{}

// trackingListener wraps accepted connections so the witness can follow
// them from accept to close and know their local address.
type trackingListener struct {
	net.Listener
	addr  int
	plain bool // a TLS web's plain HTTP port
	wit   *witness
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &trackedConn{Conn: c, state: &connState{addr: l.addr, plain: l.plain}, wit: l.wit}, nil
}

// tracked returns the trackedConn under c (a TLS connection wraps it), or
// nil.
func tracked(c net.Conn) *trackedConn {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	tc, _ := c.(*trackedConn)
	return tc
}

type trackedConn struct {
	net.Conn
	state *connState
	wit   *witness
}

// Read ends the connection's count as open as soon as the server reads the
// client's close (end of file): a client that closes before connecting again
// is then never seen with two connections open, whatever the order in which
// net/http's goroutines run after that.
func (c *trackedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err == io.EOF && c.wit != nil {
		c.wit.release(c.state)
	}
	return n, err
}

// CloseWrite keeps net/http's graceful close (it half-closes TCP
// connections before closing them). Like Close, it ends the connection's
// count as open before the client can see the end: a client that waits for
// the server's close before connecting again (through a proxy, or over TLS,
// where the server stops reading at the client's close_notify and never
// reads its end of file) is then never seen with two connections open.
func (c *trackedConn) CloseWrite() error {
	if c.wit != nil {
		c.wit.release(c.state)
	}
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Close ends the connection's count as open, then closes it.
func (c *trackedConn) Close() error {
	if c.wit != nil {
		c.wit.release(c.state)
	}
	return c.Conn.Close()
}
