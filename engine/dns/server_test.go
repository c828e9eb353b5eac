package dns

import (
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lidi/engine/clock"

	mdns "github.com/miekg/dns"
)

// zone is the data and the witness of a real DNS server used in tests: it
// answers from a table and counts every question it receives.
type zone struct {
	mu          sync.Mutex
	answers     map[question][]mdns.RR
	exists      map[string]bool // names with some record (NOERROR rather than NXDOMAIN)
	rcodes      map[string]int  // names answered with a fixed response code
	truncateUDP bool            // answer UDP with TC set and no records
	gate        chan struct{}   // when set, handlers wait for it to close
	queries     map[question]int
	total       int
	inflight    int
	maxInflight int
}

type question struct {
	name  string // lower-case FQDN
	qtype uint16
}

func newZone() *zone {
	return &zone{
		answers: make(map[question][]mdns.RR),
		exists:  make(map[string]bool),
		rcodes:  make(map[string]int),
		queries: make(map[question]int),
	}
}

// set makes the server answer (name, qtype) with the records written in
// zone-file syntax.
func (z *zone) set(t testing.TB, name string, qtype uint16, records ...string) {
	t.Helper()
	var rrs []mdns.RR
	for _, s := range records {
		rr, err := mdns.NewRR(s)
		if err != nil {
			t.Fatalf("bad test record %q: %v", s, err)
		}
		rrs = append(rrs, rr)
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	name = mdns.CanonicalName(name)
	z.answers[question{name, qtype}] = rrs
	z.exists[name] = true
}

func (z *zone) setRcode(name string, rcode int) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.rcodes[mdns.CanonicalName(name)] = rcode
}

// hold makes handlers wait until the returned release is called (it is
// also called at cleanup so the server can shut down).
func (z *zone) hold(t testing.TB) (release func()) {
	gate := make(chan struct{})
	z.mu.Lock()
	z.gate = gate
	z.mu.Unlock()
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	return release
}

func (z *zone) count(name string, qtype uint16) int {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.queries[question{mdns.CanonicalName(name), qtype}]
}

func (z *zone) totalQueries() int {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.total
}

func (z *zone) ServeDNS(w mdns.ResponseWriter, r *mdns.Msg) {
	if len(r.Question) != 1 {
		mdns.HandleFailed(w, r)
		return
	}
	q := question{strings.ToLower(r.Question[0].Name), r.Question[0].Qtype}
	z.mu.Lock()
	z.queries[q]++
	z.total++
	z.inflight++
	z.maxInflight = max(z.maxInflight, z.inflight)
	gate := z.gate
	z.mu.Unlock()
	if gate != nil {
		<-gate
	}

	m := new(mdns.Msg)
	m.SetReply(r)
	z.mu.Lock()
	if rc, ok := z.rcodes[q.name]; ok {
		m.Rcode = rc
	} else if rrs, ok := z.answers[q]; ok {
		m.Answer = rrs
	} else if !z.exists[q.name] {
		m.Rcode = mdns.RcodeNameError
	}
	if z.truncateUDP && w.LocalAddr().Network() == "udp" {
		m.Truncated, m.Answer = true, nil
	}
	// Leave before answering, so a client's next query never overlaps it.
	z.inflight--
	z.mu.Unlock()
	w.WriteMsg(m)
}

// startServer serves z over UDP on 127.0.0.1 (and TCP on the same port if
// withTCP) and returns its address.
func startServer(t testing.TB, z *zone, withTCP bool) string {
	t.Helper()
	var pc net.PacketConn
	var ln net.Listener
	// The free UDP port may be taken for TCP; try a few.
	for try := 0; ; try++ {
		var err error
		pc, err = net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if !withTCP {
			break
		}
		ln, err = net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			break
		}
		pc.Close()
		if try == 10 {
			t.Fatalf("no port free for both UDP and TCP: %v", err)
		}
	}
	serve := func(srv *mdns.Server) {
		started := make(chan struct{})
		srv.NotifyStartedFunc = func() { close(started) }
		errc := make(chan error, 1)
		go func() { errc <- srv.ActivateAndServe() }()
		select {
		case <-started:
		case err := <-errc:
			t.Fatalf("dns test server: %v", err)
		}
		t.Cleanup(func() { srv.Shutdown() })
	}
	serve(&mdns.Server{PacketConn: pc, Handler: z})
	if ln != nil {
		serve(&mdns.Server{Listener: ln, Handler: z})
	}
	return pc.LocalAddr().String()
}

// blackhole is a UDP socket that reads queries and never answers.
type blackhole struct {
	addr     string
	received atomic.Int64
}

func startBlackhole(t testing.TB) *blackhole {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &blackhole{addr: pc.LocalAddr().String()}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			b.received.Add(1)
		}
	}()
	t.Cleanup(func() { pc.Close(); <-done })
	return b
}

// newFakeClock returns a fake clock at the tests' epoch.
func newFakeClock() *clock.Fake {
	return clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}
