package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"lidi/engine"
	"lidi/engine/frontier"
	"lidi/engine/keys"
)

// The documented config.yaml must give exactly the defaults: it is the
// reference users read. It names no seed, so that lidi run in the checkout
// crawls nothing until told what to crawl.
func TestDocumentedConfigIsTheDefaults(t *testing.T) {
	data, err := os.ReadFile("../../config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f, lines, err := read(data, "")
	if err != nil {
		t.Fatal(err)
	}
	// Every key is written in it, with its default; drop_params's default
	// (a built-in list) cannot be written, so it is shown in a comment.
	for _, k := range keys.Of(reflect.TypeFor[File]()) {
		if lines[k.Name] == 0 && !(k.Name == "urls.drop_params" && strings.Contains(string(data), "\n  # drop_params: [")) {
			t.Errorf("config.yaml does not document %s", k.Name)
		}
	}
	for _, name := range frontier.StrategyNames() {
		if !strings.Contains(string(data), `"`+name+`"`) {
			t.Errorf("config.yaml does not describe the strategy %q", name)
		}
	}
	emptyToNil(reflect.ValueOf(f).Elem())
	if want := Default(); !reflect.DeepEqual(f, want) {
		t.Errorf("config.yaml differs from the defaults:\n got %+v\nwant %+v", f, want)
	}
	// Given seeds and a scope, it is a config the engine takes.
	_, err = Parse(append(data, "\nseeds: [https://www.example.org/]\n"...))
	var ce *engine.ConfigError
	if !errors.As(err, &ce) || ce.Key != "seeds" || ce.Line == 0 {
		t.Errorf("config.yaml with a second seeds key: %v, want an error naming seeds and its line", err)
	}
	withSeed := strings.Replace(string(data), "\nseeds: []\n", "\nseeds: [https://www.example.org/]\n", 1)
	withScope := strings.Replace(withSeed, "\n  allowed_domains: []\n", "\n  allowed_domains: [example.org]\n", 1)
	if withScope == withSeed || withSeed == string(data) {
		t.Fatal("config.yaml lost its seeds: [] or its scope.allowed_domains: [] line")
	}
	if _, err := Parse([]byte(withScope)); err != nil {
		t.Errorf("config.yaml with a seed and a scope: %v", err)
	}
}

// Bare lidi in the checkout reads the shipped config.yaml: it must refuse to
// start, saying to write seeds and a scope; with seeds and no scope it must
// refuse too; the whole web only when scope.anywhere says so.
func TestNoSurpriseCrawl(t *testing.T) {
	_, err := Load("../../config.yaml")
	var ce *engine.ConfigError
	if !errors.As(err, &ce) || ce.Key != "seeds" || !strings.Contains(err.Error(), "seeds: [https://") || !strings.Contains(err.Error(), "scope") {
		t.Errorf("the shipped config.yaml: %v, want a refusal that says to write seeds and a scope", err)
	}
	for _, tc := range []struct {
		yaml, key string // key "": accepted
	}{
		{"seeds: [https://a.test/]\n", "scope"},
		{"seeds: [https://a.test/]\nscope: {max_depth: 3, exclude: [x]}\n", "scope"},
		{"seeds: [https://a.test/]\nscope: {anywhere: true}\n", ""},
		{"seeds: [https://a.test/]\nscope: {allowed_hosts: [a.test]}\n", ""},
		{"seeds: [https://a.test/]\nscope: {allowed_domains: [a.test]}\n", ""},
		{"seeds: [https://a.test/]\nscope: {include: ['^https://a\\.test/']}\n", ""},
		{"seeds: [https://a.test/]\nscope: {anywhere: true, allowed_domains: [a.test]}\n", "scope.anywhere"},
	} {
		_, err := Parse([]byte(tc.yaml))
		switch {
		case tc.key == "" && err != nil:
			t.Errorf("%q: %v", tc.yaml, err)
		case tc.key != "" && (!errors.As(err, &ce) || ce.Key != tc.key):
			t.Errorf("%q: %v, want an error naming %s", tc.yaml, err, tc.key)
		}
	}
}

// emptyToNil makes the empty lists written "[]" in config.yaml compare equal
// to the defaults' nil ones.
func emptyToNil(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			emptyToNil(v.Field(i))
		}
	case reflect.Slice:
		if v.Len() == 0 {
			v.Set(reflect.Zero(v.Type()))
		}
	}
}

func TestBadConfigNamesTheKey(t *testing.T) {
	tests := []struct {
		yaml string
		key  string
	}{
		{"robots: 10\n", "seeds"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\nrobots: 0\n", "robots"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\npoliteness:\n  delay: -1s\n", "politeness.delay"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\npoliteness:\n  delay: soon\n", "politeness.delay"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\npoliteness:\n  pages_per_connection: 0\n", "politeness.pages_per_connection"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\npolitenes:\n  delay: 1s\n", "politenes"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\npoliteness:\n  dealy: 1s\n", "dealy"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\ndns:\n  servers: [127.0.0.1]\n", "dns.servers"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\nrobots_txt:\n  ttl: 48h\n", "robots_txt.ttl"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\nstorage:\n  path: \"\"\n", "storage.path"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\nrobots: [1, 2]\n", "robots"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\nmemory:\n  heap_limit_mb: -1\n", "memory.heap_limit_mb"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\npagerank:\n  every_pages: 0\n", "pagerank.every_pages"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\npagerank:\n  every: -1s\n", "pagerank.every"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\npagerank:\n  store_every: -1m\n", "pagerank.store_every"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\npagerank:\n  batch_pages: 0\n", "pagerank.batch_pages"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\npagerank:\n  evry: 1s\n", "evry"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\nstrategy: optimal\n", "strategy"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\nstrategy: pagerank\n", "strategy"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\nrecrawl:\n  enabled: true\n  policy: often\n", "recrawl.policy"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\nrecrawl:\n  enabled: true\n  initial_interval: 0s\n", "recrawl.initial_interval"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\nrecrawl:\n  enabled: true\n  channels: [{host: a.test, prefixes: [news]}]\n", "recrawl.channels"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\nrecrawl:\n  enabled: true\n  encourage: 2\n", "recrawl.encourage"},
		{"seeds: [http://a.test/\n", "line"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\ncluster:\n  listen: 4222\n", "cluster.listen"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\ncluster:\n  listen: :4222\n  nats_url: nats://x:4222\n", "cluster.nats_url"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\ncluster:\n  listen: :4222\n  token: t\n  nkey: UABC\n", "cluster.nkey"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\ncluster:\n  listen: :4222\n  nkey: SABC\n", "cluster.nkey"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\ncluster:\n  nats_url: nats://x:4222\n  nkey: UABC\n", "cluster.nkey_seed"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\ncluster:\n  listen: :4222\n  tls_cert: c.pem\n", "cluster.tls_key"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\ncluster:\n  local_robots: -1\n", "cluster.local_robots"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\ncluster:\n  heartbeat: 0s\n", "cluster.heartbeat"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\ncluster:\n  pins: [{suffix: .fr, tag: 'e u'}]\n", "cluster.pins[0].tag"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\ncluster:\n  pins: [{addresses: 10.0.0.0, tag: lan}]\n", "cluster.pins[0].addresses"},
		{"seeds: [http://a.test/]\nscope: {anywhere: true}\ncluster:\n  pins: [{tag: lan}]\n", "cluster.pins[0]"},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.yaml))
		if err == nil {
			t.Errorf("%q: accepted", tt.yaml)
			continue
		}
		if !strings.Contains(err.Error(), tt.key) {
			t.Errorf("%q: error %q does not name %q", tt.yaml, err, tt.key)
		}
	}
}

func TestConfigErrorIsTyped(t *testing.T) {
	_, err := Parse([]byte("seeds: [http://a.test/]\nscope: {anywhere: true}\nrobots: -3\n"))
	var ce *engine.ConfigError
	if !errors.As(err, &ce) || ce.Key != "robots" {
		t.Fatalf("err = %v, want a ConfigError for robots", err)
	}
}

func TestOverrides(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	body := "seeds: [http://a.test/]\nscope: {anywhere: true}\nrobots: 8\npoliteness:\n  delay: 250ms\n  pages_per_connection: 10\nlimits:\n  max_pages: 500\nstorage:\n  path: x.db\ndns:\n  servers: [\"127.0.0.1:5353\"]\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	e := f.Engine()
	if e.Robots != 8 || e.Delay != 250*time.Millisecond || e.PagesPerVisit != 10 || e.MaxPages != 500 {
		t.Errorf("engine config = %+v", e)
	}
	if e.MaxDelay != 60*time.Second || !e.PerAddress {
		t.Errorf("defaults lost: %+v", e)
	}
	if f.StoragePath != filepath.Join(dir, "x.db") || f.DNS.Servers[0] != "127.0.0.1:5353" {
		t.Errorf("file = %+v", f)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Error("missing file accepted")
	}
}

// Relative file names are relative to the config file, wherever lidi runs;
// absolute ones are kept.
func TestRelativePaths(t *testing.T) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "certs", "ca.pem")
	os.MkdirAll(filepath.Dir(ca), 0o755)
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	if err := os.WriteFile(ca, selfSignedPEM(t), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		storage, want string
	}{
		{"crawl.db", filepath.Join(dir, "crawl.db")},
		{"data/site.db", filepath.Join(dir, "data", "site.db")},
		{"/var/tmp/abs.db", "/var/tmp/abs.db"},
	} {
		path := filepath.Join(dir, "site.yaml")
		body := "seeds: [https://a.test/]\nscope: {anywhere: true}\nstorage:\n  path: " + tc.storage + "\nfetch:\n  ca_file: certs/ca.pem\ndns:\n  hosts_file: hosts\n"
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if f.StoragePath != tc.want {
			t.Errorf("storage.path %q: got %q, want %q", tc.storage, f.StoragePath, tc.want)
		}
		if f.CAFile != ca || f.DNS.HostsFile != filepath.Join(dir, "hosts") {
			t.Errorf("ca_file %q, hosts_file %q", f.CAFile, f.DNS.HostsFile)
		}
		if f.Engine().Fetch.RootCAs == nil {
			t.Error("fetch.ca_file read but no CA pool given to the fetcher")
		}
	}
}

// fetch.proxy and fetch.ca_file: bad values name their key.
func TestNetworkKeys(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	os.WriteFile(notPEM, []byte("hello"), 0o644)
	for _, tc := range []struct {
		yaml, key string // key "": accepted
	}{
		{"fetch:\n  proxy: http://127.0.0.1:3128\n", ""},
		{"fetch:\n  proxy: socks5://127.0.0.1:1080\n", ""},
		{"fetch:\n  proxy: ftp://127.0.0.1:21\n", "fetch.proxy"},
		{"fetch:\n  proxy: http://\n", "fetch.proxy"},
		{"fetch:\n  ca_file: " + filepath.Join(dir, "missing.pem") + "\n", "fetch.ca_file"},
		{"fetch:\n  ca_file: " + notPEM + "\n", "fetch.ca_file"},
	} {
		f, err := Parse([]byte("seeds: [https://a.test/]\nscope: {anywhere: true}\n" + tc.yaml))
		var ce *engine.ConfigError
		switch {
		case tc.key == "" && err != nil:
			t.Errorf("%q: %v", tc.yaml, err)
		case tc.key == "" && f.Engine().Fetch.Proxy == nil:
			t.Errorf("%q: no proxy function", tc.yaml)
		case tc.key != "" && (!errors.As(err, &ce) || ce.Key != tc.key):
			t.Errorf("%q: err %v, want one for %s", tc.yaml, err, tc.key)
		}
	}
}

// selfSignedPEM returns a new self-signed CA certificate in PEM.
func selfSignedPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "config test CA"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// A bad value's error names the file, the line and the key, says what to
// write, and carries no package's prefix but its own.
func TestErrorsSayWhatToWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "site.yaml")
	const head = "seeds: [https://www.example.org/]\nscope:\n  allowed_domains: [example.org]\n"
	for _, tc := range []struct {
		yaml, want string // want: the message after "config: PATH:"
	}{
		{"politeness:\n  delay: 5\n", `5: politeness.delay: write a duration such as 5s or 200ms (got "5", a number without a unit)`},
		{"politeness:\n  delay: soon\n", `5: politeness.delay: write a duration such as 5s or 200ms (got "soon")`},
		{"politeness:\n  delay:\n", `5: politeness.delay: write a duration such as 5s or 200ms (got nothing)`},
		{"robots: many\n", `4: robots: write a whole number such as 10 (got "many")`},
		{"dedup:\n  enabled: maybe\n", `5: dedup.enabled: write true or false (got "maybe")`},
		{"recrawl:\n  rate_cap: high\n", `5: recrawl.rate_cap: write a number such as 0.5 (got "high")`},
		{"dns:\n  servers: 127.0.0.1:53\n", `5: dns.servers: write a list such as [a, b], or one item per line after "- " (got "127.0.0.1:53")`},
		{"politeness: 5s\n", `4: politeness: write its keys on the lines below it, indented: delay, max_delay, pages_per_connection, one_per_address (got "5s")`},
		{"politeness:\n  dealy: 5s\n", `5: politeness.dealy: unknown key: the keys of politeness are delay, max_delay, pages_per_connection, one_per_address`},
		{"robots: 4\nrobots: 5\n", `5: robots: written twice (first on line 4): keep one`},
		{"cluster:\n  pins:\n    - {suffix: .fr, tga: eu}\n", `6: cluster.pins[0].tga: unknown key: the keys of cluster.pins[0] are suffix, addresses, tag`},
		{"robots: 0\n", `4: robots: must be at least 1, got 0`},
		{"seeds: [example.org]\n", `4: seeds[0]: "example.org": relative reference without a base URL: write an absolute http or https URL such as https://www.example.org/`},
		{"storage:\n  path: nowhere/crawl.db\n", `5: storage.path: the directory ` + filepath.Join(dir, "nowhere") + ` does not exist: create it (mkdir -p ` + filepath.Join(dir, "nowhere") + `) or write another path`},
		{"politeness:\n\tdelay: 5s\n", `5: not YAML: found character that cannot start any token`},
	} {
		body := head + tc.yaml
		if strings.HasPrefix(tc.yaml, "seeds:") {
			body = strings.Replace(head, "seeds: [https://www.example.org/]\n", "robots: 4\n", 1) + tc.yaml
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if want := "config: " + path + ":" + tc.want; err == nil || err.Error() != want {
			t.Errorf("%q:\n got %v\nwant %s", tc.yaml, err, want)
		}
	}
}

// What Marshal writes (the master's settings for its slaves, bench chaos's
// configs), Parse reads back the same.
func TestMarshalRoundTrip(t *testing.T) {
	f, err := Parse([]byte("seeds: [https://www.example.org/]\nscope: {allowed_domains: [example.org], exclude: ['\\?a=b: c']}\n" +
		"recrawl: {enabled: true, channels: [{host: www.example.org, prefixes: [/news/], max_depth: 2}]}\ncluster: {pins: [{suffix: .fr, tag: eu}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(data)
	if err != nil || !reflect.DeepEqual(back, f) {
		t.Errorf("%s\n got %#v, %v\nwant %#v", data, back, err, f)
	}
}
