package robots

import (
	"slices"
	"testing"
)

func TestParseMeta(t *testing.T) {
	tests := []struct {
		content string
		want    Directives
	}{
		{"", Directives{}},
		{"noindex", Directives{NoIndex: true}},
		{"nofollow", Directives{NoFollow: true}},
		{"noindex,nofollow", Directives{NoIndex: true, NoFollow: true}},
		{" NoIndex , NOFOLLOW ", Directives{NoIndex: true, NoFollow: true}},
		{"none", Directives{NoIndex: true, NoFollow: true}},
		{"NONE", Directives{NoIndex: true, NoFollow: true}},
		{"all", Directives{}},
		{"index, follow", Directives{}},
		{"all, noindex", Directives{NoIndex: true}}, // the restriction wins
		{"noindex nofollow", Directives{NoIndex: true, NoFollow: true}},
		{"noindex;nofollow", Directives{NoIndex: true, NoFollow: true}},
		{"noarchive, nosnippet, max-snippet:-1", Directives{}},
		{"noindexing, nofollowers", Directives{}}, // whole tokens only
		{",,noindex,,", Directives{NoIndex: true}},
	}
	for _, tt := range tests {
		if got := ParseMeta(tt.content); got != tt.want {
			t.Errorf("ParseMeta(%q) = %+v, want %+v", tt.content, got, tt.want)
		}
	}
}

func TestMetaNames(t *testing.T) {
	tests := []struct {
		agent string
		want  []string
	}{
		{lidiUA, []string{"robots", "lidi"}},
		{"  LIDI", []string{"robots", "LIDI"}},
		{"Robots/1.0", []string{"robots"}},
		{"", []string{"robots"}},
		{"(compatible)", []string{"robots"}},
	}
	for _, tt := range tests {
		if got := MetaNames(tt.agent); !slices.Equal(got, tt.want) {
			t.Errorf("MetaNames(%q) = %q, want %q", tt.agent, got, tt.want)
		}
	}
}

func TestParseXRobotsTag(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		agent  string
		want   Directives
	}{
		{"none", nil, lidiUA, Directives{}},
		{"plain", []string{"noindex"}, lidiUA, Directives{NoIndex: true}},
		{"two headers", []string{"noindex", "nofollow"}, lidiUA, Directives{NoIndex: true, NoFollow: true}},
		{"none keyword", []string{"NONE"}, lidiUA, Directives{NoIndex: true, NoFollow: true}},
		{"all", []string{"all"}, lidiUA, Directives{}},
		{"for us", []string{"lidi: noindex"}, lidiUA, Directives{NoIndex: true}},
		{"for us, case", []string{"LiDi: nofollow"}, lidiUA, Directives{NoFollow: true}},
		{"for another crawler", []string{"googlebot: noindex"}, lidiUA, Directives{}},
		{"scope lasts over the list", []string{"otherbot: noindex, nofollow"}, lidiUA, Directives{}},
		{"scope lasts over the list, ours", []string{"lidi: noindex, nofollow"}, lidiUA, Directives{NoIndex: true, NoFollow: true}},
		{"scope switches", []string{"googlebot: noindex, lidi: nofollow"}, lidiUA, Directives{NoFollow: true}},
		{"unscoped then scoped", []string{"noindex, googlebot: nofollow"}, lidiUA, Directives{NoIndex: true}},
		{"each header starts unscoped", []string{"googlebot: noindex", "nofollow"}, lidiUA, Directives{NoFollow: true}},
		{"valued directive is not a scope", []string{"unavailable_after: 25 Jun 2010 15:00:00 PST, noindex"}, lidiUA, Directives{NoIndex: true}},
		{"date with a comma", []string{"unavailable_after: Friday, 25-Jun-2010 15:00:00 PST, nofollow"}, lidiUA, Directives{NoFollow: true}},
		{"max-snippet", []string{"max-snippet: 20, noindex"}, lidiUA, Directives{NoIndex: true}},
		{"prefix is not our name", []string{"lidibot: noindex"}, lidiUA, Directives{}},
		{"no agent of our own", []string{"lidi: noindex", "nofollow"}, "", Directives{NoFollow: true}},
	}
	for _, tt := range tests {
		if got := ParseXRobotsTag(tt.values, tt.agent); got != tt.want {
			t.Errorf("%s: ParseXRobotsTag(%q, %q) = %+v, want %+v", tt.name, tt.values, tt.agent, got, tt.want)
		}
	}
}

func TestDirectivesMerge(t *testing.T) {
	a := Directives{NoIndex: true}
	b := Directives{NoFollow: true}
	if got := a.Merge(b); got != (Directives{NoIndex: true, NoFollow: true}) {
		t.Errorf("Merge = %+v", got)
	}
	if got := (Directives{}).Merge(Directives{}); got != (Directives{}) {
		t.Errorf("Merge of zero values = %+v", got)
	}
}

func TestProductToken(t *testing.T) {
	for in, want := range map[string]string{
		"lidi/0.1 (+https://example.org)": "lidi",
		"  Googlebot-Image/1.0":           "Googlebot-Image",
		"ia_archiver":                     "ia_archiver",
		"Mozilla/5.0 (compatible; x)":     "Mozilla",
		"*":                               "",
		"":                                "",
		"360Spider":                       "",
	} {
		if got := ProductToken(in); got != want {
			t.Errorf("ProductToken(%q) = %q, want %q", in, got, want)
		}
	}
}
