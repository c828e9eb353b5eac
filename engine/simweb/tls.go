package simweb

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"sync"
	"time"
)

// unknownHostName is the name on the certificate a TLS web's server shows
// to a client that names no host it serves (or none: an IP address): the
// client's check of the name fails, as it does on the real web.
const unknownHostName = "unknown.simweb.invalid"

// certAuthority is a TLS web's own CA: it signs a certificate for each host
// the first time a client names it. It is safe for concurrent use.
type certAuthority struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	pem     []byte
	leafKey *ecdsa.PrivateKey // one key for every host: a host costs one signature

	mu     sync.Mutex
	byHost map[string]*tls.Certificate
}

func newCertAuthority() (*certAuthority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("simweb: CA key: %w", err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("simweb: host key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "simweb test CA", Organization: []string{"lidi simweb"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(30 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("simweb: CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("simweb: CA certificate: %w", err)
	}
	return &certAuthority{
		cert: cert, key: key, leafKey: leafKey,
		pem:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		byHost: make(map[string]*tls.Certificate),
	}, nil
}

// certificate returns host's certificate, signing it on first use.
func (ca *certAuthority) certificate(host string) (*tls.Certificate, error) {
	ca.mu.Lock()
	defer ca.mu.Unlock()
	if c := ca.byHost[host]; c != nil {
		return c, nil
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(int64(len(ca.byHost)) + 2),
		Subject:      pkix.Name{CommonName: host},
		DNSNames:     []string{host},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(30 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &ca.leafKey.PublicKey, ca.key)
	if err != nil {
		return nil, fmt.Errorf("simweb: certificate for %s: %w", host, err)
	}
	c := &tls.Certificate{Certificate: [][]byte{der, ca.cert.Raw}, PrivateKey: ca.leafKey}
	ca.byHost[host] = c
	return c, nil
}

// tlsConfig serves each host the web knows its own certificate.
func (s *Server) tlsConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"http/1.1"},
		GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
			host := canonicalHost(hello.ServerName)
			if _, known := s.web.hosts[host]; !known || net.ParseIP(host) != nil {
				host = unknownHostName
			}
			return s.ca.certificate(host)
		},
	}
}

// CA returns the PEM certificate of the CA that signs a TLS web's host
// certificates (what a client trusts to fetch it), or nil on an HTTP web.
func (s *Server) CA() []byte {
	if s.ca == nil {
		return nil
	}
	return s.ca.pem
}

// curlCA is the curl option that trusts a TLS web's CA, for Info.
func (s *Server) curlCA() string {
	if s.ca == nil {
		return ""
	}
	return "--cacert CA.pem "
}
