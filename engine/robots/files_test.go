package robots

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func readTestFile(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "files", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestParseAllFiles reads every robots.txt in testdata/files and checks
// the invariants any parse must keep.
func TestParseAllFiles(t *testing.T) {
	names, err := filepath.Glob(filepath.Join("testdata", "files", "*.txt"))
	if err != nil || len(names) < 50 {
		t.Fatalf("found %d files: %v", len(names), err)
	}
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		r := FromResponse(200, data)
		if r.Kind() != KindParsed || r.Stats().Lines == 0 {
			t.Errorf("%s: kind %v stats %+v", filepath.Base(name), r.Kind(), r.Stats())
		}
		for _, agent := range []string{lidiUA, "Googlebot", "*", ""} {
			if !r.Allowed(agent, "/robots.txt") {
				t.Errorf("%s: /robots.txt disallowed for %q", filepath.Base(name), agent)
			}
			if d := r.CrawlDelay(agent); d < 0 || d > MaxCrawlDelay {
				t.Errorf("%s: crawl delay %v", filepath.Base(name), d)
			}
		}
	}
}

func TestKnownFiles(t *testing.T) {
	type query struct {
		agent, path string
		want        bool
	}
	tests := []struct {
		file     string
		queries  []query
		delays   map[string]time.Duration
		sitemaps []string
	}{
		{
			file: "crawlercommons_rfc9309-example-simple-robots.txt",
			queries: []query{
				{"somebot", "/example/x", false},
				{"somebot", "/publications/x", true},
				{"somebot", "/a/b.gif", false},
				{"somebot", "/a/b.gif?x", true},
				{"foobot", "/example/page.html", true},
				{"foobot", "/example/allowed.gif", true},
				{"foobot", "/other", false},
				{"barbot", "/example/page.html", false},
				{"bazbot", "/example/page.html", false},
				{"bazbot", "/example/other", true},
				{"quxbot", "/example/page.html", true}, // empty group of its own
			},
		},
		{
			file: "crawlercommons_rfc9309-example-longest-match-robots.txt",
			queries: []query{
				{"foobot", "/example/page/disallowed.gif", false},
				{"foobot", "/example/page/", true},
				{"foobot", "/example/page/other.gif", true},
			},
		},
		{
			file: "crawlercommons_rfc9309-example-rule-group-merging.txt",
			queries: []query{
				{"ExampleBot", "/foo", false},
				{"ExampleBot", "/bar", false},
				{"ExampleBot", "/baz", false},
				{"BazBot", "/foo", true},
				{"BazBot", "/baz", false},
				{"other", "/foo", false},
				{"other", "/baz", true},
			},
		},
		{
			file: "crawlercommons_crawl-delay-group-merging.txt",
			queries: []query{
				{"mybot", "/private/x", false},
				// The file's comment says /login/ applies to mybot too, but
				// merging is per agent (RFC 9309 2.2.1) and mybot is not
				// named in the group holding /login/.
				{"mybot", "/login/x", true},
				{"yourbot", "/private/x", false},
				{"yourbot", "/login/x", false},
				{"otherbot", "/private/x", true},
			},
			// Crawl-delay goes to the user-agent lines right above it.
			delays: map[string]time.Duration{"mybot": 10 * time.Second, "yourbot": 0, "otherbot": 30 * time.Second},
		},
		{
			file: "crawlercommons_extensions-group-merging.txt",
			queries: []query{
				{"mybot", "/private/x", false},
				{"mybot", "/login/x", false},
				{"mybot", "/llms.txt", true},
				{"otherbot", "/llms.txt", true},
				{"otherbot", "/x", false},
			},
		},
		{
			file: "crawlercommons_merge-rules.txt",
			queries: []query{
				{"wget", "/foo/bar", true}, // Allow and Disallow tie: Allow wins
				{"wget", "/tmp/bar", false},
				{"wget", "/ckh/bar", true},
				{"other", "/foo/bar", false},
				{"curl", "/x", false},
			},
		},
		{
			file: "crawlercommons_precedence-of-rules.txt",
			queries: []query{
				{"wget", "/foo", true},
				{"wget", "/index.html", true},
				{"wget", "/", false}, // "Disallow: /*" (2 octets) beats "Allow: /" (1)
				{"wget", "/x", false},
				{"testy", "/foo/bar", true},
				{"testy", "/foo/baz", false},
				{"testy", "/foo", false},
			},
		},
		{
			file: "crawlercommons_format-errors-robots.txt",
			queries: []query{
				{"bot1", "/whitespace-before-colon/x", false},
				{"bot1", "/no-colon/x", false},
				{"bot2", "/no-colon-useragent/x", false},
				{"bot3", "/whitespace-before-colon", true},
				{"bot3", "/other", false},
			},
			sitemaps: []string{"/sitemap.xml"},
		},
		{
			file: "crawlercommons_directive-typos-robots.txt",
			queries: []query{
				{"bot1", "/dissalow/", false},
				{"bot1", "/desallow/", true}, // not a misspelling Google accepts either
				{"bot2", "/useragent/", false},
				{"bot4", "/useragent-no-colon/", false},
			},
		},
		{
			file: "crawlercommons_twitter.com-robots.txt",
			queries: []query{
				{"Googlebot/2.1", "/search?q=x", false},
				{"Googlebot/2.1", "/jack/with_friends", false},
				{"Googlebot/2.1", "/jack", true},
				{"lidi", "/jack/with_friends", false},
			},
			delays: map[string]time.Duration{"Slurp": time.Second, "msnbot": 10 * time.Second, "Googlebot": 0, "lidi": 0},
		},
		{
			file: "crawlercommons_wildcards.txt",
			queries: []query{
				{"x", "/wishlist/", false},
				{"x", "/wishlist/universal-thing", true},
				{"x", "/gp/registry/wishlist/123/reserve", false},
				{"x", "/gp/registry/wishlist/", false},
				{"x", "/gp/product/B000", true},
			},
		},
		{
			file:     "crawlercommons_robots-with-utf16le-bom.txt",
			queries:  []query{{"x", "/login.aspx", false}, {"x", "/home", true}},
			sitemaps: []string{"http://www.newsweek.com/sitemap_index.xml"},
		},
		{
			file:     "crawlercommons_robots-with-utf16be-bom.txt",
			queries:  []query{{"x", "/login.aspx", false}, {"x", "/home", true}},
			sitemaps: []string{"http://www.newsweek.com/sitemap_index.xml"},
		},
		{
			file:     "crawlercommons_robots-with-utf8-bom.txt",
			queries:  []query{{"x", "/login.aspx", false}, {"Googlebot", "/a/output/print", false}, {"x", "/home", true}},
			sitemaps: []string{"http://www.newsweek.com/sitemap_index.xml"},
		},
		{
			file:     "crawlercommons_sitemap-robots-dedup.txt",
			sitemaps: []string{"http://example.org/sitemap.xml"},
		},
		{
			file: "crawlercommons_sitemap-robots.txt",
			// The line without "sitemap:" is not a record.
			sitemaps: []string{"http://domain.com/sitemap.xml", "http://domain.com/dir/MixedCased-sitemap.xml"},
		},
		{
			file:    "crawlercommons_dos-line-endings.txt",
			queries: []query{{"x", "/", true}},
			delays:  map[string]time.Duration{"x": time.Second},
		},
		{
			file:   "crawlercommons_astore.amazon.com-robots.txt",
			delays: map[string]time.Duration{"x": 5 * time.Second},
		},
		{
			file: "crawlercommons_malformed-path.txt",
			queries: []query{
				{"x", "/wiki/Wikipedia_talk:Mediation_Committee/x", false},
				{"x", "/wiki/Wikipedia_talk%3Mediation_Committee/x", false},
				{"x", "/wiki/Other", true},
			},
		},
		{
			file: "crawlercommons_many-user-agents.txt",
			queries: []query{
				{"BlackWidow", "/", false},
				{"blackwidow/3.0", "/anything", false},
				{"Crescent", "/", false}, // from "Crescent Internet ToolPak HTTP OLE Control v.1.0"
				{"lidi", "/", true},
			},
		},
		{
			file: "warc_https_www.paypal.com.txt",
			queries: []query{
				{"Googlebot", "/xclick-auction/x", false},
				{"Googlebot", "/us/home", true},
				{"lidi", "/us/home", false},
			},
		},
		{
			file:    "warc_http_www.archive.org.txt",
			queries: []query{{"lidi", "/details/x", true}, {"Teoma", "/details/x", true}},
			delays:  map[string]time.Duration{"Teoma": 10 * time.Second, "lidi": 0},
		},
		{
			file:    "warc_http_data.gov.uk.txt",
			queries: []query{{"lidi", "/admin/x", false}, {"lidi", "/user", false}, {"lidi", "/users", false}, {"lidi", "/dataset/x", true}},
			delays:  map[string]time.Duration{"lidi": 10 * time.Second},
		},
		{
			file: "warc_http_ajax.googleapis.com.txt",
			queries: []query{
				{"lidi", "/news/directory", true},
				{"lidi", "/news/x", false},
				{"lidi", "/setnewsprefs?x=1", false},
				{"lidi", "/setnewsprefs", true},
				{"lidi", "/ajax/libs/jquery/3.7.1/jquery.min.js", true},
			},
		},
		{
			file:     "warc_http_www.adobe.com.txt",
			queries:  []query{{"Googlebot", "/google_indexing/x", true}, {"lidi", "/google_indexing/x", false}},
			sitemaps: []string{"http://www.adobe.com/sitemap.xml"},
		},
		{
			file:    "warc_http_creativecommons.org.txt",
			queries: []query{{"lidi", "/", true}, {"lidi", "/licenses/", true}},
		},
		{
			file:    "warc_http_api.recaptcha.net.txt",
			queries: []query{{"lidi", "/", false}, {"lidi", "/robots.txt", true}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r := FromResponse(200, readTestFile(t, tt.file))
			for _, q := range tt.queries {
				if got := r.Allowed(q.agent, q.path); got != q.want {
					d := r.Check(q.agent, q.path)
					t.Errorf("Allowed(%q, %q) = %v, want %v (line %d %q)", q.agent, q.path, got, q.want, d.Line, d.Pattern)
				}
			}
			for agent, want := range tt.delays {
				if got := r.CrawlDelay(agent); got != want {
					t.Errorf("CrawlDelay(%q) = %v, want %v", agent, got, want)
				}
			}
			if tt.sitemaps != nil && !slices.Equal(r.Sitemaps(), tt.sitemaps) {
				t.Errorf("Sitemaps() = %q, want %q", r.Sitemaps(), tt.sitemaps)
			}
		})
	}
}
