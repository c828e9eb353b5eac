package storage

import (
	"context"
	"slices"
	"testing"
	"time"

	"lidi/engine/fetch"
	"lidi/engine/record"
)

// Captures reads a file written before the heads were kept (version 5,
// not upgraded: an export opens it read-only) with no heads, one of
// version 8 (links one row a link), one of version 9 (urls keyed by their
// IDs), one of version 10 (no references in urls), and a current one; bodies, links and
// fetches come back per URL in order.
func TestCapturesOfOldAndNewFiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		old  bool
		drop []string
	}{{"version 11", false, nil}, {"version 10", false, append(slices.Clip(dropVersion11), "PRAGMA user_version = 10")}, {"version 9", false, append(slices.Clip(dropVersion10), "PRAGMA user_version = 9")}, {"version 8", false, append(slices.Clip(dropVersion9), "PRAGMA user_version = 8")},
		{"version 5", true, slices.Concat(dropVersion7, dropVersion6, []string{"PRAGMA user_version = 5"})}} {
		t.Run(tc.name, func(t *testing.T) {
			db := openTest(t)
			s := site(1)
			s.RobotsStatus, s.RobotsFetched, s.RobotsBody = 200, t0, []byte("User-agent: *\n")
			s.RobotsWire, s.RobotsIP = compress(t, []byte("GET /robots.txt HTTP/1.1\r\n\r\nHTTP/1.1 200 OK\r\n\r\n")), "127.0.0.9"
			wire := compress(t, []byte("GET /1 HTTP/1.1\r\n\r\nHTTP/1.1 200 OK\r\n\r\n"))
			body := compress(t, []byte("<html>one</html>"))
			apply(t, db, record.Batch{Sites: []record.SiteRecord{s}, URLs: []record.URLRecord{queued(1, 1, 0, 1), queued(2, 1, 1, 2), queued(3, 1, 1, 3)},
				Pages: []record.PageRecord{{URL: 1, Site: 1, Fetched: t0, Status: 200, Body: body, Wire: wire, IP: "127.0.0.9"}},
				Links: []record.Link{{From: 1, To: 2}, {From: 1, To: 3}}})
			apply(t, db, record.Batch{Pages: []record.PageRecord{{URL: 1, Site: 1, Fetched: t0.Add(time.Hour), Status: 304, Recrawl: true, Verdict: fetch.VerdictNotModified, Wire: wire}}})
			db.Close()
			execRaw(t, db.Path(), tc.drop...)
			c, err := OpenCaptures(context.Background(), db.Path())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var urls []*CapturedURL
			if err := c.URLs(context.Background(), func(u *CapturedURL) error { urls = append(urls, u); return nil }); err != nil {
				t.Fatal(err)
			}
			if len(urls) != 1 || len(urls[0].Fetches) != 2 || string(urls[0].Body) != string(body) || !slices.Equal(urls[0].Links, []string{"http://s1.test/2", "http://s1.test/3"}) {
				t.Fatalf("urls %d, first %+v", len(urls), *urls[0])
			}
			f := urls[0].Fetches
			if f[0].Status != 200 || f[1].Status != 304 || !f[1].Recrawl || (f[0].Wire != nil) == tc.old || (f[0].IP == "127.0.0.9") == tc.old {
				t.Errorf("fetches %+v", f)
			}
			var robots []RobotsCapture
			if err := c.Robots(context.Background(), func(r RobotsCapture) error { robots = append(robots, r); return nil }); err != nil {
				t.Fatal(err)
			}
			if len(robots) != 1 || robots[0].Status != 200 || (robots[0].Wire != nil) == tc.old {
				t.Errorf("robots %+v", robots)
			}
			var skipped []SkippedURL
			if err := c.Skipped(context.Background(), func(s SkippedURL) error { skipped = append(skipped, s); return nil }); err != nil || len(skipped) != 0 {
				t.Errorf("skipped %+v, %v", skipped, err)
			}
		})
	}
}
