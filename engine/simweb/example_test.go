package simweb_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"

	"lidi/engine/simweb"
)

func Example() {
	w, err := simweb.Generate(simweb.Options{Seed: 1, Sites: 50})
	if err != nil {
		panic(err)
	}
	fmt.Println(w.NumSites(), "sites,", w.NumPages(), "pages")

	s, err := simweb.Start(context.Background(), w, simweb.ServerConfig{})
	if err != nil {
		panic(err)
	}
	defer s.Close()

	// A client that resolves the simulated names through the simulated DNS,
	// as a crawler would.
	resolver := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, s.DNSAddr())
	}}
	client := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{Resolver: resolver}).DialContext}}

	seed := w.Seeds(1)[0]
	resp, err := client.Get(s.URL(seed))
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.Status, "same as Render:", bytes.Equal(body, s.Render(seed)))

	host := w.Site(w.Page(seed).Site).Host
	wit := s.Witness()
	fmt.Println("host:", host)
	fmt.Println("requests:", wit.Hosts[host].Requests, "connections:", wit.Hosts[host].Connections)
	fmt.Println("resolved through DNS:", wit.DNS.ByName[host] > 0)
	// Output:
	// 50 sites, 2500 pages
	// 200 OK same as Render: true
	// host: www.site32.test
	// requests: 1 connections: 1
	// resolved through DNS: true
}

// A changing web's ground truth: the change model says when each page
// changes, so a copy's freshness and age are known exactly.
func ExampleChanges() {
	c, err := simweb.NewChanges(1, simweb.ChangeOptions{Enabled: true}, []int{3, 2})
	if err != nil {
		panic(err)
	}
	for ch := range c.Channels() {
		fmt.Printf("channel %d: group %d, mean interval %v\n", ch, c.Group(ch), c.GroupInterval(c.Group(ch)))
	}
	first, _ := c.NextChange(0, 0)
	fmt.Println("page 0 is fresh just before its first change:", c.Fresh(0, 0, first-1))
	fmt.Println("and stale at it:", !c.Fresh(0, 0, first), c.Version(0, first))
	// Output:
	// channel 0: group 2, mean interval 4h0m0s
	// channel 1: group 3, mean interval 8h0m0s
	// page 0 is fresh just before its first change: true
	// and stale at it: true 1
}
