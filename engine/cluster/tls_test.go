package cluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testCA is a private authority made for a test, and the files of a
// certificate it signed for 127.0.0.1.
type testCA struct {
	caFile, certFile, keyFile string
}

func newTestCA(t *testing.T, dir, name string) testCA {
	t.Helper()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	write := func(file, typ string, der []byte) string {
		path := filepath.Join(dir, file)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	now := time.Now()
	caKey := key()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name + " test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	srvKey := key()
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "lidi master"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, ca, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		t.Fatal(err)
	}
	return testCA{caFile: write(name+"-ca.pem", "CERTIFICATE", caDER), certFile: write(name+"-cert.pem", "CERTIFICATE", srvDER),
		keyFile: write(name+"-key.pem", "EC PRIVATE KEY", keyDER)}
}

// With TLS, a slave verifies the master's certificate: against the
// authority it is given, else the system's. A certificate of a private
// authority the slave was not given is refused, as is one of another
// authority; the master itself reaches its own server in process.
func TestSlavesVerifyTheMastersCertificate(t *testing.T) {
	dir := t.TempDir()
	ca, other := newTestCA(t, dir, "ours"), newTestCA(t, dir, "other")
	auth := Auth{Token: "s3cret"}
	srv, err := StartServer(ServerOptions{Listen: "127.0.0.1:0", StoreDir: filepath.Join(dir, "nats"), Auth: auth,
		TLS: TLSFiles{Cert: ca.certFile, Key: ca.keyFile}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	m, err := StartMaster(context.Background(), MasterOptions{Server: srv, Dial: DialOptions{Auth: auth}, Timing: testTiming})
	if err != nil {
		t.Fatalf("the master could not reach its own TLS server: %v", err)
	}
	defer m.Close()
	tests := []struct {
		name, ca string
		ok       bool
	}{
		{"no authority given: the system's", "", false},
		{"another authority", other.caFile, false},
		{"the master's authority", ca.caFile, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nc, err := Dial(DialOptions{URL: srv.URL(), Auth: auth, CA: tt.ca})
			if tt.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				defer nc.Close()
				if !nc.TLSRequired() {
					t.Error("connected without TLS")
				}
				if err := nc.Flush(); err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				nc.Close()
				t.Fatal("a certificate the slave cannot verify was accepted")
			}
			if !strings.Contains(err.Error(), "certificate") {
				t.Errorf("error %v, want one about the certificate", err)
			}
		})
	}
}
