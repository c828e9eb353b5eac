package simweb

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"

	"github.com/miekg/dns"
)

// dnsServer answers for the simulated names on 127.0.0.1, over UDP and TCP
// on the same port: A records for the sites' hosts, an empty answer for
// other types of those names, NXDOMAIN for every other name.
type dnsServer struct {
	udp, tcp *dns.Server
	addr     string
}

// zone is the reserved TLD all simulated hosts live under (RFC 2606).
const zone = "test."

func startDNS(w *Web, wit *witness, cfg ServerConfig) (*dnsServer, error) {
	ttl := uint32(cfg.DNSTTL.Seconds())
	soa := &dns.SOA{
		Hdr:     dns.RR_Header{Name: zone, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: uint32(cfg.NegativeTTL.Seconds())},
		Ns:      "ns.simweb." + zone,
		Mbox:    "hostmaster.simweb." + zone,
		Serial:  1,
		Refresh: 3600,
		Retry:   600,
		Expire:  86400,
		Minttl:  uint32(cfg.NegativeTTL.Seconds()),
	}
	handler := dns.HandlerFunc(func(rw dns.ResponseWriter, req *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(req)
		m.Authoritative = true
		if len(req.Question) != 1 || req.Opcode != dns.OpcodeQuery {
			m.Rcode = dns.RcodeFormatError
			rw.WriteMsg(m)
			return
		}
		q := req.Question[0]
		name := strings.ToLower(strings.TrimSuffix(q.Name, "."))
		switch {
		case cfg.Hostile == HostileDNSSilent && name == HostileSilentHost:
			wit.dnsQuery(name, false)
			return // never answers
		case cfg.Hostile == HostileDNSServFail && name == HostileServFailHost:
			wit.dnsQuery(name, false)
			m.Rcode = dns.RcodeServerFailure
			rw.WriteMsg(m)
			return
		}
		id, known := w.hosts[name]
		wit.dnsQuery(name, known)
		inZone := strings.HasSuffix(strings.ToLower(dns.Fqdn(q.Name)), "."+zone)
		switch {
		case !known:
			m.Rcode = dns.RcodeNameError
			if inZone {
				m.Ns = append(m.Ns, soa)
			}
		case q.Qclass == dns.ClassINET && (q.Qtype == dns.TypeA || q.Qtype == dns.TypeANY):
			a := w.sites[id].addr.As4()
			m.Answer = append(m.Answer, &dns.A{
				Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: ttl},
				A:   net.IP(a[:]),
			})
		default: // the name exists but has no record of this type
			m.Ns = append(m.Ns, soa)
		}
		rw.WriteMsg(m)
	})

	const attempts = 50
	for range attempts {
		pc, err := net.ListenPacket("udp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.DNSPort)))
		if err != nil {
			return nil, fmt.Errorf("simweb: dns udp listener: %w", err)
		}
		port := pc.LocalAddr().(*net.UDPAddr).Port
		ln, err := net.Listen("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			pc.Close()
			if errors.Is(err, syscall.EADDRINUSE) && cfg.DNSPort == 0 {
				continue
			}
			return nil, fmt.Errorf("simweb: dns tcp listener: %w", err)
		}
		d := &dnsServer{addr: pc.LocalAddr().String()}
		started := make(chan struct{}, 2)
		notify := func() { started <- struct{}{} }
		d.udp = &dns.Server{PacketConn: pc, Handler: handler, NotifyStartedFunc: notify}
		d.tcp = &dns.Server{Listener: ln, Handler: handler, NotifyStartedFunc: notify}
		errc := make(chan error, 2)
		go func() { errc <- d.udp.ActivateAndServe() }()
		go func() { errc <- d.tcp.ActivateAndServe() }()
		for range 2 {
			select {
			case <-started:
			case err := <-errc:
				pc.Close()
				ln.Close()
				return nil, fmt.Errorf("simweb: dns server: %w", err)
			}
		}
		return d, nil
	}
	return nil, fmt.Errorf("simweb: no free dns port after %d attempts", attempts)
}

func (d *dnsServer) close() error {
	return errors.Join(d.udp.Shutdown(), d.tcp.Shutdown())
}
