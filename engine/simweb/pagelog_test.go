package simweb

import (
	"net/url"
	"strconv"
	"testing"
	"time"
)

// The page log counts requests per URL with the time the latest answer was
// sent; robots.txt and misdirected requests stay out, a reset empties it,
// and a server without LogPages keeps none.
func TestPageLog(t *testing.T) {
	w := testWeb(t, smallWeb)
	clock := newFakeClock()
	s := startServer(t, w, ServerConfig{Now: clock.Now, LogPages: true})
	home := s.URL(w.Seeds(1)[0])
	site := w.Site(w.Page(w.Seeds(1)[0]).Site)
	u, err := url.Parse(home)
	if err != nil {
		t.Fatal(err)
	}
	path := u.RequestURI()

	c := dialRaw(t, site.Addr, s.Port())
	t0 := clock.Now()
	c.do(t, site.Host, "/robots.txt")
	c.do(t, site.Host, path)
	clock.Advance(time.Second)
	c.do(t, site.Host, path)
	clock.Advance(time.Second)
	c.do(t, site.Host, path)
	c.do(t, site.Host, "/no-such-page")
	c.do(t, "unknown.test", "/")

	log := s.PageRequests()
	if len(log) != 2 || s.PagesRequested() != 2 {
		t.Fatalf("page log %v (%d URLs), want the home page and the missing page", log, s.PagesRequested())
	}
	want := PageRequests{Requests: 3, LastDone: t0.Add(2 * time.Second)}
	if got := log[home]; !got.LastDone.Equal(want.LastDone) || got.Requests != want.Requests {
		t.Errorf("page log for %s: %+v, want %+v", home, got, want)
	}
	missing := "http://" + site.Host + ":" + strconv.Itoa(s.Port()) + "/no-such-page"
	if got := log[missing]; got.Requests != 1 || !got.LastDone.Equal(t0.Add(2*time.Second)) {
		t.Errorf("page log for %s: %+v, want one request", missing, got)
	}

	s.ResetWitness()
	if log := s.PageRequests(); len(log) != 0 || s.PagesRequested() != 0 {
		t.Errorf("after reset: %v", log)
	}

	plain := startServer(t, w, ServerConfig{})
	dialRaw(t, site.Addr, plain.Port()).do(t, site.Host, path)
	if log := plain.PageRequests(); log != nil || plain.PagesRequested() != 0 {
		t.Errorf("server without LogPages logged %v", log)
	}
}
