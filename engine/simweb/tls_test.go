package simweb

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// A TLS web: pages over HTTPS with a certificate per host from the web's
// own CA, links in https://, plain HTTP answering 301 to HTTPS, and a
// certificate for no host when the client names one the web does not have.
func TestTLSWeb(t *testing.T) {
	w, err := Generate(Options{Seed: 5, Sites: 6, Pages: 60, TLS: true})
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, w, ServerConfig{})
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.CA()) {
		t.Fatal("CA() is not a PEM certificate")
	}
	site := w.Site(w.Page(w.Seeds(1)[0]).Site)
	// Every connection goes to the site's address, whatever the URL says.
	client := func(roots *x509.CertPool) *http.Client {
		return &http.Client{
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			Transport: &http.Transport{
				TLSClientConfig: &tls.Config{RootCAs: roots},
				DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
					_, port, _ := net.SplitHostPort(addr)
					var d net.Dialer
					return d.DialContext(ctx, network, net.JoinHostPort(site.Addr.String(), port))
				},
			}}
	}
	seed := s.SeedURLs(1)[0]
	if !strings.HasPrefix(seed, "https://"+site.Host+":") {
		t.Fatalf("seed %s", seed)
	}
	resp, err := client(pool).Get(seed)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `href="https://`) && !strings.Contains(string(body), `href="/`) {
		t.Errorf("seed: %d\n%s", resp.StatusCode, body)
	}
	if strings.Contains(string(body), `href="http://`) {
		t.Error("a TLS web's page links to http://")
	}

	plain := "http://" + site.Host + ":" + strconv.Itoa(s.HTTPPort()) + "/some/page?x=1"
	resp, err = client(pool).Get(plain)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := "https://" + site.Host + ":" + strconv.Itoa(s.Port()) + "/some/page?x=1"; resp.StatusCode != 301 || resp.Header.Get("Location") != want {
		t.Errorf("plain HTTP: %d to %q, want 301 to %q", resp.StatusCode, resp.Header.Get("Location"), want)
	}

	var verr *tls.CertificateVerificationError
	if _, err := client(nil).Get(seed); !errors.As(err, &verr) {
		t.Errorf("a client without the CA: %v, want a certificate error", err)
	}
	unknown := "https://nosuch.test:" + strconv.Itoa(s.Port()) + "/"
	if _, err := client(pool).Get(unknown); !errors.As(err, &verr) {
		t.Errorf("an unknown host: %v, want a certificate error", err)
	}
	wit := s.Witness()
	if h := wit.Hosts[site.Host]; h.Requests != 2 { // both ports count for the host
		t.Errorf("witness: %+v", h)
	}
}
