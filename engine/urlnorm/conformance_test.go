package urlnorm

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"
)

// The conformance files come from other projects, whose rules differ from
// lidi's on some points. Every case runs. A case passes when lidi's output
// equals the expected one, either as written ("exact") or after applying to
// the expected output one of lidi's documented rules that the other project
// does not have ("by rule", see adaptExpected). The remaining differences are
// listed per case below with their reason; the test fails when any other
// case differs, and when a listed case stops differing (so the lists stay
// exact).

// confCase is one conformance case.
type confCase struct {
	input    string
	base     string
	hasBase  bool
	want     string // expected URL; empty when wantFail
	wantFail bool   // the source expects the input to be rejected
}

func (c confCase) key() string {
	if c.hasBase {
		return c.input + " <base> " + c.base
	}
	return c.input
}

// Rule names used in reports.
const (
	ruleScheme   = "only http/https (ErrScheme)"
	ruleFragment = "fragment dropped"
	ruleEscapes  = "percent-encoding normalised (RFC 3986 sets, unreserved decoded, upper-case hex, stray % -> %25)"
	ruleQuery    = "empty query and empty parameters dropped"
	ruleDot      = "trailing dot of host dropped"
	ruleDNSHost  = "host not usable with DNS rejected (ErrHost)"
)

// adaptExpected applies lidi's documented rules to an expected URL from
// another project. It returns the expected result under lidi's rules and
// the rules that changed it. wantErr is set when lidi's rules reject the
// URL: ErrScheme for a scheme other than http or https, ErrHost for a host
// that DNS cannot resolve.
//
// It is written independently of the package code, plainly and per rule.
func adaptExpected(want string) (adapted string, wantErr error, rules []string) {
	scheme, rest, ok := strings.Cut(want, ":")
	if !ok || (scheme != "http" && scheme != "https") {
		return "", ErrScheme, []string{ruleScheme}
	}
	rest = strings.TrimPrefix(rest, "//")
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest = rest[:i]
		rules = append(rules, ruleFragment)
	}
	authEnd := strings.IndexAny(rest, "/?")
	if authEnd < 0 {
		authEnd = len(rest)
	}
	auth, pathQuery := rest[:authEnd], rest[authEnd:]
	userinfo, hostport := "", auth
	if i := strings.LastIndexByte(auth, '@'); i >= 0 {
		userinfo, hostport = auth[:i+1], auth[i+1:]
	}
	host, port := hostport, ""
	if !strings.HasPrefix(host, "[") {
		if i := strings.LastIndexByte(hostport, ':'); i >= 0 {
			host, port = hostport[:i], hostport[i:]
		}
	}
	if h := strings.TrimRight(host, "."); h != host && h != "" {
		host = h
		rules = append(rules, ruleDot)
	}
	if !strings.HasPrefix(host, "[") && !dnsUsable(host) {
		return "", ErrHost, append(rules, ruleDNSHost)
	}
	path, query, hasQuery := strings.Cut(pathQuery, "?")
	const (
		unreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
		subDelims  = "!$&'()*+,;="
	)
	newUser := reescape(userinfo[:max(0, len(userinfo)-1)], unreserved+subDelims+":")
	if userinfo != "" {
		newUser += "@"
	}
	newPath := reescape(path, unreserved+subDelims+":@/")
	newQuery := reescape(query, unreserved+subDelims+":@/?")
	if newUser != userinfo || newPath != path || newQuery != query {
		rules = append(rules, ruleEscapes)
	}
	if hasQuery {
		var kept []string
		for _, p := range strings.Split(newQuery, "&") {
			if p != "" {
				kept = append(kept, p)
			}
		}
		q := strings.Join(kept, "&")
		if q != newQuery || q == "" {
			rules = append(rules, ruleQuery)
		}
		newQuery = q
	}
	adapted = scheme + "://" + newUser + host + port + newPath
	if newQuery != "" {
		adapted += "?" + newQuery
	}
	return adapted, nil, rules
}

func dnsUsable(host string) bool {
	if host == "" || len(host) > 253 {
		return false
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range []byte(label) {
			if !strings.ContainsRune("abcdefghijklmnopqrstuvwxyz0123456789-_", rune(c)) {
				return false
			}
		}
	}
	return true
}

// reescape rewrites s so that only bytes in allowed appear raw, escapes of
// unreserved characters are decoded, other escapes use upper-case hex, and a
// '%' that starts no escape is itself escaped.
func reescape(s, allowed string) string {
	const unreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
	isHex := func(c byte) bool { return strings.IndexByte("0123456789abcdefABCDEF", c) >= 0 }
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			var v byte
			fmt.Sscanf(s[i+1:i+3], "%02x", &v)
			if strings.IndexByte(unreserved, v) >= 0 {
				b.WriteByte(v)
			} else {
				fmt.Fprintf(&b, "%%%02X", v)
			}
			i += 2
			continue
		}
		if c != '%' && strings.IndexByte(allowed, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

type confStats struct {
	total, exact, byRule, excluded int
	rules                          map[string]int
}

func (s confStats) String() string {
	var names []string
	for r := range s.rules {
		names = append(names, r)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "%d cases: %d exact, %d by lidi rule, %d excluded (listed)", s.total, s.exact, s.byRule, s.excluded)
	for _, r := range names {
		fmt.Fprintf(&b, "\n    rule %q: %d", r, s.rules[r])
	}
	return b.String()
}

// runConformance runs the cases and checks them against the exclusions.
func runConformance(t *testing.T, n *Normalizer, cases []confCase, excluded map[string]string) confStats {
	t.Helper()
	st := confStats{rules: map[string]int{}}
	seen := map[string]bool{}
	for _, c := range cases {
		st.total++
		got, err := resolveCase(n, c)
		if err == nil {
			checkInvariants(t, n, got)
		}
		verdict, rules := judge(c, got, err)
		reason, isExcluded := excluded[c.key()]
		seen[c.key()] = true
		switch {
		case verdict == "exact" && !isExcluded:
			st.exact++
		case verdict == "rule" && !isExcluded:
			st.byRule++
			for _, r := range rules {
				st.rules[r]++
			}
		case verdict == "fail" && isExcluded:
			st.excluded++
			if reason == whySorted {
				// The difference must be the order alone.
				sorted := &Normalizer{SortQuery: true}
				got, err := resolveCase(sorted, c)
				if v, _ := judge(c, got, err); v == "fail" {
					t.Errorf("case %q: with SortQuery got %q (err %v), want %q", c.key(), got, err, c.want)
				}
			}
		case isExcluded:
			t.Errorf("case %q is listed as excluded (%s) but now passes (%s): remove it from the list", c.key(), reason, verdict)
		default:
			want := c.want
			if c.wantFail {
				want = "<failure>"
			}
			t.Errorf("case %q: got %q (err %v), want %q", c.key(), got, err, want)
		}
	}
	for k := range excluded {
		if !seen[k] {
			t.Errorf("exclusion %q matches no case", k)
		}
	}
	return st
}

func resolveCase(n *Normalizer, c confCase) (string, error) {
	if !c.hasBase {
		return n.Normalize(c.input)
	}
	got, err := n.ResolveString(c.base, c.input)
	// Resolve with a *url.URL base must agree whenever net/url accepts the
	// base and keeps its spelling.
	if u, perr := url.Parse(c.base); perr == nil && u.String() == c.base {
		got2, err2 := n.Resolve(u, c.input)
		if got2 != got || !errors.Is(err2, err) && !(err != nil && err2 != nil) {
			return "", fmt.Errorf("Resolve (%q, %v) and ResolveString (%q, %v) disagree", got2, err2, got, err)
		}
	}
	return got, err
}

// judge compares lidi's result with the case's expectation: "exact", "rule"
// (equal after adaptExpected) or "fail".
func judge(c confCase, got string, err error) (string, []string) {
	if c.wantFail {
		if err != nil {
			return "exact", nil
		}
		return "fail", nil
	}
	if err == nil && got == c.want {
		return "exact", nil
	}
	adapted, wantErr, rules := adaptExpected(c.want)
	if wantErr != nil {
		if errors.Is(err, wantErr) || (wantErr == ErrScheme && errors.Is(err, ErrBase)) {
			return "rule", rules
		}
		return "fail", nil
	}
	if err == nil && got == adapted {
		return "rule", rules
	}
	return "fail", nil
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// latin1Bytes turns a JSON string whose code points are all below 256 into
// the bytes they stand for: the urlcanon files write byte strings that way
// ("\u00e2\u0098\u0083" is the UTF-8 encoding of U+2603).
func latin1Bytes(s string) string {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			return s
		}
		b = append(b, byte(r))
	}
	return string(b)
}

// orderedPairs decodes a JSON object of string pairs, keeping file order
// and duplicates.
func orderedPairs(t *testing.T, data []byte) [][2]string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var pairs [][2]string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v string
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		pairs = append(pairs, [2]string{k.(string), v})
	}
	return pairs
}

func readCSV(t *testing.T, name string, fields int) [][]string {
	t.Helper()
	r := csv.NewReader(bytes.NewReader(readTestdata(t, name)))
	r.Comment = '#'
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	r.LazyQuotes = true
	var rows [][]string
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(rec) != fields {
			t.Fatalf("%s: record %q has %d fields, want %d", name, rec, len(rec), fields)
		}
		rows = append(rows, rec)
	}
	return rows
}

func TestConformanceCrawlerCommonsNormalize(t *testing.T) {
	var cases []confCase
	for _, rec := range readCSV(t, "crawlercommons_weirdToNormalizedUrls.csv", 2) {
		cases = append(cases, confCase{input: rec[0], want: rec[1]})
	}
	st := runConformance(t, Default, cases, crawlerCommonsNormalizeExcluded)
	t.Logf("crawlercommons_weirdToNormalizedUrls.csv: %v", st)
}

func TestConformanceCrawlerCommonsResolve(t *testing.T) {
	var cases []confCase
	for _, rec := range readCSV(t, "crawlercommons_url-resolve.csv", 3) {
		c := confCase{input: rec[0], base: rec[1], want: rec[2], hasBase: rec[1] != ""}
		cases = append(cases, c)
	}
	st := runConformance(t, Default, cases, crawlerCommonsResolveExcluded)
	t.Logf("crawlercommons_url-resolve.csv: %v", st)
}

func TestConformanceURLCanonSemanticPrecise(t *testing.T) {
	var cases []confCase
	for _, p := range orderedPairs(t, readTestdata(t, "urlcanon_semantic_precise.json")) {
		cases = append(cases, confCase{input: latin1Bytes(p[0]), want: latin1Bytes(p[1])})
	}
	st := runConformance(t, Default, cases, urlcanonSemanticExcluded)
	t.Logf("urlcanon_semantic_precise.json: %v", st)
}

func TestConformanceURLCanonAggressive(t *testing.T) {
	var cases []confCase
	for _, p := range orderedPairs(t, readTestdata(t, "urlcanon_aggressive.json")) {
		cases = append(cases, confCase{input: latin1Bytes(p[0]), want: latin1Bytes(p[1])})
	}
	st := runConformance(t, Default, cases, urlcanonAggressiveExcluded)
	t.Logf("urlcanon_aggressive.json: %v", st)
}

func TestConformanceWPT(t *testing.T) {
	var raw []json.RawMessage
	if err := json.Unmarshal(readTestdata(t, "wpt_urltestdata.json"), &raw); err != nil {
		t.Fatal(err)
	}
	var cases []confCase
	for _, m := range raw {
		if len(m) > 0 && m[0] == '"' {
			continue // a comment
		}
		var e struct {
			Input   string  `json:"input"`
			Base    *string `json:"base"`
			Href    string  `json:"href"`
			Failure bool    `json:"failure"`
		}
		if err := json.Unmarshal(m, &e); err != nil {
			t.Fatal(err)
		}
		if !utf8.ValidString(e.Input) {
			t.Fatalf("invalid UTF-8 in %q", e.Input)
		}
		c := confCase{input: e.Input, want: e.Href, wantFail: e.Failure}
		if e.Base != nil {
			c.base, c.hasBase = *e.Base, true
		}
		cases = append(cases, c)
	}
	st := runConformance(t, Default, cases, wptExcluded)
	t.Logf("wpt_urltestdata.json: %v", st)
}
