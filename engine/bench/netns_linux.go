package bench

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// netLink is a slave's own network namespace, joined to the bench's by a
// veth pair. The bench's side and the namespace's side have link-local
// addresses (169.254.0.0/16) on this pair only; the namespace routes
// 127.0.0.0/8 over the pair (route_localnet on both ends), so the slave
// reaches the master and simweb's sites at their loopback addresses, but
// over a link of its own that can be set down (a network cut) — and the
// master sees it come from its link-local address, not from loopback.
// Nothing leaves the machine.
type netLink struct {
	ns, here, there string // the namespace and the two ends of the pair
}

// errNoNetns is returned where network namespaces cannot be made.
var errNoNetns = errors.New("bench: network namespaces unavailable")

// ipCmd runs ip with args.
func ipCmd(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// newNetLink makes the namespace of slave i (0-based) of this bench.
func newNetLink(i int) (*netLink, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: not root", errNoNetns)
	}
	id := os.Getpid() % 10000
	n := &netLink{ns: fmt.Sprintf("lidi-bench-%d-%d", id, i), here: fmt.Sprintf("lb%d-%da", id, i), there: fmt.Sprintf("lb%d-%db", id, i)}
	if err := ipCmd("netns", "add", n.ns); err != nil {
		return nil, fmt.Errorf("%w: %v", errNoNetns, err)
	}
	// A /30 of 169.254.0.0/16 per slave of this bench.
	here := fmt.Sprintf("169.254.%d.%d", 200+i/60, i%60*4+1)
	there := fmt.Sprintf("169.254.%d.%d", 200+i/60, i%60*4+2)
	steps := [][]string{
		{"link", "add", n.here, "type", "veth", "peer", "name", n.there},
		{"link", "set", n.there, "netns", n.ns},
		{"addr", "add", here + "/30", "dev", n.here},
		{"link", "set", n.here, "up"},
		{"-n", n.ns, "addr", "add", there + "/30", "dev", n.there},
		{"-n", n.ns, "link", "set", n.there, "up"},
		{"-n", n.ns, "route", "add", "127.0.0.0/8", "via", here, "dev", n.there, "src", there},
	}
	for _, st := range steps {
		if err := ipCmd(st...); err != nil {
			n.close()
			return nil, err
		}
	}
	for _, sc := range [][]string{
		{"sysctl", "-qw", "net.ipv4.conf." + n.here + ".route_localnet=1"},
		{"ip", "netns", "exec", n.ns, "sysctl", "-qw", "net.ipv4.conf." + n.there + ".route_localnet=1"},
	} {
		if out, err := exec.Command(sc[0], sc[1:]...).CombinedOutput(); err != nil {
			n.close()
			return nil, fmt.Errorf("%s: %v: %s", strings.Join(sc, " "), err, out)
		}
	}
	return n, nil
}

// slow makes the namespace's side of the link slow and lossy (tc netem);
// it reports an error where the kernel has no netem.
func (n *netLink) slow(spec string) error {
	args := append([]string{"netns", "exec", n.ns, "tc", "qdisc", "add", "dev", n.there, "root", "netem"}, strings.Fields(spec)...)
	return ipCmd(args...)
}

// argv runs a command in the namespace.
func (n *netLink) argv(cmd []string) []string {
	return append([]string{"ip", "netns", "exec", n.ns}, cmd...)
}

// down and up cut the link and mend it.
func (n *netLink) down() error { return ipCmd("link", "set", n.here, "down") }
func (n *netLink) up() error   { return ipCmd("link", "set", n.here, "up") }

func (n *netLink) close() {
	ipCmd("link", "del", n.here)
	ipCmd("netns", "del", n.ns)
}
