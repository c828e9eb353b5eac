package dns_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"time"

	mdns "github.com/miekg/dns"

	"lidi/engine/dns"
)

func Example() {
	// A small authoritative server on loopback stands in for the
	// configured DNS servers: it knows one name.
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	server := &mdns.Server{PacketConn: pc, Handler: mdns.HandlerFunc(func(w mdns.ResponseWriter, r *mdns.Msg) {
		m := new(mdns.Msg)
		m.SetReply(r)
		if q := r.Question[0]; q.Name == "www.example.test." && q.Qtype == mdns.TypeA {
			rr, _ := mdns.NewRR("www.example.test. 3600 IN A 127.0.0.80")
			m.Answer = append(m.Answer, rr)
		} else if q.Name != "www.example.test." {
			m.Rcode = mdns.RcodeNameError
		}
		w.WriteMsg(m)
	})}
	started := make(chan struct{})
	server.NotifyStartedFunc = func() { close(started) }
	go server.ActivateAndServe()
	<-started
	defer server.Shutdown()

	cache, err := dns.NewCache(dns.Config{
		Servers: []string{pc.LocalAddr().String()},
		Timeout: time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer cache.Close()

	ctx := context.Background()
	cache.Prefetch("www.example.test") // when the host is discovered
	for range 3 {                      // each visit then finds it cached
		addr, err := cache.Lookup(ctx, "www.example.test")
		fmt.Println(addr, err)
	}
	_, err = cache.Lookup(ctx, "missing.example.test")
	fmt.Println(err, errors.Is(err, dns.ErrNotFound))

	s := cache.Stats()
	fmt.Printf("lookups=%d queries=%d failures=%d\n", s.Lookups, s.Queries, s.Failures)
	// Output:
	// 127.0.0.80 <nil>
	// 127.0.0.80 <nil>
	// 127.0.0.80 <nil>
	// dns: lookup missing.example.test: no such host true
	// lookups=4 queries=2 failures=1
}
