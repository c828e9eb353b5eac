package urlnorm

import (
	"errors"
	"hash/fnv"
	"net/url"
	"strings"
	"testing"
)

type normCase struct {
	in   string
	want string // "" when err is set
	err  error
}

func runNormCases(t *testing.T, n *Normalizer, cases []normCase) {
	t.Helper()
	for _, c := range cases {
		got, err := n.Normalize(c.in)
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("Normalize(%q) = %q, %v; want error %v", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", c.in, got, err, c.want)
			continue
		}
		checkInvariants(t, n, got)
	}
}

// checkInvariants checks what every normalised URL must satisfy: it is a
// fixed point, and net/url parses it to the same scheme, host, path and
// query, so that net/http requests exactly this URL.
func checkInvariants(t *testing.T, n *Normalizer, s string) {
	t.Helper()
	again, err := n.Normalize(s)
	if err != nil || again != s {
		t.Errorf("not idempotent: Normalize(%q) = %q, %v", s, again, err)
	}
	u, err := url.Parse(s)
	if err != nil {
		t.Errorf("net/url cannot parse %q: %v", s, err)
		return
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		t.Errorf("%q: scheme %q", s, u.Scheme)
	}
	if u.Host != HostPort(s) || u.Hostname() != Host(s) {
		t.Errorf("%q: net/url host %q/%q, HostPort %q, Host %q", s, u.Host, u.Hostname(), HostPort(s), Host(s))
	}
	rest := s[strings.Index(s, "://")+3:]
	rest = rest[strings.IndexByte(rest, '/'):]
	path, query, _ := strings.Cut(rest, "?")
	if u.EscapedPath() != path || u.RawQuery != query {
		t.Errorf("%q: net/url path %q query %q, want %q %q", s, u.EscapedPath(), u.RawQuery, path, query)
	}
	if u.RequestURI() != rest {
		t.Errorf("%q: net/url request URI %q, want %q", s, u.RequestURI(), rest)
	}
}

func TestNormalizeSchemeHostPort(t *testing.T) {
	runNormCases(t, Default, []normCase{
		{"HTTP://WWW.Example.COM/Path", "http://www.example.com/Path", nil},
		{"HtTpS://Example.com", "https://example.com/", nil},
		{"http://example.com:80/", "http://example.com/", nil},
		{"https://example.com:443/", "https://example.com/", nil},
		{"http://example.com:443/", "http://example.com:443/", nil},
		{"https://example.com:80/", "https://example.com:80/", nil},
		{"http://example.com:/", "http://example.com/", nil},
		{"http://example.com:0080/", "http://example.com/", nil},
		{"http://example.com:08080/x", "http://example.com:8080/x", nil},
		{"http://example.com:65535/", "http://example.com:65535/", nil},
		{"http://example.com:65536/", "", ErrPort},
		{"http://example.com:8x/", "", ErrPort},
		{"http://example.com:-1/", "", ErrPort},
		{"http://example.com: 80/", "", ErrPort},
		{"ftp://example.com/", "", ErrScheme},
		{"javascript:alert(1)", "", ErrScheme},
		{"mailto:someone@example.com", "", ErrScheme},
		{"data:text/html,hi", "", ErrScheme},
		{"tel:+123", "", ErrScheme},
		{"httpx://example.com/", "", ErrScheme},
		{"//example.com/x", "", ErrRelative},
		{"/x", "", ErrRelative},
		{"example.com", "", ErrRelative},
		{"", "", ErrRelative},
		{"http://", "", ErrHost},
		{"http://:80/", "", ErrHost},
		{"http://user@/x", "", ErrHost},
		// Any number of slashes or backslashes after a special scheme.
		{"http:example.com/a", "http://example.com/a", nil},
		{"http:/example.com/a", "http://example.com/a", nil},
		{"http:////example.com/a", "http://example.com/a", nil},
		{`http:\\example.com\a\b`, "http://example.com/a/b", nil},
		// Whitespace and controls around, tabs and newlines inside.
		{"  \x01http://example.com/a \n", "http://example.com/a", nil},
		{"http://exa\tmple.com/a\nb\rc", "http://example.com/abc", nil},
	})
}

func TestNormalizeHosts(t *testing.T) {
	long := strings.Repeat("a", 63)
	runNormCases(t, Default, []normCase{
		{"http://bücher.de/", "http://xn--bcher-kva.de/", nil},
		{"http://BÜCHER.de/", "http://xn--bcher-kva.de/", nil},
		{"http://b%C3%BCcher.de/", "http://xn--bcher-kva.de/", nil},
		{"http://XN--BCHER-KVA.de/", "http://xn--bcher-kva.de/", nil},
		{"https://нэб.рф/", "https://xn--90ax2c.xn--p1ai/", nil},
		{"http://ｅｘａｍｐｌｅ.com/", "http://example.com/", nil},   // full-width letters map to ASCII
		{"http://example。com/", "http://example.com/", nil},   // ideographic full stop
		{"http://fa\u00df.de/", "http://xn--fa-hia.de/", nil}, // non-transitional: ß stays
		{"http://xn--a.com/", "", ErrHost},                    // invalid punycode
		{"http://example%2Ecom/", "http://example.com/", nil},
		{"http://example.com./", "http://example.com/", nil},
		{"http://example.com../", "http://example.com/", nil},
		{"http://my_host.example.com/", "http://my_host.example.com/", nil},
		{"http://r3---sn-apo3qvuoxuxbt-j5pe.example/", "http://r3---sn-apo3qvuoxuxbt-j5pe.example/", nil},
		{"http://a..b/", "", ErrHost},
		{"http://.example.com/", "", ErrHost},
		{"http://./", "", ErrHost},
		{"http://a b/", "", ErrHost},
		{"http://a!b.com/", "", ErrHost},
		{"http://a%20b/", "", ErrHost},
		{"http://a%zzb/", "", ErrHost},
		{"http://%FF.com/", "", ErrHost},
		{"http://" + long + ".com/", "http://" + long + ".com/", nil},
		{"http://" + long + "a.com/", "", ErrHost},
		{"http://" + strings.Repeat(long+".", 4) + "com/", "", ErrHost}, // 259 bytes
		// IPv4, URL Standard rules.
		{"http://127.0.0.1/", "http://127.0.0.1/", nil},
		{"http://0x7f.1/", "http://127.0.0.1/", nil},
		{"http://0X7F.0.0.1/", "http://127.0.0.1/", nil},
		{"http://2130706433/", "http://127.0.0.1/", nil},
		{"http://017700000001/", "http://127.0.0.1/", nil},
		{"http://127.1/", "http://127.0.0.1/", nil},
		{"http://127.0.0.1./", "http://127.0.0.1/", nil},
		{"http://256.0.0.1/", "", ErrHost},
		{"http://1.2.3.4.5/", "", ErrHost},
		{"http://4294967296/", "", ErrHost},
		{"http://09/", "", ErrHost},
		{"http://foo.09/", "", ErrHost},
		{"http://1.2.3.09a/", "http://1.2.3.09a/", nil}, // last label not a number: a name
		{"http://09a.example/", "http://09a.example/", nil},
		// IPv6.
		{"http://[::1]/", "http://[::1]/", nil},
		{"http://[0:0:0:0:0:0:0:1]:8080/", "http://[::1]:8080/", nil},
		{"http://[2001:DB8:0:0:1:0:0:1]/", "http://[2001:db8::1:0:0:1]/", nil},
		{"http://[1:0:0:2:0:0:0:3]/", "http://[1:0:0:2::3]/", nil},
		{"http://[::ffff:1.2.3.4]/", "http://[::ffff:102:304]/", nil},
		{"http://[fe80::1%25eth0]/", "", ErrHost},
		{"http://[::1/", "", ErrHost},
		{"http://[1.2.3.4]/", "", ErrHost},
		{"http://[::1]x/", "", ErrHost},
		// Userinfo.
		{"http://user:pass@example.com/", "http://user:pass@example.com/", nil},
		{"http://user:@example.com/", "http://user@example.com/", nil},
		{"http://:@example.com/", "http://example.com/", nil},
		{"http://@example.com/", "http://example.com/", nil},
		{"http://us er:p@ss:w@example.com/", "http://us%20er:p%40ss%3Aw@example.com/", nil},
	})
}

func TestNormalizePath(t *testing.T) {
	runNormCases(t, Default, []normCase{
		{"http://a.com", "http://a.com/", nil},
		{"http://a.com?x=1", "http://a.com/?x=1", nil},
		{"http://a.com/p#frag", "http://a.com/p", nil},
		{"http://a.com/p?q=1#f?x=2", "http://a.com/p?q=1", nil},
		{"http://a.com/#", "http://a.com/", nil},
		{"http://a.com/a/./b/../c", "http://a.com/a/c", nil},
		{"http://a.com/a/b/..", "http://a.com/a/", nil},
		{"http://a.com/a/b/.", "http://a.com/a/b/", nil},
		{"http://a.com/../../x", "http://a.com/x", nil},
		{"http://a.com/a/%2e%2E/b", "http://a.com/b", nil},
		{"http://a.com/a/.%2e/b", "http://a.com/b", nil},
		{"http://a.com/a/%2e/b", "http://a.com/a/b", nil},
		{"http://a.com/a/.../b", "http://a.com/a/.../b", nil},
		{"http://a.com/a..b/c.", "http://a.com/a..b/c.", nil},
		{"http://a.com/a//b", "http://a.com/a//b", nil}, // repeated slashes kept
		{`http://a.com/a\b\..\c`, "http://a.com/a/c", nil},
		// Percent-encoding: %2F and other reserved escapes stay encoded.
		{"http://a.com/a%2fb", "http://a.com/a%2Fb", nil},
		{"http://a.com/a%2Fb/..", "http://a.com/", nil},
		{"http://a.com/a%2F..%2Fb", "http://a.com/a%2F..%2Fb", nil},
		{"http://a.com/%3f%23%26%3d%2b%3B%40%3a", "http://a.com/%3F%23%26%3D%2B%3B%40%3A", nil},
		{"http://a.com/%25", "http://a.com/%25", nil},
		{"http://a.com/%2525", "http://a.com/%2525", nil},
		{"http://a.com/%7euser/%41%5a%61%7a%30%39%2d%2e%5f", "http://a.com/~user/AZaz09-._", nil},
		{"http://a.com/%e2%82%ac", "http://a.com/%E2%82%AC", nil},
		{"http://a.com/%zz%7", "http://a.com/%25zz%257", nil},
		{"http://a.com/100%", "http://a.com/100%25", nil},
		// Bytes RFC 3986 does not allow raw are encoded.
		{"http://a.com/you too", "http://a.com/you%20too", nil},
		{"http://a.com/€", "http://a.com/%E2%82%AC", nil},
		{"http://a.com/\xe9t\xe9", "http://a.com/%E9t%E9", nil}, // not UTF-8: bytes as they are
		{"http://a.com/a|b^c`d{e}f[g]h\"i<j>k", "http://a.com/a%7Cb%5Ec%60d%7Be%7Df%5Bg%5Dh%22i%3Cj%3Ek", nil},
		{"http://a.com/\x00\x1f\x7f", "http://a.com/%00%1F%7F", nil},
		{"http://a.com/!$&'()*+,;=:@-._~", "http://a.com/!$&'()*+,;=:@-._~", nil},
		// Path parameters named in DropParams.
		{"http://a.com/x;jsessionid=ABC123?y=1", "http://a.com/x?y=1", nil},
		{"http://a.com/x;JSESSIONID=ABC/y", "http://a.com/x/y", nil},
		{"http://a.com/x;v=1;jsessionid=A;w=2", "http://a.com/x;v=1;w=2", nil},
		{"http://a.com/x;jsessionid", "http://a.com/x;jsessionid", nil}, // no value: not a parameter
		{"http://a.com/x;version=2", "http://a.com/x;version=2", nil},
	})
}

func TestNormalizeQuery(t *testing.T) {
	runNormCases(t, Default, []normCase{
		{"http://a.com/?", "http://a.com/", nil},
		{"http://a.com/?&&", "http://a.com/", nil},
		{"http://a.com/?&&a=1&&b=2&", "http://a.com/?a=1&b=2", nil},
		{"http://a.com/?b=1&a=2", "http://a.com/?b=1&a=2", nil}, // order kept
		{"http://a.com/?q=a+b&r=c%20d", "http://a.com/?q=a+b&r=c%20d", nil},
		{"http://a.com/?q=tl;dr", "http://a.com/?q=tl;dr", nil},
		{"http://a.com/?url=http://b.com/x?y", "http://a.com/?url=http://b.com/x?y", nil},
		{"http://a.com/?a=%2f%3f%23%26%3d", "http://a.com/?a=%2F%3F%23%26%3D", nil},
		{"http://a.com/?a=%41%7e", "http://a.com/?a=A~", nil},
		{"http://a.com/?q=x y&z=é", "http://a.com/?q=x%20y&z=%C3%A9", nil},
		{"http://a.com/?x[y]=1|2^", "http://a.com/?x%5By%5D=1%7C2%5E", nil},
		{"http://a.com/?q=foobar%", "http://a.com/?q=foobar%25", nil},
		{"http://a.com/?=1&b=", "http://a.com/?=1&b=", nil},
		// Default tracking and session parameters.
		{"http://a.com/?utm_source=x&id=1&UTM_Medium=y&gclid=z&fbclid=w", "http://a.com/?id=1", nil},
		{"http://a.com/?PHPSESSID=abc&x=1&JSESSIONID=d", "http://a.com/?x=1", nil},
		{"http://a.com/?ASPSESSIONIDQQGGQ=abc&x=1", "http://a.com/?x=1", nil},
		{"http://a.com/?sid=1&side=2&sidx=3", "http://a.com/?side=2&sidx=3", nil},
		{"http://a.com/?utm_source=x", "http://a.com/", nil},
		{"http://a.com/?utm%5Fsource=x&y", "http://a.com/?y", nil}, // names compare in normalised form
		{"http://a.com/?utm=1", "http://a.com/?utm=1", nil},
	})
}

func TestNormalizerOptions(t *testing.T) {
	sorted := &Normalizer{SortQuery: true}
	runNormCases(t, sorted, []normCase{
		{"http://a.com/?b=1&a=2", "http://a.com/?a=2&b=1", nil},
		{"http://a.com/?b=2&a=1&b=1&a", "http://a.com/?a=1&a&b=2&b=1", nil}, // stable for equal names
		{"http://a.com/?z&utm_source=1&y=2", "http://a.com/?y=2&z", nil},
		{"http://a.com/?B=1&a=1", "http://a.com/?B=1&a=1", nil}, // byte order
	})
	custom := &Normalizer{DropParams: []string{"ref", "s_*", "*token"}}
	runNormCases(t, custom, []normCase{
		{"http://a.com/?ref=x&s_kw=1&utm_source=2&csrf_token=3&s=4", "http://a.com/?utm_source=2&s=4", nil},
		{"http://a.com/p;ref=1", "http://a.com/p", nil},
	})
	none := &Normalizer{DropParams: []string{}}
	runNormCases(t, none, []normCase{
		{"http://a.com/x;jsessionid=1?utm_source=2&&sid=3", "http://a.com/x;jsessionid=1?utm_source=2&sid=3", nil},
	})
	short := &Normalizer{MaxLength: 30}
	runNormCases(t, short, []normCase{
		{"http://a.com/" + strings.Repeat("x", 17), "http://a.com/" + strings.Repeat("x", 17), nil}, // 30 bytes
		{"http://a.com/" + strings.Repeat("x", 18), "", ErrTooLong},
		{"http://a.com/" + strings.Repeat("x", 200), "", ErrTooLong},
	})
	runNormCases(t, Default, []normCase{
		{"http://a.com/" + strings.Repeat("x", DefaultMaxLength-13), "http://a.com/" + strings.Repeat("x", DefaultMaxLength-13), nil},
		{"http://a.com/" + strings.Repeat("x", DefaultMaxLength-12), "", ErrTooLong},
		{"http://a.com/x" + strings.Repeat(" ", 1000) + "x", "", ErrTooLong}, // 3,000 bytes once escaped
	})
	// A nil *Normalizer behaves as the zero value.
	var nilN *Normalizer
	runNormCases(t, nilN, []normCase{
		{"http://a.com/?utm_source=1&b=2&a=1", "http://a.com/?b=2&a=1", nil},
	})
}

func TestGlobFold(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"utm_*", "utm_source", true},
		{"utm_*", "UTM_", true},
		{"utm_*", "utm", false},
		{"*id", "gclid", true},
		{"*id", "gclide", false},
		{"a*b*c", "aXXbYYc", true},
		{"a*b*c", "aXXbYY", false},
		{"a*b*c", "abcbc", true},
		{"*", "anything", true},
		{"sid", "SID", true},
		{"sid", "side", false},
		{"s?d", "sid", false}, // '?' is literal
	} {
		if got := globFold(c.pattern, []byte(c.name)); got != c.want {
			t.Errorf("globFold(%q, %q) = %v, want %v", c.pattern, c.name, got, c.want)
		}
	}
}

// TestResolveRFC3986 runs the reference resolution examples of RFC 3986
// section 5.4 (fragments dropped, as lidi does).
func TestResolveRFC3986(t *testing.T) {
	const baseStr = "http://a/b/c/d;p?q"
	base, err := url.Parse(baseStr)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ ref, want string }{
		// 5.4.1 normal examples.
		{"g", "http://a/b/c/g"},
		{"./g", "http://a/b/c/g"},
		{"g/", "http://a/b/c/g/"},
		{"/g", "http://a/g"},
		{"//g", "http://g/"},
		{"?y", "http://a/b/c/d;p?y"},
		{"g?y", "http://a/b/c/g?y"},
		{"#s", "http://a/b/c/d;p?q"},
		{"g#s", "http://a/b/c/g"},
		{"g?y#s", "http://a/b/c/g?y"},
		{";x", "http://a/b/c/;x"},
		{"g;x", "http://a/b/c/g;x"},
		{"g;x?y#s", "http://a/b/c/g;x?y"},
		{"", "http://a/b/c/d;p?q"},
		{".", "http://a/b/c/"},
		{"./", "http://a/b/c/"},
		{"..", "http://a/b/"},
		{"../", "http://a/b/"},
		{"../g", "http://a/b/g"},
		{"../..", "http://a/"},
		{"../../", "http://a/"},
		{"../../g", "http://a/g"},
		// 5.4.2 abnormal examples.
		{"../../../g", "http://a/g"},
		{"../../../../g", "http://a/g"},
		{"/./g", "http://a/g"},
		{"/../g", "http://a/g"},
		{"g.", "http://a/b/c/g."},
		{".g", "http://a/b/c/.g"},
		{"g..", "http://a/b/c/g.."},
		{"..g", "http://a/b/c/..g"},
		{"./../g", "http://a/b/g"},
		{"./g/.", "http://a/b/c/g/"},
		{"g/./h", "http://a/b/c/g/h"},
		{"g/../h", "http://a/b/c/h"},
		{"g;x=1/./y", "http://a/b/c/g;x=1/y"},
		{"g;x=1/../y", "http://a/b/c/y"},
		{"g?y/./x", "http://a/b/c/g?y/./x"},
		{"g?y/../x", "http://a/b/c/g?y/../x"},
		{"g#s/./x", "http://a/b/c/g"},
		{"g#s/../x", "http://a/b/c/g"},
		{"http:g", "http://a/b/c/g"}, // the URL Standard's (and RFC's "loose") reading
	}
	for _, c := range cases {
		got, err := Default.Resolve(base, c.ref)
		if err != nil || got != c.want {
			t.Errorf("Resolve(%q, %q) = %q, %v; want %q", baseStr, c.ref, got, err, c.want)
		}
		got2, err2 := Default.ResolveString(baseStr, c.ref)
		if got2 != got || (err2 == nil) != (err == nil) {
			t.Errorf("ResolveString(%q, %q) = %q, %v; Resolve gave %q, %v", baseStr, c.ref, got2, err2, got, err)
		}
		if err == nil {
			checkInvariants(t, Default, got)
		}
	}
	if _, err := Default.Resolve(base, "g:h"); !errors.Is(err, ErrScheme) {
		t.Errorf(`Resolve(base, "g:h") error = %v, want ErrScheme`, err)
	}
}

func TestResolveBases(t *testing.T) {
	mustParse := func(s string) *url.URL {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	for _, c := range []struct {
		base *url.URL
		ref  string
		want string
		err  error
	}{
		{nil, "http://a.com/x", "http://a.com/x", nil},
		{nil, "x", "", ErrRelative},
		{mustParse("mailto:x@y.com"), "x", "", ErrBase},
		{mustParse("mailto:x@y.com"), "https://a.com/x", "https://a.com/x", nil},
		{mustParse("/relative/only"), "x", "", ErrBase},
		// The base is normalised too.
		{mustParse("HTTP://User@WWW.Example.COM:80/a/b/../c?utm_source=1"), "", "http://User@www.example.com/a/c", nil},
		{mustParse("http://example.com/a/b"), "?utm_source=x", "http://example.com/a/b", nil},
		{mustParse("http://example.com/d%2Fe/f"), "g", "http://example.com/d%2Fe/g", nil},
		{mustParse("http://example.com/%E6%97%A5/x"), "y", "http://example.com/%E6%97%A5/y", nil},
		{mustParse("https://[::1]:8443/a/"), "b", "https://[::1]:8443/a/b", nil},
		{mustParse("https://example.com/a/"), "http:b", "http://b/", nil}, // other scheme: absolute
		{mustParse("https://example.com/a/"), "https:b", "https://example.com/a/b", nil},
		{mustParse("https://example.com/a/"), `\\other.com\x`, "https://other.com/x", nil},
		{mustParse("https://example.com/a/"), `\x`, "https://example.com/x", nil},
		{mustParse("https://example.com/a/"), "  ../b\t?c#d ", "https://example.com/b?c", nil},
		{mustParse("https://example.com/a/"), "javascript:void(0)", "", ErrScheme},
		{mustParse("https://example.com/a/"), "//", "", ErrHost},
	} {
		got, err := Default.Resolve(c.base, c.ref)
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("Resolve(%v, %q) = %q, %v; want error %v", c.base, c.ref, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Resolve(%v, %q) = %q, %v; want %q", c.base, c.ref, got, err, c.want)
		}
	}
	if _, err := Default.ResolveString("not a url", "x"); !errors.Is(err, ErrBase) {
		t.Errorf("ResolveString with a bad base: error %v, want ErrBase", err)
	}
}

func TestHost(t *testing.T) {
	for _, c := range []struct{ in, host, hostPort string }{
		{"http://example.com/", "example.com", "example.com"},
		{"http://u:p@example.com:8080/x?y", "example.com", "example.com:8080"},
		{"http://[::1]:8080/", "::1", "[::1]:8080"},
		{"http://[::1]/", "::1", "[::1]"},
		{"https://a.b/?x=http://c.d/", "a.b", "a.b"},
		{"no scheme", "", ""},
		{"http://[::1/", "", "[::1"},
	} {
		if got := Host(c.in); got != c.host {
			t.Errorf("Host(%q) = %q, want %q", c.in, got, c.host)
		}
		if got := HostPort(c.in); got != c.hostPort {
			t.Errorf("HostPort(%q) = %q, want %q", c.in, got, c.hostPort)
		}
	}
}

func TestFingerprint(t *testing.T) {
	// Published FNV-1a 64 test vectors: the function must never change.
	for _, c := range []struct {
		in   string
		want uint64
	}{
		{"", 0xcbf29ce484222325},
		{"a", 0xaf63dc4c8601ec8c},
		{"foobar", 0x85944171f73967e8},
	} {
		if got := Fingerprint(c.in); got != c.want {
			t.Errorf("Fingerprint(%q) = %#x, want %#x", c.in, got, c.want)
		}
	}
	for _, s := range []string{"http://example.com/", "https://xn--bcher-kva.de/a?b=c"} {
		h := fnv.New64a()
		h.Write([]byte(s))
		if got, want := Fingerprint(s), h.Sum64(); got != want {
			t.Errorf("Fingerprint(%q) = %#x, hash/fnv says %#x", s, got, want)
		}
	}
}

func TestNoAllocsOnPlainLinks(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counting")
	}
	const base = "https://www.example.com/news/2024/index.html"
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := Default.ResolveString(base, "../2023/story.html?id=42&utm_source=feed"); err != nil {
			t.Fatal(err)
		}
	})
	// One allocation: the result string.
	if allocs > 1 {
		t.Errorf("ResolveString allocates %.1f times per call, want 1", allocs)
	}
}
