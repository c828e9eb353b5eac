// Package config reads lidi's config.yaml. Every key has a default (the
// config.yaml at the top of the repository documents them all); a file need
// only name what it changes. Unknown keys and bad values are errors that name
// the key.
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
	"lidi/engine/dns"
	"lidi/engine/fetch"
)

// File is config.yaml as read. Its zero value is empty; Default returns the
// defaults and Load reads a file over them.
type File struct {
	Seeds     []string `yaml:"seeds"`
	UserAgent string   `yaml:"user_agent"`
	Strategy  string   `yaml:"strategy"`
	Robots    int      `yaml:"robots"`

	Politeness struct {
		Delay              time.Duration `yaml:"delay"`
		MaxDelay           time.Duration `yaml:"max_delay"`
		PagesPerConnection int           `yaml:"pages_per_connection"`
		OnePerAddress      bool          `yaml:"one_per_address"`
	} `yaml:"politeness"`

	Limits struct {
		MaxPages    int64         `yaml:"max_pages"`
		MaxDuration time.Duration `yaml:"max_duration"`
	} `yaml:"limits"`

	Scope struct {
		AllowedHosts   []string `yaml:"allowed_hosts"`
		AllowedDomains []string `yaml:"allowed_domains"`
		Include        []string `yaml:"include"`
		Exclude        []string `yaml:"exclude"`
		MaxDepth       int      `yaml:"max_depth"`
		Anywhere       bool     `yaml:"anywhere"`
	} `yaml:"scope"`

	URLs struct {
		DropParams []string `yaml:"drop_params"`
		SortQuery  bool     `yaml:"sort_query"`
	} `yaml:"urls"`

	Fetch struct {
		ConnectTimeout time.Duration `yaml:"connect_timeout"`
		HeaderTimeout  time.Duration `yaml:"header_timeout"`
		BodyTimeout    time.Duration `yaml:"body_timeout"`
		CloseTimeout   time.Duration `yaml:"close_timeout"`
		MaxBodySize    int64         `yaml:"max_body_size"`
		MaxRedirects   int           `yaml:"max_redirects"`
		CAFile         string        `yaml:"ca_file"`
		Proxy          string        `yaml:"proxy"`
	} `yaml:"fetch"`

	RobotsTxt struct {
		TTL      time.Duration `yaml:"ttl"`
		Retry    time.Duration `yaml:"retry"`
		Nofollow bool          `yaml:"nofollow"`
		Meta     bool          `yaml:"meta"`
	} `yaml:"robots_txt"`

	Errors struct {
		ParkAfter  int           `yaml:"park_after"`
		ParkFor    time.Duration `yaml:"park_for"`
		ParkRounds int           `yaml:"park_rounds"`
		Backoff    time.Duration `yaml:"backoff"`
		BackoffMax time.Duration `yaml:"backoff_max"`
	} `yaml:"errors"`

	DNS struct {
		Servers     []string      `yaml:"servers"`
		MinTTL      time.Duration `yaml:"min_ttl"`
		MaxTTL      time.Duration `yaml:"max_ttl"`
		NegativeTTL time.Duration `yaml:"negative_ttl"`
		Timeout     time.Duration `yaml:"timeout"`
		Parallel    int           `yaml:"parallel"`
		Retry       time.Duration `yaml:"retry"`
		HostsFile   string        `yaml:"hosts_file"`
	} `yaml:"dns"`

	Dedup struct {
		Enabled        bool `yaml:"enabled"`
		MaxHamming     int  `yaml:"max_hamming"`
		MirrorEvidence int  `yaml:"mirror_evidence"`
	} `yaml:"dedup"`

	PageRank struct {
		Enabled    bool          `yaml:"enabled"`
		EveryPages int           `yaml:"every_pages"`
		Every      time.Duration `yaml:"every"`
		StoreEvery time.Duration `yaml:"store_every"`
		BatchPages int           `yaml:"batch_pages"`
	} `yaml:"pagerank"`

	Storage struct {
		Path          string        `yaml:"path"`
		KeepBodies    bool          `yaml:"keep_bodies"`
		KeepHeaders   bool          `yaml:"keep_headers"`
		CompressLevel int           `yaml:"compress_level"`
		FlushInterval time.Duration `yaml:"flush_interval"`
		FlushRecords  int           `yaml:"flush_records"`
		MaxSize       int64         `yaml:"max_size"`
	} `yaml:"storage"`

	Recrawl Recrawl `yaml:"recrawl"`

	Console struct {
		Refresh time.Duration `yaml:"refresh"`
	} `yaml:"console"`

	Memory struct {
		HeapLimitMB int `yaml:"heap_limit_mb"`
	} `yaml:"memory"`

	Cluster struct {
		Listen      string        `yaml:"listen"`
		NATSURL     string        `yaml:"nats_url"`
		Token       string        `yaml:"token"`
		NKey        string        `yaml:"nkey"`
		NKeySeed    string        `yaml:"nkey_seed"`
		TLSCert     string        `yaml:"tls_cert"`
		TLSKey      string        `yaml:"tls_key"`
		TLSCA       string        `yaml:"tls_ca"`
		LocalRobots int           `yaml:"local_robots"`
		Heartbeat   time.Duration `yaml:"heartbeat"`
		LeaseSlack  time.Duration `yaml:"lease_slack"`
		LeaseGrace  time.Duration `yaml:"lease_grace"`
		Pins        []ClusterPin  `yaml:"pins"`
	} `yaml:"cluster"`

	rootCAs *x509.CertPool // the system's CAs and fetch.ca_file's, read by Check
	proxy   *url.URL       // fetch.proxy, parsed by Check
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
// MiB, on the memory the Go runtime holds. Without it the collector lets the
// heap grow to twice what is live, which on a crawl that knows 1,000,000 URLs
// (about 200 MB live) is the difference between 400 and 580 MB of RSS; near
// the limit it collects more often instead, and a live set larger than the
// limit still runs (the runtime caps the extra GC work at half the CPU).
const DefaultHeapLimitMB = 256

// Default returns the configuration a file with no keys gives.
func Default() *File {
	d := engine.Defaults()
	f := &File{UserAgent: d.UserAgent, Strategy: d.Strategy, Robots: d.Robots}
	f.Politeness.Delay = d.Delay
	f.Politeness.MaxDelay = d.MaxDelay
	f.Politeness.PagesPerConnection = d.PagesPerVisit
	f.Politeness.OnePerAddress = d.PerAddress
	f.Fetch.ConnectTimeout = 10 * time.Second
	f.Fetch.HeaderTimeout = 15 * time.Second
	f.Fetch.BodyTimeout = 60 * time.Second
	f.Fetch.CloseTimeout = fetch.DefaultCloseTimeout
	f.Fetch.MaxBodySize = 10 << 20
	f.Fetch.MaxRedirects = d.MaxRedirects
	f.RobotsTxt.TTL = d.RobotsTTL
	f.RobotsTxt.Retry = d.RobotsRetry
	f.RobotsTxt.Nofollow = d.HonourNofollow
	f.RobotsTxt.Meta = d.HonourMetaRobots
	f.Errors.ParkAfter = d.ParkAfter
	f.Errors.ParkFor = d.ParkFor
	f.Errors.ParkRounds = d.ParkRounds
	f.Errors.Backoff = d.BackoffBase
	f.Errors.BackoffMax = d.BackoffMax
	f.DNS.MinTTL = 60 * time.Second
	f.DNS.MaxTTL = 24 * time.Hour
	f.DNS.NegativeTTL = 30 * time.Second
	f.DNS.Timeout = 2 * time.Second
	f.DNS.Parallel = d.ResolveAhead
	f.DNS.Retry = d.ResolveFailed
	f.DNS.HostsFile = "/etc/hosts"
	f.Dedup.Enabled = d.Detect
	f.Dedup.MaxHamming = d.MaxHamming
	f.Dedup.MirrorEvidence = d.MirrorEvidence
	f.PageRank.Enabled = d.Rank
	f.PageRank.EveryPages = d.RankEveryPages
	f.PageRank.Every = d.RankEvery
	f.PageRank.StoreEvery = d.RankStoreEvery
	f.PageRank.BatchPages = d.RankBatch
	f.Storage.Path = "crawl.db"
	f.Storage.KeepBodies = d.KeepBodies
	f.Storage.KeepHeaders = d.KeepHeaders
	f.Storage.CompressLevel = d.CompressLevel
	f.Storage.FlushInterval = d.FlushEvery
	f.Storage.FlushRecords = d.FlushRecords
	f.Recrawl = recrawlFile(d.Recrawl)
	f.Console.Refresh = 250 * time.Millisecond
	f.Memory.HeapLimitMB = DefaultHeapLimitMB
	f.Cluster.Heartbeat = cluster.DefaultTiming.Heartbeat
	f.Cluster.LeaseSlack = d.LeaseSlack
	f.Cluster.LeaseGrace = d.LeaseGrace
	return f
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
	f, lines, err := read(data, "")
	if err == nil {
		err = f.Check()
	}
	if err != nil {
		return nil, locate(err, "", lines)
	}
	return f, nil
}

// read decodes data over the defaults, unchecked, with file names made
// relative to dir, and returns the line of each key written.
func read(data []byte, dir string) (*File, map[string]int, error) {
	f := Default()
	lines, err := decode(data, f)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range []*string{&f.Storage.Path, &f.Fetch.CAFile, &f.DNS.HostsFile} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	return f, lines, nil
}

// CheckStorageDir reports a storage.path whose directory is missing, before
// anything tries to create the database (or its lock) there. Load calls it.
func (f *File) CheckStorageDir() error {
	dir := filepath.Dir(f.Storage.Path)
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
	if f.Storage.Path == "" {
		return &engine.ConfigError{Key: "storage.path", Err: errors.New("must not be empty")}
	}
	if f.Limits.MaxDuration < 0 {
		return &engine.ConfigError{Key: "limits.max_duration", Err: fmt.Errorf("must not be negative, got %s", f.Limits.MaxDuration)}
	}
	for _, s := range f.DNS.Servers {
		if _, _, err := net.SplitHostPort(s); err != nil {
			return &engine.ConfigError{Key: "dns.servers", Err: fmt.Errorf("%q is not host:port", s)}
		}
	}
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"dns.min_ttl", f.DNS.MinTTL}, {"dns.max_ttl", f.DNS.MaxTTL}, {"dns.negative_ttl", f.DNS.NegativeTTL}, {"dns.timeout", f.DNS.Timeout}} {
		if d.v < 0 {
			return &engine.ConfigError{Key: d.key, Err: fmt.Errorf("must not be negative, got %s", d.v)}
		}
	}
	if f.DNS.MinTTL > f.DNS.MaxTTL {
		return &engine.ConfigError{Key: "dns.max_ttl", Err: fmt.Errorf("must be at least dns.min_ttl (%s), got %s", f.DNS.MinTTL, f.DNS.MaxTTL)}
	}
	if f.Console.Refresh <= 0 {
		return &engine.ConfigError{Key: "console.refresh", Err: fmt.Errorf("must be positive, got %s", f.Console.Refresh)}
	}
	if f.Storage.MaxSize < 0 {
		return &engine.ConfigError{Key: "storage.max_size", Err: fmt.Errorf("must not be negative, got %d", f.Storage.MaxSize)}
	}
	if f.Memory.HeapLimitMB < 0 {
		return &engine.ConfigError{Key: "memory.heap_limit_mb", Err: fmt.Errorf("must not be negative, got %d", f.Memory.HeapLimitMB)}
	}
	if f.Fetch.MaxBodySize <= 0 {
		return &engine.ConfigError{Key: "fetch.max_body_size", Err: fmt.Errorf("must be positive, got %d", f.Fetch.MaxBodySize)}
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
	case s.Anywhere && scoped:
		return &engine.ConfigError{Key: "scope.anywhere", Err: errors.New("true follows links to every host: leave it out, or leave out allowed_hosts, allowed_domains and include")}
	case !s.Anywhere && !scoped:
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
	if c.LocalRobots < 0 {
		return bad("local_robots", fmt.Errorf("must not be negative, got %d", c.LocalRobots))
	}
	if c.Heartbeat <= 0 {
		return bad("heartbeat", fmt.Errorf("must be positive, got %s", c.Heartbeat))
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

// Engine returns the engine's part of the configuration.
func (f *File) Engine() engine.Config {
	c := engine.Defaults()
	c.Seeds = f.Seeds
	c.UserAgent = f.UserAgent
	c.Strategy = f.Strategy
	c.Robots = f.Robots
	c.Delay = f.Politeness.Delay
	c.MaxDelay = f.Politeness.MaxDelay
	c.PagesPerVisit = f.Politeness.PagesPerConnection
	c.PerAddress = f.Politeness.OnePerAddress
	c.MaxPages = f.Limits.MaxPages
	c.Scope.AllowedHosts = f.Scope.AllowedHosts
	c.Scope.AllowedDomains = f.Scope.AllowedDomains
	c.Scope.Include = f.Scope.Include
	c.Scope.Exclude = f.Scope.Exclude
	c.Scope.MaxDepth = f.Scope.MaxDepth
	if f.URLs.DropParams != nil {
		c.Normalizer.DropParams = f.URLs.DropParams
	}
	c.Normalizer.SortQuery = f.URLs.SortQuery
	c.Fetch.UserAgent = f.UserAgent
	c.Fetch.ConnectTimeout = f.Fetch.ConnectTimeout
	c.Fetch.HeaderTimeout = f.Fetch.HeaderTimeout
	c.Fetch.BodyTimeout = f.Fetch.BodyTimeout
	c.Fetch.CloseTimeout = f.Fetch.CloseTimeout
	c.Fetch.MaxBodySize = f.Fetch.MaxBodySize
	c.Fetch.RootCAs = f.rootCAs
	c.Fetch.Proxy = http.ProxyFromEnvironment
	if f.proxy != nil {
		c.Fetch.Proxy = http.ProxyURL(f.proxy)
	}
	c.MaxRedirects = f.Fetch.MaxRedirects
	c.RobotsTTL = f.RobotsTxt.TTL
	c.RobotsRetry = f.RobotsTxt.Retry
	c.HonourNofollow = f.RobotsTxt.Nofollow
	c.HonourMetaRobots = f.RobotsTxt.Meta
	c.ParkAfter = f.Errors.ParkAfter
	c.ParkFor = f.Errors.ParkFor
	c.ParkRounds = f.Errors.ParkRounds
	c.BackoffBase = f.Errors.Backoff
	c.BackoffMax = f.Errors.BackoffMax
	c.Detect = f.Dedup.Enabled
	c.MaxHamming = f.Dedup.MaxHamming
	c.MirrorEvidence = f.Dedup.MirrorEvidence
	c.Rank = f.PageRank.Enabled
	c.RankEveryPages = f.PageRank.EveryPages
	c.RankEvery = f.PageRank.Every
	c.RankStoreEvery = f.PageRank.StoreEvery
	c.RankBatch = f.PageRank.BatchPages
	c.KeepBodies = f.Storage.KeepBodies
	c.KeepHeaders = f.Storage.KeepHeaders
	c.CompressLevel = f.Storage.CompressLevel
	c.FlushEvery = f.Storage.FlushInterval
	c.FlushRecords = f.Storage.FlushRecords
	c.ResolveAhead = f.DNS.Parallel
	c.ResolveFailed = f.DNS.Retry
	c.LeaseSlack = f.Cluster.LeaseSlack
	c.LeaseGrace = f.Cluster.LeaseGrace
	c.Recrawl = f.Recrawl.engine()
	return c
}

// DNSConfig returns the DNS cache's part of the configuration.
func (f *File) DNSConfig() dns.Config {
	return dns.Config{Servers: f.DNS.Servers, HostsFile: f.DNS.HostsFile, MinTTL: f.DNS.MinTTL, MaxTTL: f.DNS.MaxTTL, NegativeTTL: f.DNS.NegativeTTL, Timeout: f.DNS.Timeout}
}
