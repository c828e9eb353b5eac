package dns

import (
	"bufio"
	"fmt"
	"net/netip"
	"os"
	"strings"
)

// readHosts reads a hosts file (/etc/hosts format: an address, then the
// names it answers for; # starts a comment) into canonical name →
// addresses, in the file's order. A missing file is no entries.
func readHosts(path string) (map[string][]netip.Addr, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("dns: hosts file: %w", err)
	}
	defer f.Close()
	hosts := make(map[string][]netip.Addr)
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(text)
		if len(fields) < 2 {
			continue
		}
		addr, err := netip.ParseAddr(fields[0])
		if err != nil {
			return nil, fmt.Errorf("dns: hosts file %s:%d: %q is not an IP address", path, line, fields[0])
		}
		addr = addr.WithZone("") // fe80::1%lo0: the zone means nothing to a crawl
		for _, name := range fields[1:] {
			key, lit, err := canonicalHost(name)
			if err != nil || lit.IsValid() {
				continue // names the cache would refuse are never looked up
			}
			hosts[key] = append(hosts[key], addr)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("dns: hosts file %s: %w", path, err)
	}
	return hosts, nil
}
