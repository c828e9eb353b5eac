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
