package cluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/nats-io/nats.go"
)

// startTestServer runs an embedded server on a free loopback port, its
// store in the test's directory.
func startTestServer(t *testing.T, auth Auth) *Server {
	t.Helper()
	srv, err := StartServer(ServerOptions{Listen: "127.0.0.1:0", StoreDir: filepath.Join(t.TempDir(), "nats"), Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

func TestServerRefusesUnauthenticatedClients(t *testing.T) {
	srv := startTestServer(t, Auth{Token: "s3cret"})
	tests := []struct {
		name string
		auth Auth
		ok   bool
	}{
		{"no token", Auth{}, false},
		{"wrong token", Auth{Token: "guess"}, false},
		{"right token", Auth{Token: "s3cret"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nc, err := nats.Connect(srv.URL(), nats.Token(tt.auth.Token), nats.MaxReconnects(0))
			if tt.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				nc.Close()
				return
			}
			if err == nil {
				nc.Close()
				t.Fatal("an unauthenticated client was let in")
			}
			if !errors.Is(err, nats.ErrAuthorization) {
				t.Fatalf("error %v, want an authorization error", err)
			}
		})
	}
}

func TestServerNeedsAuthAndAStoreDir(t *testing.T) {
	if _, err := StartServer(ServerOptions{Listen: "127.0.0.1:0", StoreDir: t.TempDir()}); !errors.Is(err, ErrNoAuth) {
		t.Errorf("no auth: %v, want ErrNoAuth", err)
	}
	if _, err := StartServer(ServerOptions{Listen: "127.0.0.1:0", Auth: Auth{Token: "x"}}); !errors.Is(err, ErrNoStoreDir) {
		t.Errorf("no store dir: %v, want ErrNoStoreDir", err)
	}
}

func TestTokenFileIsCreatedOnceAndPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crawl.db.cluster-token")
	tok, created, err := TokenFile(path)
	if err != nil || !created || len(tok) < 32 {
		t.Fatalf("first call: %q created=%v err=%v", tok, created, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	again, created, err := TokenFile(path)
	if err != nil || created || again != tok {
		t.Fatalf("second call: %q created=%v err=%v, want the first token", again, created, err)
	}
}

// The streams, consumers and bucket can be set up twice (a master and a
// slave both do it) and the store directory given is the one used.
func TestSetUpIsRepeatable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nats")
	srv, err := StartServer(ServerOptions{Listen: "127.0.0.1:0", StoreDir: dir, Auth: Auth{Token: "t"}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	nc, err := Dial(DialOptions{URL: srv.URL(), Auth: Auth{Token: "t"}})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := newJetStream(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 2 {
		if _, err := setUp(ctx, js); err != nil {
			t.Fatal(err)
		}
		if _, err := leaseConsumer(ctx, js, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := leaseConsumer(ctx, js, "eu"); err != nil {
			t.Fatal(err)
		}
		if _, err := resultConsumer(ctx, js); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "jetstream")); err != nil {
		t.Fatalf("JetStream's files are not in the store directory: %v", err)
	}
}
