package recrawl

import (
	"errors"
	"testing"
)

func TestChannelsEveryURLInOneChannel(t *testing.T) {
	c, err := NewChannels([]Rule{
		{Host: "news.example.org", Prefixes: []string{"/w/"}},
		{Name: "sport", Host: "News.Example.org", Prefixes: []string{"/sport/", "/w/sport/"}},
	}, Scope{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		url  string
		want ChannelID
	}{
		{"http://news.example.org/w/world.html", "news.example.org/w/"},
		{"http://news.example.org/w/sport/cup.html", "sport"}, // longest prefix wins
		{"http://NEWS.example.org/sport/", "sport"},
		{"http://news.example.org/", "news.example.org"},
		{"http://news.example.org", "news.example.org"},
		{"http://news.example.org/wx", "news.example.org"},
		{"http://other.example.org/w/", "other.example.org"},
		{"http://news.example.org:8080/w/", "news.example.org:8080"},
	}
	for _, tt := range tests {
		got, err := c.OfString(tt.url)
		if err != nil || got != tt.want {
			t.Errorf("OfString(%q) = %q, %v; want %q", tt.url, got, err, tt.want)
		}
	}
	var zero *Channels
	if got, _ := zero.OfString("http://a.example/x"); got != "a.example" {
		t.Errorf("nil Channels: %q, want the host", got)
	}
}

func TestChannelsRejectAmbiguousRules(t *testing.T) {
	bad := [][]Rule{
		{{Host: "a.example", Prefixes: []string{"/x/"}}, {Name: "y", Host: "a.example", Prefixes: []string{"/x/"}}},
		{{Name: "n", Host: "a.example", Prefixes: []string{"/x/"}}, {Name: "n", Host: "b.example", Prefixes: []string{"/x/"}}},
		{{Host: "a.example", Prefixes: []string{"x/"}}},
		{{Host: "a.example"}},
		{{Host: "", Prefixes: []string{"/x/"}}},
		{{Name: "a.example", Host: "a.example", Prefixes: []string{"/x/"}}},
		{{Host: "a.example", Prefixes: []string{"/x/"}, Scope: Scope{Filters: []string{"(unclosed"}}}},
		{{Host: "a.example", Prefixes: []string{"/x/"}, Scope: Scope{MaxDepth: -1}}},
	}
	for i, rules := range bad {
		if _, err := NewChannels(rules, Scope{}); !errors.Is(err, ErrConfig) {
			t.Errorf("rules %d: error %v, want ErrConfig", i, err)
		}
	}
}

func TestPageSeenAndFilters(t *testing.T) {
	a, b := DigestOf([]byte("a")), DigestOf([]byte("b"))
	s := NewPageSeen([]Digest{b, a, b})
	if len(s) != 2 || !s.Has(a) || !s.Has(b) || s.Has(DigestOf([]byte("c"))) {
		t.Errorf("PageSeen %v is wrong", s)
	}
	if DigestOf([]byte("a")) != a {
		t.Error("digest is not a function of the body")
	}
	var task Task
	if !task.Allows("http://x/") {
		t.Error("a task without filters refuses a URL")
	}
}

func TestParsePolicyName(t *testing.T) {
	for _, p := range PolicyNames() {
		got, err := ParsePolicyName(string(p))
		if err != nil || got != p {
			t.Errorf("ParsePolicyName(%q) = %q, %v", p, got, err)
		}
		if _, err := NewPolicy(p); (err != nil) != p.PerPage() {
			t.Errorf("NewPolicy(%q): %v (a Manager runs every policy but pages)", p, err)
		}
	}
	if _, err := ParsePolicyName("lru"); !errors.Is(err, ErrConfig) {
		t.Errorf("ParsePolicyName(lru) error %v, want ErrConfig", err)
	}
	if err := Defaults().Validate(); err != nil {
		t.Errorf("Defaults do not validate: %v", err)
	}
}

func TestChannelScopes(t *testing.T) {
	c, err := NewChannels([]Rule{
		{Name: "news", Host: "a.example", Prefixes: []string{"/news/"}, Scope: Scope{Filters: []string{`/news/\d+\.html$`}, MaxDepth: 2}},
		{Name: "blog", Host: "a.example", Prefixes: []string{"/blog/"}},
	}, Scope{Filters: []string{`\.html$`, `/$`}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id        ChannelID
		url       string
		allows    bool
		wantDepth int
	}{
		{"news", "http://a.example/news/12.html", true, 2},
		{"news", "http://a.example/news/index.html", false, 2},
		{"blog", "http://a.example/blog/x.html", true, 0}, // the default scope
		{"blog", "http://a.example/blog/x.png", false, 0},
		{"a.example", "http://a.example/", true, 0},
	}
	for _, tt := range tests {
		filters, depth := c.Scope(tt.id)
		task := Task{Filters: filters, MaxDepth: depth}
		if got := task.Allows(tt.url); got != tt.allows || depth != tt.wantDepth {
			t.Errorf("%s: Allows(%s) = %v, depth %d; want %v, %d", tt.id, tt.url, got, depth, tt.allows, tt.wantDepth)
		}
	}
	if !c.Split("A.example") || c.Split("b.example") {
		t.Error("Split does not tell the hosts with rules")
	}
	if _, err := NewChannels(nil, Scope{Filters: []string{"["}}); !errors.Is(err, ErrConfig) {
		t.Errorf("a bad default filter: error %v, want ErrConfig", err)
	}
}

func TestTaskPageLimit(t *testing.T) {
	for _, tt := range []struct{ expected, want int }{{0, 0}, {1, 2}, {4, 5}, {8, 10}, {9, 12}, {100, 125}} {
		task := Task{ExpectedPages: tt.expected}
		if got := task.PageLimit(); got != tt.want {
			t.Errorf("PageLimit with %d expected = %d, want %d", tt.expected, got, tt.want)
		}
	}
}
