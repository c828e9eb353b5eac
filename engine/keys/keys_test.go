package keys

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

type pin struct {
	Suffix string `yaml:"suffix"`
	Tag    string `yaml:"tag"`
}

type fetchConf struct {
	Timeout time.Duration `yaml:"timeout" check:">0"`
	Agent   string        // not a key
}

type inner struct {
	Filters  []string `yaml:"filters"`
	MaxDepth int      `yaml:"max_depth" check:">=0"`
}

// mode is a key whose values are names.
type mode uint8

func (m mode) MarshalText() ([]byte, error) { return []byte([]string{"seeds", "all", "off"}[m]), nil }

func (m *mode) UnmarshalText(b []byte) error {
	for i, name := range []string{"seeds", "all", "off"} {
		if string(b) == name {
			*m = mode(i)
			return nil
		}
	}
	return errors.New("write seeds, all or off")
}

type conf struct {
	Robots   int           `yaml:"robots" check:">=1"`
	Delay    time.Duration `yaml:"politeness.delay" check:">=0"`
	Level    int           `yaml:"storage.level" check:"1..9"`
	TTL      time.Duration `yaml:"robots_txt.ttl" check:">0,<=24h"`
	Rate     float64       `yaml:"rate" check:">=0"`
	Fetch    fetchConf     `yaml:"fetch"`
	Redirect int           `yaml:"fetch.max_redirects"`
	Scope    inner         `yaml:",inline"`
	Pins     []pin         `yaml:"cluster.pins"`
	On       bool          `yaml:"on"`
	Mode     mode          `yaml:"sitemaps.read"`
	Oracle   any           // not a key
}

func defaults() conf {
	return conf{Robots: 4, Delay: time.Second, Level: 1, TTL: time.Hour, Fetch: fetchConf{Timeout: time.Second, Agent: "x"}, Redirect: 5}
}

func TestOf(t *testing.T) {
	var names []string
	for _, k := range Of(reflect.TypeFor[conf]()) {
		names = append(names, k.Name)
	}
	want := "robots politeness.delay storage.level robots_txt.ttl rate fetch.timeout fetch.max_redirects filters max_depth cluster.pins on sitemaps.read"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("keys\n got %s\nwant %s", got, want)
	}
}

// A key written nested or dotted is the same key; a section written empty
// keeps its defaults; what is not written keeps its default.
func TestDecode(t *testing.T) {
	nested := "robots: 8\npoliteness:\n  delay: 250ms\nfetch:\n  timeout: 3s\n  max_redirects: 2\ncluster:\n  pins:\n    - {suffix: .fr, tag: eu}\nstorage:\nfilters: [a, b]\nsitemaps:\n  read: all\n"
	dotted := "robots: 8\npoliteness.delay: 250ms\nfetch.timeout: 3s\nfetch: {max_redirects: 2}\ncluster.pins: [{suffix: .fr, tag: eu}]\nfilters: [a, b]\nsitemaps.read: all\n"
	want := defaults()
	want.Robots, want.Delay, want.Fetch.Timeout, want.Redirect = 8, 250*time.Millisecond, 3*time.Second, 2
	want.Pins, want.Scope.Filters, want.Mode = []pin{{".fr", "eu"}}, []string{"a", "b"}, 1
	for _, doc := range []string{nested, dotted} {
		got := defaults()
		lines, err := Decode([]byte(doc), &got)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q:\n got %+v, %v\nwant %+v", doc, got, err, want)
		}
		if lines["robots"] != 1 || lines["cluster.pins[0].tag"] == 0 {
			t.Errorf("%q: lines %v", doc, lines)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"robots: x\n", `config: line 1: robots: write a whole number such as 10 (got "x")`},
		{"politeness:\n  delay: 5\n", `config: line 2: politeness.delay: write a duration such as 5s or 200ms (got "5", a number without a unit)`},
		{"politeness: 5s\n", `config: line 1: politeness: write its keys on the lines below it, indented: delay (got "5s")`},
		{"fetch:\n  agent: x\n", `config: line 2: fetch.agent: unknown key: the keys of fetch are timeout, max_redirects`},
		{"oracle: x\n", `config: line 1: oracle: unknown key: the keys are robots, politeness, storage, robots_txt, rate, fetch, filters, max_depth, cluster, on, sitemaps`},
		{"on: maybe\n", `config: line 1: on: write true or false (got "maybe")`},
		{"rate: fast\n", `config: line 1: rate: write a number such as 0.5 (got "fast")`},
		{"sitemaps: {read: some}\n", `config: line 1: sitemaps.read: write seeds, all or off (got "some")`},
		{"filters: a\n", `config: line 1: filters: write a list such as [a, b], or one item per line after "- " (got "a")`},
		{"cluster.pins: [{sufix: a}]\n", `config: line 1: cluster.pins[0].sufix: unknown key: the keys of cluster.pins[0] are suffix, tag`},
		{"cluster:\n  pins: x\n", `config: line 2: cluster.pins: write a list of {key: value, ...} entries, one per line after "- ": their keys are suffix, tag (got "x")`},
		{"robots: 1\nrobots: 2\n", `config: line 2: robots: written twice (first on line 1): keep one`},
		{"- a\n", `config: line 1: write keys with their values, such as robots: 16, one per line: robots, politeness, storage, robots_txt, rate, fetch, filters, max_depth, cluster, on, sitemaps (got a list)`},
		{"robots:\n\t4\n", `config: line 2: not YAML: found character that cannot start any token`},
	} {
		c := defaults()
		_, err := Decode([]byte(tc.doc), &c)
		var e *Error
		if !errors.As(err, &e) || err.Error() != tc.want {
			t.Errorf("%q:\n got %v\nwant %s", tc.doc, err, tc.want)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		edit func(*conf)
		want string // "": accepted
	}{
		{func(*conf) {}, ""},
		{func(c *conf) { c.Robots = 0 }, "config: robots: must be at least 1, got 0"},
		{func(c *conf) { c.Delay = -time.Second }, "config: politeness.delay: must not be negative, got -1s"},
		{func(c *conf) { c.Level = 10 }, "config: storage.level: must be 1..9, got 10"},
		{func(c *conf) { c.TTL = 0 }, "config: robots_txt.ttl: must be positive, got 0s"},
		{func(c *conf) { c.TTL = 25 * time.Hour }, "config: robots_txt.ttl: must be at most 24h, got 25h0m0s"},
		{func(c *conf) { c.Rate = -0.5 }, "config: rate: must not be negative, got -0.5"},
		{func(c *conf) { c.Fetch.Timeout = 0 }, "config: fetch.timeout: must be positive, got 0s"},
		{func(c *conf) { c.Scope.MaxDepth = -1 }, "config: max_depth: must not be negative, got -1"},
	} {
		c := defaults()
		tc.edit(&c)
		err := Check(&c)
		if (err == nil) != (tc.want == "") || err != nil && err.Error() != tc.want {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}

// What Marshal writes, Decode reads back the same.
func TestMarshalRoundTrip(t *testing.T) {
	c := defaults()
	c.Pins = []pin{{".fr", "eu"}}
	c.Mode = 2
	c.Scope.Filters = []string{"a: b", "[c"}
	data, err := Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	var back conf
	back.Fetch.Agent = "x"
	if _, err := Decode(data, &back); err != nil || !reflect.DeepEqual(back, c) {
		t.Errorf("%s\n got %+v, %v\nwant %+v", data, back, err, c)
	}
}
