package urlnorm

import (
	"errors"
	"strings"
	"testing"
)

var fuzzSeeds = []string{
	"http://example.com/",
	"HTTP://Www.Example.COM:80/a/./b/../c/%7euser/%2Fx?utm_source=x&b=1&&a=%2f#frag",
	"https://bücher.de/ä?ö=ü",
	"http://0x7f.1/",
	"http://[::ffff:1.2.3.4]:8080/",
	"http://u:p@h/;jsessionid=1?sid=2",
	"../x/./y?z#f",
	`\\h\p`,
	"http:%2e%2e/a",
	"http://a/%%%25%32%35",
	"http://foo.09..",
	"javascript:alert(1)",
	" \t http://a b/ ",
}

func FuzzNormalize(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	sorted := &Normalizer{SortQuery: true}
	f.Fuzz(func(t *testing.T, in string) {
		for _, n := range []*Normalizer{Default, sorted} {
			out, err := n.Normalize(in)
			if err != nil {
				if out != "" {
					t.Errorf("Normalize(%q) returned %q with error %v", in, out, err)
				}
				continue
			}
			if len(out) > DefaultMaxLength {
				t.Errorf("Normalize(%q) = %d bytes, over the cap", in, len(out))
			}
			if strings.ContainsAny(out, "# \t\r\n\\") {
				t.Errorf("Normalize(%q) = %q contains a fragment, space or backslash", in, out)
			}
			checkInvariants(t, n, out)
		}
	})
}

func FuzzResolve(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add("https://www.example.com/dir/page.html?q=1", s)
	}
	f.Add("http://[::1]:8080/a/b/", "../../../c")
	f.Add("HTTP://EXAMPLE.COM", "?")
	f.Fuzz(func(t *testing.T, base, ref string) {
		out, err := Default.ResolveString(base, ref)
		if err != nil {
			if !errors.Is(err, ErrScheme) && !errors.Is(err, ErrRelative) && !errors.Is(err, ErrBase) &&
				!errors.Is(err, ErrHost) && !errors.Is(err, ErrPort) && !errors.Is(err, ErrTooLong) {
				t.Errorf("ResolveString(%q, %q): unexpected error %v", base, ref, err)
			}
			return
		}
		checkInvariants(t, Default, out)
		// An absolute result resolves to itself from any base.
		again, err := Default.ResolveString(base, out)
		if err != nil || again != out {
			t.Errorf("ResolveString(%q, %q) = %q, %v; want %q", base, out, again, err, out)
		}
	})
}
