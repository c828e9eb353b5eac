package simweb

import (
	"net"
	"testing"
	"time"

	"github.com/miekg/dns"
)

func TestDNSAnswers(t *testing.T) {
	w := testWeb(t, smallWeb)
	s := startServer(t, w, ServerConfig{DNSTTL: 42 * time.Second, NegativeTTL: 7 * time.Second})
	site := w.Site(3)
	exchange := func(net, name string, qtype uint16) *dns.Msg {
		t.Helper()
		c := &dns.Client{Net: net, Timeout: 5 * time.Second}
		m := new(dns.Msg)
		m.SetQuestion(dns.Fqdn(name), qtype)
		r, _, err := c.Exchange(m, s.DNSAddr())
		if err != nil {
			t.Fatalf("%s %s: %v", net, name, err)
		}
		return r
	}
	for _, network := range []string{"udp", "tcp"} {
		r := exchange(network, site.Host, dns.TypeA)
		if r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 || !r.Authoritative {
			t.Fatalf("%s A %s: %v", network, site.Host, r)
		}
		a, ok := r.Answer[0].(*dns.A)
		if !ok || !a.A.Equal(net.IP(site.Addr.AsSlice())) || a.Hdr.Ttl != 42 {
			t.Errorf("%s A %s: %v, want %v with TTL 42", network, site.Host, r.Answer[0], site.Addr)
		}
	}
	// Names are case-insensitive.
	if r := exchange("udp", "WWW."+site.Host, dns.TypeA); r.Rcode != dns.RcodeNameError {
		t.Errorf("unknown subdomain: rcode %s", dns.RcodeToString[r.Rcode])
	}
	upper := []byte(site.Host)
	for i := range upper {
		if upper[i] >= 'a' && upper[i] <= 'z' {
			upper[i] -= 'a' - 'A'
		}
	}
	if r := exchange("udp", string(upper), dns.TypeA); len(r.Answer) != 1 {
		t.Errorf("upper-case name: %v", r)
	}
	r := exchange("udp", site.Host, dns.TypeAAAA)
	if r.Rcode != dns.RcodeSuccess || len(r.Answer) != 0 || len(r.Ns) != 1 {
		t.Errorf("AAAA for a simulated name: want an empty answer with SOA, got %v", r)
	}
	for _, name := range []string{"nosuch.test", "example.com", "site3.test.example"} {
		r := exchange("udp", name, dns.TypeA)
		if r.Rcode != dns.RcodeNameError || len(r.Answer) != 0 {
			t.Errorf("%s: rcode %s, %d answers; want NXDOMAIN", name, dns.RcodeToString[r.Rcode], len(r.Answer))
		}
	}
	if r := exchange("udp", "nosuch.test", dns.TypeA); len(r.Ns) != 1 || r.Ns[0].(*dns.SOA).Minttl != 7 {
		t.Errorf("NXDOMAIN in .test should carry the SOA with the negative TTL: %v", r.Ns)
	}
	snap := s.Witness().DNS
	if snap.ByName[site.Host] != 4 || snap.ByName["nosuch.test"] != 2 || snap.ByName["example.com"] != 1 {
		t.Errorf("DNS counts %v", snap.ByName)
	}
	if snap.Queries != 9 || snap.NXDomain != 5 {
		t.Errorf("DNS totals: %d queries, %d NXDOMAIN; want 9, 5", snap.Queries, snap.NXDomain)
	}
}
