package dns

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strings"
	"time"

	mdns "github.com/miekg/dns"
)

// maxCNAMEHops bounds the CNAME links followed in one answer; a longer
// chain is almost certainly a loop.
const maxCNAMEHops = 8

// ednsSize is the UDP payload size advertised (the DNS flag day 2020
// value): large enough for any A/AAAA answer, small enough not to fragment.
const ednsSize = 1232

// errNoData reports a NOERROR answer without an address for the name.
var errNoData = errors.New("dns: no address record")

// query resolves name (canonical, no trailing dot) to its addresses and the
// time they may be kept, already clamped to [minTTL, maxTTL].
func (c *Cache) query(ctx context.Context, name string) ([]netip.Addr, time.Duration, error) {
	fqdn := name + "."
	addrs, ttl, err := c.ask(ctx, fqdn, mdns.TypeA)
	if errors.Is(err, errNoData) && !c.ipv4Only {
		addrs, ttl, err = c.ask(ctx, fqdn, mdns.TypeAAAA)
	}
	if errors.Is(err, errNoData) {
		err = ErrNotFound
	}
	if err != nil {
		return nil, 0, err
	}
	d := time.Duration(ttl) * time.Second
	return addrs, min(max(d, c.minTTL), c.maxTTL), nil
}

// ask sends one question, trying the servers in order (a lone server
// twice) until one gives a usable answer. NXDOMAIN and NOERROR answers are
// final; timeouts, network errors and other response codes move on to the
// next server.
func (c *Cache) ask(ctx context.Context, fqdn string, qtype uint16) ([]netip.Addr, uint32, error) {
	m := new(mdns.Msg)
	m.SetQuestion(fqdn, qtype)
	m.SetEdns0(ednsSize, false)
	attempts := max(2, len(c.servers))
	var lastErr error
	for i := range attempts {
		if ctx.Err() != nil {
			return nil, 0, ErrClosed
		}
		server := c.servers[i%len(c.servers)]
		m.Id = mdns.Id() // a fresh id per attempt, so a late answer to the previous one is ignored
		r, err := c.exchange(ctx, m, server)
		if err != nil {
			lastErr = fmt.Errorf("dns: query %s: %w", server, err)
			continue
		}
		switch r.Rcode {
		case mdns.RcodeSuccess:
			return addresses(r, fqdn, qtype)
		case mdns.RcodeNameError:
			return nil, 0, ErrNotFound
		default:
			lastErr = fmt.Errorf("%w: %s answered %s", ErrServerFailure, server, rcodeName(r.Rcode))
		}
	}
	if ctx.Err() != nil {
		return nil, 0, ErrClosed
	}
	return nil, 0, lastErr
}

// exchange sends m to server over UDP, and again over TCP if the UDP
// answer was truncated.
func (c *Cache) exchange(ctx context.Context, m *mdns.Msg, server string) (*mdns.Msg, error) {
	c.queries.Add(1)
	r, _, err := c.udp.ExchangeContext(ctx, m, server)
	// A truncated answer may also fail to unpack; either way TCP has it whole.
	if r != nil && r.Truncated {
		c.queries.Add(1)
		r, _, err = c.tcp.ExchangeContext(ctx, m, server)
	}
	if err != nil {
		return nil, err
	}
	q := m.Question[0]
	if len(r.Question) != 1 || r.Question[0].Qtype != q.Qtype || !strings.EqualFold(r.Question[0].Name, q.Name) {
		return nil, errors.New("dns: answer is for another question")
	}
	return r, nil
}

func rcodeName(rcode int) string {
	if s, ok := mdns.RcodeToString[rcode]; ok {
		return s
	}
	return fmt.Sprintf("RCODE%d", rcode)
}

// addresses extracts the qtype addresses of fqdn from the answer section,
// following CNAME links from fqdn to the final name. The TTL is the
// smallest on the chain, since the answer is only as good as its weakest
// link.
func addresses(r *mdns.Msg, fqdn string, qtype uint16) ([]netip.Addr, uint32, error) {
	name := fqdn
	ttl := uint32(math.MaxUint32)
	for hops := 0; ; hops++ {
		next := ""
		for _, rr := range r.Answer {
			if cn, ok := rr.(*mdns.CNAME); ok && strings.EqualFold(cn.Hdr.Name, name) {
				next, ttl = cn.Target, min(ttl, cn.Hdr.Ttl)
				break
			}
		}
		if next == "" {
			break
		}
		if hops == maxCNAMEHops {
			return nil, 0, errCNAMEChain
		}
		name = next
	}
	var addrs []netip.Addr
	for _, rr := range r.Answer {
		if !strings.EqualFold(rr.Header().Name, name) {
			continue
		}
		var a netip.Addr
		var ok bool
		switch rr := rr.(type) {
		case *mdns.A:
			if qtype != mdns.TypeA {
				continue
			}
			a, ok = netip.AddrFromSlice(rr.A.To4())
		case *mdns.AAAA:
			if qtype != mdns.TypeAAAA {
				continue
			}
			a, ok = netip.AddrFromSlice(rr.AAAA.To16())
		default:
			continue
		}
		if !ok {
			continue
		}
		addrs = append(addrs, a)
		ttl = min(ttl, rr.Header().Ttl)
	}
	if len(addrs) == 0 {
		return nil, 0, errNoData
	}
	return addrs, ttl, nil
}
