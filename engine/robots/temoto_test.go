package robots

import (
	"strings"
	"testing"

	"github.com/temoto/robotstxt"
)

// TestTemotoDeviations checks, for each deviation of temoto/robotstxt
// v1.1.2 that the package doc gives as the reason for lidi's own matching,
// that temoto still answers differently from RFC 9309 and that lidi answers
// right. If temoto is upgraded and a case starts agreeing, this test says
// so, and lidi's workaround can be reconsidered.
func TestTemotoDeviations(t *testing.T) {
	tests := []struct {
		name, file, agent, path string
		rfc                     bool // the RFC 9309 answer
	}{
		{"tie goes to the first rule, not to Allow", "User-agent: *\nDisallow: /a\nAllow: /a\n", "x", "/a", true},
		{"wildcard patterns are unanchored", "User-agent: *\nDisallow: /a*b\n", "x", "/x/a/b", true},
		{"groups match by prefix", "User-agent: *\nAllow: /\nUser-agent: lid\nDisallow: /\n", "lidi", "/x", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			td, err := robotstxt.FromString(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if got := td.TestAgent(tt.path, tt.agent); got == tt.rfc {
				t.Errorf("temoto now answers %v like RFC 9309; revisit the workaround", got)
			}
			if got := FromResponse(200, []byte(tt.file)).Allowed(tt.agent, tt.path); got != tt.rfc {
				t.Errorf("lidi answers %v, RFC 9309 says %v", got, tt.rfc)
			}
		})
	}

	t.Run("Group.Test allows after a 5xx", func(t *testing.T) {
		td, err := robotstxt.FromStatusAndString(503, "")
		if err != nil {
			t.Fatal(err)
		}
		if !td.FindGroup("lidi").Test("/x") || td.TestAgent("/x", "lidi") {
			t.Error("temoto's 5xx behaviour changed")
		}
		if FromResponse(503, nil).Allowed("lidi", "/x") {
			t.Error("lidi allows after a 5xx")
		}
	})

	t.Run("one bad line rejects the file", func(t *testing.T) {
		file := "User-agent: *\nDisallow: /private\nCrawl-delay: soon\n"
		if _, err := robotstxt.FromString(file); err == nil {
			t.Error("temoto now accepts the file")
		}
		if FromResponse(200, []byte(file)).Allowed("lidi", "/private") {
			t.Error("lidi dropped the good rule")
		}
	})

	t.Run("no body cap", func(t *testing.T) {
		file := "User-agent: *\n" + strings.Repeat("#\n", MaxBodySize) + "Disallow: /late\n"
		td, err := robotstxt.FromString(file)
		if err != nil {
			t.Fatal(err)
		}
		if td.TestAgent("/late", "lidi") {
			t.Error("temoto now caps the body")
		}
		if !FromResponse(200, []byte(file)).Allowed("lidi", "/late") {
			t.Error("lidi read past MaxBodySize")
		}
	})
}
