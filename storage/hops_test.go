package storage

import (
	"reflect"
	"testing"

	"lidi/engine/fetch"
)

// A robots.txt redirect chain round-trips through sites.robots_redirects
// and robots_end; text that is not one (a file edited by hand) is a clear
// error, not a chain read wrong.
func TestRobotsChainColumns(t *testing.T) {
	for _, tc := range []struct {
		name    string
		hops    []fetch.Hop
		text    string // what is stored; "" for NULL
		bad     string // stored text that must be refused
		wantErr string
	}{
		{name: "none"},
		{name: "one", hops: []fetch.Hop{{URL: "http://a.test/robots.txt", Status: 301}}, text: "301 http://a.test/robots.txt"},
		{name: "two, a space in a URL kept", hops: []fetch.Hop{{URL: "http://a.test/robots.txt", Status: 301}, {URL: "https://a.test/x y", Status: 308}},
			text: "301 http://a.test/robots.txt\n308 https://a.test/x y"},
		{name: "no status", bad: "http://a.test/robots.txt", wantErr: `bad redirect "http://a.test/robots.txt"`},
		{name: "no URL", bad: "301 ", wantErr: `bad redirect "301 "`},
		{name: "status not a number", bad: "30x http://a.test/", wantErr: `bad redirect "30x http://a.test/"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.bad != "" {
				if _, err := parseHops(tc.bad); err == nil || err.Error() != tc.wantErr {
					t.Errorf("parseHops(%q) = %v, want %q", tc.bad, err, tc.wantErr)
				}
				return
			}
			stored := formatHops(tc.hops)
			if s, _ := stored.(string); s != tc.text || (tc.text == "") != (stored == nil) {
				t.Errorf("formatHops = %#v, want %q", stored, tc.text)
			}
			back, err := parseHops(tc.text)
			if err != nil || !reflect.DeepEqual(back, tc.hops) {
				t.Errorf("parseHops(%q) = %+v, %v; want %+v", tc.text, back, err, tc.hops)
			}
		})
	}
	for e := fetch.ChainAnswered; e <= fetch.ChainFailed; e++ {
		if got, err := parseChainEnd(e.String()); err != nil || got != e {
			t.Errorf("parseChainEnd(%q) = %v, %v", e.String(), got, err)
		}
	}
	if _, err := parseChainEnd("teleported"); err == nil {
		t.Error("an unknown chain end read without error")
	}
}
