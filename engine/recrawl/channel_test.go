package recrawl

import (
	"errors"
	"testing"
)

func TestChannelsEveryURLInOneChannel(t *testing.T) {
	c, err := NewChannels([]Rule{
		{Host: "news.example.org", Prefixes: []string{"/w/"}},
		{Name: "sport", Host: "News.Example.org", Prefixes: []string{"/sport/", "/w/sport/"}},
	})
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
	}
	for i, rules := range bad {
		if _, err := NewChannels(rules); !errors.Is(err, ErrConfig) {
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
		if _, err := NewPolicy(p); err != nil {
			t.Errorf("NewPolicy(%q): %v", p, err)
		}
	}
	if _, err := ParsePolicyName("lru"); !errors.Is(err, ErrConfig) {
		t.Errorf("ParsePolicyName(lru) error %v, want ErrConfig", err)
	}
	if err := Defaults().Validate(); err != nil {
		t.Errorf("Defaults do not validate: %v", err)
	}
}
