package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"lidi/engine"
)

// The documented config.yaml must give exactly the defaults (but for its
// example seed): it is the reference users read.
func TestDocumentedConfigIsTheDefaults(t *testing.T) {
	f, err := Load("../../config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Seeds = f.Seeds
	emptyToNil(reflect.ValueOf(f).Elem())
	if !reflect.DeepEqual(f, want) {
		t.Errorf("config.yaml differs from the defaults:\n got %+v\nwant %+v", f, want)
	}
	if ec := f.Engine(); ec.Validate() != nil {
		err := ec.Validate()
		t.Error(err)
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
		{"seeds: [http://a.test/]\nrobots: 0\n", "robots"},
		{"seeds: [http://a.test/]\npoliteness:\n  delay: -1s\n", "politeness.delay"},
		{"seeds: [http://a.test/]\npoliteness:\n  delay: soon\n", "politeness.delay"},
		{"seeds: [http://a.test/]\npoliteness:\n  pages_per_connection: 0\n", "politeness.pages_per_connection"},
		{"seeds: [http://a.test/]\npolitenes:\n  delay: 1s\n", "politenes"},
		{"seeds: [http://a.test/]\npoliteness:\n  dealy: 1s\n", "dealy"},
		{"seeds: [http://a.test/]\ndns:\n  servers: [127.0.0.1]\n", "dns.servers"},
		{"seeds: [http://a.test/]\nrobots_txt:\n  ttl: 48h\n", "robots_txt.ttl"},
		{"seeds: [http://a.test/]\nstorage:\n  path: \"\"\n", "storage.path"},
		{"seeds: [http://a.test/]\nrobots: [1, 2]\n", "robots"},
		{"seeds: [http://a.test/]\nmemory:\n  heap_limit_mb: -1\n", "memory.heap_limit_mb"},
		{"seeds: [http://a.test/]\npagerank:\n  every_pages: 0\n", "pagerank.every_pages"},
		{"seeds: [http://a.test/]\npagerank:\n  every: -1s\n", "pagerank.every"},
		{"seeds: [http://a.test/]\npagerank:\n  store_every: -1m\n", "pagerank.store_every"},
		{"seeds: [http://a.test/]\npagerank:\n  batch_pages: 0\n", "pagerank.batch_pages"},
		{"seeds: [http://a.test/]\npagerank:\n  evry: 1s\n", "evry"},
		{"seeds: [http://a.test/]\nstrategy: optimal\n", "strategy"},
		{"seeds: [http://a.test/]\nstrategy: pagerank\n", "strategy"},
		{"seeds: [http://a.test/\n", "line"},
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
	_, err := Parse([]byte("seeds: [http://a.test/]\nrobots: -3\n"))
	var ce *engine.ConfigError
	if !errors.As(err, &ce) || ce.Key != "robots" {
		t.Fatalf("err = %v, want a ConfigError for robots", err)
	}
}

func TestOverrides(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	body := "seeds: [http://a.test/]\nrobots: 8\npoliteness:\n  delay: 250ms\n  pages_per_connection: 10\nlimits:\n  max_pages: 500\nstorage:\n  path: x.db\ndns:\n  servers: [\"127.0.0.1:5353\"]\n"
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
	if f.Storage.Path != "x.db" || f.DNSConfig().Servers[0] != "127.0.0.1:5353" {
		t.Errorf("file = %+v", f)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Error("missing file accepted")
	}
}
