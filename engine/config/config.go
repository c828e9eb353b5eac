// Package config reads lidi's config.yaml into a File: the engine's keys
// (engine.Config) and the program's own, each declared once by the field
// that holds it (see package keys). Every key has a default (the
// config.yaml at the top of the repository documents them all); a file need
// only name what it changes. Unknown keys and bad values are errors that
// name the file, the line and the key, and say what to write.
package config

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"lidi/engine"
	"lidi/engine/cluster"
	"lidi/engine/dedup"
	"lidi/engine/dns"
	"lidi/engine/keys"
	"lidi/engine/record"
)

// File is config.yaml as read: the engine's keys (engine.Config), and the
// keys only the program reads, each declared once, by its field's yaml
// tag (see package keys). Its zero value is empty; Default returns the
// defaults and Load reads a file over them.
type File struct {
	engine.Config `yaml:",inline"`

	// Anywhere lets the crawl follow links to every host: a crawl of the
	// whole web. A crawl with seeds needs it, or a scope.
	Anywhere    bool          `yaml:"scope.anywhere"`
	MaxDuration time.Duration `yaml:"limits.max_duration" check:">=0"` // 0: no limit
	CAFile      string        `yaml:"fetch.ca_file"`                   // PEM CAs trusted besides the system's
	Proxy       string        `yaml:"fetch.proxy"`                     // "": the environment's
	DNS         dns.Config    `yaml:"dns"`
	StoragePath string        `yaml:"storage.path"`                      // the crawl's SQLite file
	MaxSize     int64         `yaml:"storage.max_size" check:">=0"`      // bytes; 0: no limit
	Refresh     time.Duration `yaml:"console.refresh" check:">0"`        // how often the console polls the crawl's figures
	HeapLimitMB int           `yaml:"memory.heap_limit_mb" check:">=0"`  // MiB; 0: no limit
	HeadroomMB  int           `yaml:"memory.gc_headroom_mb" check:">=0"` // MiB; 0: GOGC's share
	Cluster     Cluster       `yaml:"cluster"`

	rootCAs *x509.CertPool // the system's CAs and fetch.ca_file's, read by Check
	proxy   *url.URL       // fetch.proxy, parsed by Check
}

// Cluster is the cluster section's transport: how the master serves or
// reaches NATS, and which slaves get which sites.
type Cluster struct {
	Listen      string        `yaml:"listen"`   // an embedded NATS server on host:port
	NATSURL     string        `yaml:"nats_url"` // or an existing one
	Token       string        `yaml:"token"`
	NKey        string        `yaml:"nkey"`
	NKeySeed    string        `yaml:"nkey_seed"`
	TLSCert     string        `yaml:"tls_cert"`
	TLSKey      string        `yaml:"tls_key"`
	TLSCA       string        `yaml:"tls_ca"`
	LocalRobots int           `yaml:"local_robots" check:">=0"`
	Heartbeat   time.Duration `yaml:"heartbeat" check:">0"`
	Pins        []ClusterPin  `yaml:"pins"`
}

// ClusterPin is one of cluster.pins: the sites whose host ends with Suffix,
// or whose address is in Addresses (a CIDR prefix), go to the slaves that
// announce Tag.
type ClusterPin struct {
	Suffix    string `yaml:"suffix"`
	Addresses string `yaml:"addresses"`
	Tag       string `yaml:"tag"`
}

// DefaultHeapLimitMB is memory.heap_limit_mb's default: the soft limit, in
// MiB, on the memory the Go runtime holds. Below it the runtime holds
// what is live, DefaultHeadroomMB and a little more (the collector's pace
// sets a lower limit each second under this one); the Go memory grew by
// about 220 MB a million URLs from 1,000,000 to 3,000,000 (lidi bench
// crawl: 295 MB at 1,000,000 URLs, 737 at 3,000,000, 556 of them live), so
// 1536 is reached near 7,000,000 URLs (an extrapolation). Near it the
// headroom shrinks and collections come closer, and at it the runtime caps
// the extra GC work at half the CPU. 256 was reached before 1,000,000
// URLs, where the collector then ran almost without pause and pages/s fell
// by two thirds.
const DefaultHeapLimitMB = 1536

// DefaultHeadroomMB is memory.gc_headroom_mb's default: how far, in MiB,
// the heap may grow beyond what is live before the collector runs, once
// what is live exceeds it (below, twice what is live, GOGC's default). For
// one heap, the collector's cost goes as the inverse of the headroom, and
// peak RSS with the headroom (lidi bench crawl to 1,000,000 URLs, every
// feature on, under load: 128 took 1.8-1.9% of the CPU at a peak of 507-523
// MB; 64 with the smaller SQLite cache 2.6% and 401 MB; 48 2.1% and 378
// MB, and 4.5% over a crawl to 3,000,000 URLs; at load 8-15, 48 took
// 4.3% and peaked at 396 MB, 32 6.8% and 356 MB). Past ten times the
// headroom of live heap (320 MiB, some 1,400,000 URLs) the headroom is a
// tenth of what is live whatever this says (gcpace.MinPercent), so past
// 480 MiB live (some 2,100,000 URLs) a crawl collects as it did with 48;
// between 320 and 480 MiB it collects more often. GOGC=25 (a headroom
// of a quarter of what is live, some 30 MB at 300,000 URLs) took 15%.
const DefaultHeadroomMB = 32

// Default returns the configuration a file with no keys gives.
func Default() *File {
	return &File{
		Config:      engine.Defaults(),
		DNS:         dns.Config{MinTTL: dns.DefaultMinTTL, MaxTTL: dns.DefaultMaxTTL, NegativeTTL: dns.DefaultNegativeTTL, Timeout: dns.DefaultTimeout, HostsFile: "/etc/hosts"},
		StoragePath: "crawl.db",
		Refresh:     250 * time.Millisecond,
		HeapLimitMB: DefaultHeapLimitMB,
		HeadroomMB:  DefaultHeadroomMB,
		Cluster:     Cluster{Heartbeat: cluster.DefaultTiming.Heartbeat},
	}
}

// Load reads path over the defaults and checks the result, and that the
// directory of storage.path exists: it opens no file but path. Relative
// file names in it (storage.path, fetch.ca_file, dns.hosts_file) are
// relative to the directory of path, wherever lidi runs. Its errors are
// *engine.ConfigError naming the file, the line and the key.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	f, lines, err := read(data, filepath.Dir(path))
	if err == nil {
		err = f.Check()
	}
	if err == nil {
		err = f.CheckStorageDir()
	}
	if err != nil {
		return nil, locate(err, path, lines)
	}
	return f, nil
}

// Parse reads a config.yaml body over the defaults and checks the result.
// Relative file names in it are relative to the working directory.
func Parse(data []byte) (*File, error) {
	f, _, err := parse(data)
	return f, err
}

// parse is Parse, with the line of each key written.
func parse(data []byte) (*File, map[string]int, error) {
	f, lines, err := read(data, "")
	if err == nil {
		err = f.Check()
	}
	if err != nil {
		return nil, nil, locate(err, "", lines)
	}
	return f, lines, nil
}

// ParseSettings reads the settings a cluster's master published (its
// configuration, Marshal's) as Parse does, but for the functions the
// crawl file's stored values are made with: a master of before that
// published no dedup.word_hash or storage.digest crawled a file of the
// functions every lidi used before their names were recorded (FNV-1a,
// CRC-64), not of the newest, which a slave would otherwise take.
func ParseSettings(data []byte) (*File, error) {
	f, lines, err := parse(data)
	if err != nil {
		return nil, err
	}
	if _, ok := lines["dedup.word_hash"]; !ok {
		f.WordHash = dedup.WordHashFNV
	}
	if _, ok := lines["storage.digest"]; !ok {
		f.Digest = record.DigestCRC64
	}
	return f, nil
}

// read decodes data over the defaults, unchecked, with file names made
// relative to dir, and returns the line of each key written.
func read(data []byte, dir string) (*File, map[string]int, error) {
	f := Default()
	lines, err := keys.Decode(data, f)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range []*string{&f.StoragePath, &f.CAFile, &f.DNS.HostsFile} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	return f, lines, nil
}

// CheckStorageDir reports a storage.path whose directory is missing, before
// anything tries to create the database (or its lock) there. Load calls it.
func (f *File) CheckStorageDir() error {
	dir := filepath.Dir(f.StoragePath)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &engine.ConfigError{Key: "storage.path", Err: fmt.Errorf("the directory %s does not exist: create it (mkdir -p %s) or write another path", dir, dir)}
	case err != nil:
		return &engine.ConfigError{Key: "storage.path", Err: err}
	case !st.IsDir():
		return &engine.ConfigError{Key: "storage.path", Err: fmt.Errorf("%s is not a directory", dir)}
	}
	return nil
}

// Check validates what the engine does not: storage, DNS servers, the
// console. The engine's own keys are checked by Engine().Validate.
func (f *File) Check() error {
	if err := f.checkScope(); err != nil {
		return err
	}
	if err := keys.Check(f); err != nil {
		return err
	}
	if f.StoragePath == "" {
		return &engine.ConfigError{Key: "storage.path", Err: errors.New("write the crawl's database file, such as crawl.db")}
	}
	for _, s := range f.DNS.Servers {
		if _, _, err := net.SplitHostPort(s); err != nil {
			return &engine.ConfigError{Key: "dns.servers", Err: fmt.Errorf("%q is not host:port: write one such as 192.0.2.53:53", s)}
		}
	}
	if f.DNS.MinTTL > f.DNS.MaxTTL {
		return &engine.ConfigError{Key: "dns.max_ttl", Err: fmt.Errorf("must be at least dns.min_ttl (%s), got %s", f.DNS.MinTTL, f.DNS.MaxTTL)}
	}
	if err := f.checkTLS(); err != nil {
		return err
	}
	if err := f.checkProxy(); err != nil {
		return err
	}
	if err := f.checkCluster(); err != nil {
		return err
	}
	ec := f.Engine()
	return ec.Validate()
}

// checkScope refuses a crawl with seeds but no scope, which would follow
// links to every host: the whole web is crawled only when scope.anywhere
// asks for it.
func (f *File) checkScope() error {
	s := &f.Scope
	scoped := len(s.AllowedHosts) > 0 || len(s.AllowedDomains) > 0 || len(s.Include) > 0
	switch {
	case len(f.Seeds) == 0:
		return nil // the engine's check says what to write
	case f.Anywhere && scoped:
		return &engine.ConfigError{Key: "scope.anywhere", Err: errors.New("true follows links to every host: leave it out, or leave out allowed_hosts, allowed_domains and include")}
	case !f.Anywhere && !scoped:
		return &engine.ConfigError{Key: "scope", Err: errors.New("none: write the hosts the crawl keeps to, such as scope: {allowed_domains: [example.org]} " +
			"(or allowed_hosts, or include patterns), or scope: {anywhere: true} to follow links to every host on the web")}
	}
	return nil
}

// Clustered reports whether the crawl is a cluster's master.
func (f *File) Clustered() bool { return f.Cluster.Listen != "" || f.Cluster.NATSURL != "" }

func (f *File) checkCluster() error {
	c := &f.Cluster
	bad := func(key string, err error) error { return &engine.ConfigError{Key: "cluster." + key, Err: err} }
	if c.Listen != "" && c.NATSURL != "" {
		return bad("nats_url", errors.New("set cluster.listen (an embedded server) or cluster.nats_url (an existing one), not both"))
	}
	if c.Listen != "" {
		if _, _, err := net.SplitHostPort(c.Listen); err != nil {
			return bad("listen", fmt.Errorf("%q is not host:port", c.Listen))
		}
	}
	if c.Token != "" && c.NKey != "" {
		return bad("nkey", errors.New("set a token or an nkey, not both"))
	}
	if c.NKey != "" && !strings.HasPrefix(c.NKey, "U") {
		return bad("nkey", fmt.Errorf("%q is not a user's public nkey (U...)", c.NKey))
	}
	if c.NATSURL != "" && c.NKey != "" && c.NKeySeed == "" {
		return bad("nkey_seed", errors.New("an existing server with an nkey needs the seed file the master signs with"))
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return bad("tls_key", errors.New("tls_cert and tls_key go together"))
	}
	_, err := f.ClusterPins()
	return err
}

// ClusterPins returns cluster.pins as the master applies them.
func (f *File) ClusterPins() ([]cluster.Pin, error) {
	var pins []cluster.Pin
	for i, p := range f.Cluster.Pins {
		key := fmt.Sprintf("cluster.pins[%d]", i)
		if err := cluster.CheckTag(p.Tag); err != nil {
			return nil, &engine.ConfigError{Key: key + ".tag", Err: err}
		}
		pin := cluster.Pin{Suffix: p.Suffix, Tag: p.Tag}
		if p.Addresses != "" {
			pfx, err := netip.ParsePrefix(p.Addresses)
			if err != nil {
				return nil, &engine.ConfigError{Key: key + ".addresses", Err: err}
			}
			pin.Prefix = pfx
		}
		if pin.Suffix == "" && !pin.Prefix.IsValid() {
			return nil, &engine.ConfigError{Key: key, Err: errors.New("needs a suffix or addresses")}
		}
		pins = append(pins, pin)
	}
	return pins, nil
}

// Engine returns the engine's configuration: the engine's keys, with the
// CAs of fetch.ca_file and the proxy of fetch.proxy (or the environment's)
// that Check read.
func (f *File) Engine() engine.Config {
	c := f.Config
	c.Fetch.RootCAs = f.rootCAs
	c.Fetch.Proxy = http.ProxyFromEnvironment
	if f.proxy != nil {
		c.Fetch.Proxy = http.ProxyURL(f.proxy)
	}
	return c
}

// Marshal writes f's keys as YAML, one dotted key a line, which Load and
// Parse read back.
func (f *File) Marshal() ([]byte, error) { return keys.Marshal(f) }

// locate gives err the file and the line of its key.
func locate(err error, file string, lines map[string]int) error {
	var ce *engine.ConfigError
	if !errors.As(err, &ce) {
		if file == "" {
			return fmt.Errorf("config: %w", err)
		}
		return fmt.Errorf("config: %s: %w", file, err)
	}
	keys.Locate(err, file, lines)
	return err
}
