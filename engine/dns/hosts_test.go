package dns

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	mdns "github.com/miekg/dns"
)

// The hosts file answers its names before any server is asked; other
// names and IP literals behave as without it.
func TestHostsFile(t *testing.T) {
	z := newZone()
	z.set(t, "www.example.org", mdns.TypeA, "www.example.org. 300 IN A 192.0.2.1")
	z.set(t, "intranet.lab", mdns.TypeA, "intranet.lab. 300 IN A 192.0.2.99")
	addr := startServer(t, z, false)
	hosts := filepath.Join(t.TempDir(), "hosts")
	os.WriteFile(hosts, []byte(`# a comment
127.0.0.1	localhost
::1		localhost ip6-localhost
10.1.2.3	Intranet.Lab wiki.lab  # the lab's own names
10.1.2.4	wiki.lab
`), 0o644)
	c, _ := newTestCache(t, Config{HostsFile: hosts}, addr)
	for _, tc := range []struct {
		host string
		want []string
	}{
		{"intranet.lab", []string{"10.1.2.3"}},
		{"WIKI.LAB.", []string{"10.1.2.3", "10.1.2.4"}},
		{"localhost", []string{"127.0.0.1", "::1"}},
		{"www.example.org", []string{"192.0.2.1"}},
		{"127.0.0.7", []string{"127.0.0.7"}},
	} {
		got, err := c.LookupAll(context.Background(), tc.host)
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("%s: %v %v, want %v", tc.host, got, err, tc.want)
			continue
		}
		for i, w := range tc.want {
			if got[i] != netip.MustParseAddr(w) {
				t.Errorf("%s: %v, want %v", tc.host, got, tc.want)
			}
		}
	}
	if n := z.totalQueries(); n != 1 {
		t.Errorf("%d queries reached the server, want 1 (www.example.org)", n)
	}
	if st := c.Stats(); st.HostsFile != 3 || st.Literals != 1 {
		t.Errorf("stats: %d from the hosts file, %d literals", st.HostsFile, st.Literals)
	}

	// A missing file has no names; a malformed one is an error.
	if _, err := NewCache(Config{Servers: []string{addr}, HostsFile: filepath.Join(t.TempDir(), "none")}); err != nil {
		t.Errorf("missing hosts file: %v", err)
	}
	os.WriteFile(hosts, []byte("not-an-address name\n"), 0o644)
	if _, err := NewCache(Config{Servers: []string{addr}, HostsFile: hosts}); err == nil {
		t.Error("a malformed hosts file was accepted")
	}
}
