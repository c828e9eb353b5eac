package simwebtest_test

import (
	"fmt"
	"net"
	"net/http"
	"testing"

	"lidi/engine/simweb"
	"lidi/engine/simweb/simwebtest"
)

// A test starts a small web, which serves its sites on their loopback
// addresses while the test runs and is closed when it ends.
func TestStart(t *testing.T) {
	var site simweb.Site
	var port int
	t.Run("serving", func(t *testing.T) {
		srv := simwebtest.Start(t, simweb.Options{Seed: 1, Sites: 3, Pages: 30})
		site, port = srv.Web().Site(0), srv.Port()
		req, err := http.NewRequest("GET", fmt.Sprintf("http://%s/robots.txt", net.JoinHostPort(site.Addr.String(), fmt.Sprint(port))), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = site.Host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if w := srv.Witness(); w.Totals.Requests != 1 {
			t.Errorf("the witness saw %d requests, want 1", w.Totals.Requests)
		}
	})
	if c, err := net.Dial("tcp", net.JoinHostPort(site.Addr.String(), fmt.Sprint(port))); err == nil {
		c.Close()
		t.Error("the web still serves after its test ended")
	}
}
