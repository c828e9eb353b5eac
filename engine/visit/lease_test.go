package visit_test

import (
	"encoding/json"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"lidi/engine/record"
	"lidi/engine/visit"
)

// Leases and results cross processes as JSON and come back equal.
func TestLeaseAndResultsRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 25, 9, 30, 0, 123456789, time.UTC)
	lease := visit.Lease{
		ID: 1764063000123456789, Site: 7, Key: "http://www.a.test:8080", Host: "www.a.test",
		Addr: netip.MustParseAddr("127.1.0.7"), Port: 8080,
		Robots: &visit.RobotsFile{Status: 200, Body: []byte("User-agent: *\nDisallow: /private/\n"), Fetched: at},
		Delay:  15 * time.Second, NotBefore: at, Deadline: at.Add(30 * time.Minute),
		URLs: []record.QueuedURL{
			{ID: 11, URL: "http://www.a.test:8080/", Depth: 0, Priority: 0, Seq: 1},
			{ID: 12, URL: "http://www.a.test:8080/a?b=c", Depth: 3, Priority: -0.25, Seq: 9},
		},
	}
	results := []visit.Result{
		{Lease: lease.ID, Seq: 1, Page: &visit.PageResult{
			Record: record.PageRecord{URL: 11, Site: 7, Fetched: at, Status: 200, ContentType: "text/html", Length: 5120,
				Duration: 12 * time.Millisecond, Digest: 0xfeedface, Body: []byte{0x78, 0x01, 0x02}, Links: 3, Simhash: 0xabcdef, TypeCheck: "html"},
			URL: "http://www.a.test:8080/", Links: []visit.FoundLink{{URL: "http://www.a.test:8080/x"}, {URL: "http://b.test/"}},
			Skipped: visit.LinkSkips{Scope: 1, NoFollow: 2, Invalid: 3}, Detect: time.Microsecond,
		}},
		{Lease: lease.ID, Seq: 2, End: &visit.LeaseEnd{
			Next: at.Add(time.Minute), Delay: 20 * time.Second, Robots: &visit.RobotsFile{Status: -1, Fetched: at},
			Skips: []record.Skip{{URL: 13, Reason: "robots"}}, Returned: []uint64{12}, Fetched: 1,
			Failure: "timeout", Failed: true, BackedOff: true, RetryAfter: true,
		}},
	}
	roundTrip := func(in, out any) {
		t.Helper()
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(reflect.ValueOf(out).Elem().Interface(), reflect.ValueOf(in).Elem().Interface()) {
			t.Errorf("round trip changed %T:\n in: %+v\nout: %+v\n json: %s", in, in, out, b)
		}
	}
	var l visit.Lease
	roundTrip(&lease, &l)
	for _, r := range results {
		var got visit.Result
		roundTrip(&r, &got)
	}
	// A link's derived fields are worked out again on arrival.
	link := visit.FoundLink{URL: "http://b.test:81/p"}
	if !link.Resolve() || link.Key != "http://b.test:81" || link.Host != "b.test" || link.ID == 0 {
		t.Errorf("resolve: %+v", link)
	}
	if bad := (visit.FoundLink{URL: "no-scheme"}); bad.Resolve() {
		t.Errorf("resolve accepted %q", bad.URL)
	}
	if (*visit.RobotsFile)(nil).Rules() != nil {
		t.Error("a nil robots file has rules")
	}
	if r := lease.Robots.Rules(); r.Allowed("lidi", "/private/x") || !r.Allowed("lidi", "/public") {
		t.Error("robots rules rebuilt wrong")
	}
}
