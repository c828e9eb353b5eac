package cluster_test

import (
	"fmt"
	"net/netip"

	"lidi/engine/cluster"
)

// Rules pin sites to the slaves that announce a tag: by host name suffix,
// or by address range.
func ExamplePin_Matches() {
	pins := []cluster.Pin{
		{Suffix: ".fr", Tag: "eu"},
		{Prefix: netip.MustParsePrefix("10.0.0.0/8"), Tag: "lan"},
	}
	sites := []struct {
		host string
		addr netip.Addr
	}{
		{"www.example.fr", netip.MustParseAddr("192.0.2.1")},
		{"intranet.test", netip.MustParseAddr("10.1.2.3")},
		{"example.com", netip.MustParseAddr("192.0.2.2")},
	}
	for _, s := range sites {
		tag := "any slave"
		for _, p := range pins {
			if p.Matches(s.host, s.addr) {
				tag = p.Tag
				break
			}
		}
		fmt.Printf("%s: %s\n", s.host, tag)
	}
	// Output:
	// www.example.fr: eu
	// intranet.test: lan
	// example.com: any slave
}

// What travels between master and slaves is zlib-compressed.
func ExampleCompress() {
	z := cluster.Compress([]byte("a lease, a result"))
	back, err := cluster.Decompress(z)
	fmt.Println(string(back), err)
	_, err = cluster.Decompress([]byte("not zlib"))
	fmt.Println(err != nil)
	// Output:
	// a lease, a result <nil>
	// true
}
