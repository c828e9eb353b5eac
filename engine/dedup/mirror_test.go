package dedup

import "testing"

func TestOriginal(t *testing.T) {
	tests := []struct {
		url  string
		m    *Mirror
		want string
		ok   bool
	}{
		{"http://x.test/a/b.html", &Mirror{Prefix: "http://x.test/", Of: "http://www.x.test/", Host: true, Rule: RuleHostMirror}, "http://www.x.test/a/b.html", true},
		{"http://x.test/docs-old/p/q.html?r=1", &Mirror{Prefix: "http://x.test/docs-old/", Of: "http://x.test/docs/", Rule: RuleDirMirror}, "http://x.test/docs/p/q.html?r=1", true},
		{"http://x.test/a/l/l/c.html", &Mirror{Prefix: "http://x.test/a/l/", Of: "http://x.test/a/", Loop: true, Rule: RuleLoop}, "http://x.test/a/l/c.html", true},
		{"http://x.test/cal/2030/01/", &Mirror{Prefix: "http://x.test/cal/#/#/", Of: "http://x.test/cal/2020/01/", Rule: RuleSiblingTrap}, "", false},
		{"http://x.test/p?sid=1", &Mirror{Prefix: "http://x.test/", Of: "http://x.test/p", Param: "sid", Rule: RuleQueryParam}, "", false},
		{"http://y.test/a", &Mirror{Prefix: "http://x.test/", Of: "http://www.x.test/", Rule: RuleHostMirror}, "", false},
		{"http://y.test/a", nil, "", false},
	}
	for _, tt := range tests {
		if got, ok := Original(tt.url, tt.m); got != tt.want || ok != tt.ok {
			t.Errorf("Original(%q) = %q, %v; want %q, %v", tt.url, got, ok, tt.want, tt.ok)
		}
	}
}
