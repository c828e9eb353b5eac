package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"lidi/engine/cluster"
	"lidi/engine/dedup"
	"lidi/engine/record"
	"lidi/engine/simweb"
	"lidi/engine/simweb/simwebtest"
	"lidi/storage"
)

// fetchedURLs returns the URLs a crawl database holds as fetched, sorted.
func fetchedURLs(t *testing.T, path string) []string {
	t.Helper()
	var urls []string
	for u := range fetchedTexts(t, path) {
		urls = append(urls, u)
	}
	slices.Sort(urls)
	return urls
}

// fetchedTexts returns the text fingerprint (simhash) of each page fetched
// in the crawl file at path, by URL.
func fetchedTexts(t *testing.T, path string) map[string]fetchedPrint {
	t.Helper()
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	texts := make(map[string]fetchedPrint)
	if err := db.Fingerprints(context.Background(), func(p record.FetchedPage) { texts[p.Addr] = fetchedPrint{p.Simhash, p.Digest} }); err != nil {
		t.Fatal(err)
	}
	return texts
}

// fetchedPrint is a stored page's text fingerprint and content digest.
type fetchedPrint struct{ text, digest uint64 }

// beginWith makes a crawl file at path whose fingerprints are to be made
// with wh and digests with dk, as a file begun under them is.
func beginWith(t *testing.T, path string, wh dedup.WordHash, dk record.DigestKind) {
	t.Helper()
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.SetMeta(context.Background(), dedup.MetaWordHash, wh.String()); err != nil {
		t.Fatal(err)
	}
	if err := db.SetMeta(context.Background(), record.MetaDigest, dk.String()); err != nil {
		t.Fatal(err)
	}
}

var (
	slaveHint  = regexp.MustCompile(`lidi slave --master (\S+) --token-file (\S+)`)
	dnsQueries = regexp.MustCompile(`dns_queries=(\d+)`)
)

// The same tiny web crawled by local robots and by a master with two light
// slaves stores the same pages with the same fingerprints, and the slaves
// ask the DNS server nothing: every query simweb answered came from the
// master's resolver. Both files were begun with the older word hash and
// content digest: the slaves make the file's fingerprints and digests, not
// the newest functions' (they did).
func TestTwoSlavesStoreWhatLocalRobotsStore(t *testing.T) {
	srv := startWeb(t)
	localDir, clusterDir := t.TempDir(), t.TempDir()
	beginWith(t, filepath.Join(localDir, "crawl.db"), dedup.WordHashFNV, record.DigestCRC64)
	beginWith(t, filepath.Join(clusterDir, "crawl.db"), dedup.WordHashFNV, record.DigestCRC64)
	var out strings.Builder
	if code := run([]string{"crawl", "--config", writeConfig(t, localDir, srv, ""), "--headless"}, &out, io.Discard); code != 0 {
		t.Fatalf("local crawl: exit %d\n%s", code, out.String())
	}
	local := fetchedURLs(t, filepath.Join(localDir, "crawl.db"))
	if len(local) < 50 {
		t.Fatalf("the local crawl fetched %d pages", len(local))
	}

	srv.ResetWitness()
	// A heartbeat a loaded machine keeps: slaves silent for three are
	// declared gone and their leases given back, which costs pages
	// fetched twice.
	cfg := writeConfig(t, clusterDir, srv, "cluster:\n  listen: 127.0.0.1:0\n  heartbeat: 500ms\n")
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() { done <- run([]string{"crawl", "--config", cfg, "--headless"}, pw, io.Discard); pw.Close() }()
	lines := bufio.NewScanner(pr)
	var url, token string
	var masterOut []string
	for url == "" && lines.Scan() {
		masterOut = append(masterOut, lines.Text())
		if m := slaveHint.FindStringSubmatch(lines.Text()); m != nil {
			tok, err := readTokenFile(m[2], nil)
			if err != nil {
				t.Fatal(err)
			}
			url, token = m[1], tok
		}
	}
	if url == "" {
		t.Fatalf("the master did not say how to join it:\n%s", strings.Join(masterOut, "\n"))
	}
	ctx, stopSlaves := context.WithCancel(context.Background())
	slavesDone := make(chan struct{}, 2)
	var slaves []*cluster.Slave
	for _, id := range []string{"one", "two"} {
		s, err := cluster.NewSlave(cluster.SlaveOptions{Dial: cluster.DialOptions{URL: url, Auth: cluster.Auth{Token: token}},
			ID: id, Robots: 2, SpoolPath: filepath.Join(clusterDir, id+".spool"), NewWork: slaveWork, Heartbeat: 500 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		slaves = append(slaves, s)
		go func() { s.Run(ctx); slavesDone <- struct{}{} }()
	}
	for lines.Scan() {
		masterOut = append(masterOut, lines.Text())
	}
	code := <-done
	stopSlaves()
	<-slavesDone
	<-slavesDone
	if code != 0 {
		t.Fatalf("master: exit %d\n%s", code, strings.Join(masterOut, "\n"))
	}
	got := fetchedURLs(t, filepath.Join(clusterDir, "crawl.db"))
	if !slices.Equal(got, local) {
		t.Errorf("the cluster stored %d pages, the local robots %d; they differ", len(got), len(local))
	}
	localTexts, clusterTexts := fetchedTexts(t, filepath.Join(localDir, "crawl.db")), fetchedTexts(t, filepath.Join(clusterDir, "crawl.db"))
	differ, digests := 0, 0
	for u, p := range clusterTexts {
		if lp, ok := localTexts[u]; ok && lp.text != p.text {
			differ++
		}
		if lp, ok := localTexts[u]; ok && lp.digest != p.digest {
			digests++
		}
	}
	if differ > 0 || digests > 0 {
		t.Errorf("of the %d pages, %d have another text fingerprint and %d another digest from the slaves than from the local robots", len(clusterTexts), differ, digests)
	}
	var bySlaves int64
	for _, s := range slaves {
		bySlaves += s.Stats().Pages
	}
	if bySlaves != int64(len(got)) {
		t.Errorf("the slaves fetched %d pages, the master stored %d (it has no robots of its own)", bySlaves, len(got))
	}
	var master int64 = -1
	for _, l := range masterOut {
		if m := dnsQueries.FindStringSubmatch(l); m != nil {
			master, _ = strconv.ParseInt(m[1], 10, 64)
		}
	}
	if w := srv.Witness().DNS.Queries; master < 0 || w != master {
		t.Errorf("simweb answered %d DNS queries, the master sent %d: the slaves asked %d", w, master, w-master)
	}
}

// A master on an external NATS server (cluster.nats_url, no server of its
// own) crawls with its own robots and stops cleanly at the end.
func TestClusterMasterOnAnExternalServer(t *testing.T) {
	web := simwebtest.Start(t, simweb.Options{Seed: 2, Sites: 1, Pages: 20})
	dir := t.TempDir()
	const tok = "external-server-token"
	ns, err := cluster.StartServer(cluster.ServerOptions{Listen: "127.0.0.1:0", StoreDir: filepath.Join(dir, "nats"), Auth: cluster.Auth{Token: tok}})
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	cfg := writeConfig(t, dir, web, fmt.Sprintf("cluster:\n  nats_url: %s\n  token: %s\n  local_robots: 2\n  heartbeat: 100ms\n", ns.URL(), tok))
	var out, errOut strings.Builder
	if code := run([]string{"crawl", "--config", cfg, "--headless"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	if got := fetchedURLs(t, filepath.Join(dir, "crawl.db")); len(got) == 0 {
		t.Errorf("the master's own robots fetched nothing\n%s", out.String())
	}
}

// The join command names the master's host when it listens on every
// interface, and passes the token in a file, never on the command line.
func TestJoinCommand(t *testing.T) {
	host, _ := os.Hostname()
	tests := []struct {
		url       string
		auth      cluster.Auth
		tokenFile string
		want      string
	}{
		{"nats://0.0.0.0:4222", cluster.Auth{Token: "secret"}, "/data/crawl.db.cluster-token",
			"lidi slave --master nats://" + host + ":4222 --token-file /data/crawl.db.cluster-token (a copy of this file on the slave's machine)"},
		{"nats://10.1.2.3:4222", cluster.Auth{Token: "secret"}, "",
			"lidi slave --master nats://10.1.2.3:4222 --token-file FILE (a file holding cluster.token)"},
		{"nats://[::]:4222", cluster.Auth{NKey: "UABC"}, "",
			"lidi slave --master nats://" + net.JoinHostPort(host, "4222") + " --nkey-seed SEED_FILE"},
	}
	for _, tt := range tests {
		got := joinCommand(tt.url, tt.auth, tt.tokenFile, false)
		if got != tt.want {
			t.Errorf("joinCommand(%s) = %q, want %q", tt.url, got, tt.want)
		}
		if strings.Contains(got, "secret") {
			t.Errorf("the join command shows the token: %q", got)
		}
	}
}

func TestReadTokenFile(t *testing.T) {
	dir := t.TempDir()
	good, empty := filepath.Join(dir, "tok"), filepath.Join(dir, "empty")
	os.WriteFile(good, []byte("  abc123\n"), 0o600)
	os.WriteFile(empty, []byte("\n"), 0o600)
	if tok, err := readTokenFile(good, nil); err != nil || tok != "abc123" {
		t.Errorf("a token file: %q, %v", tok, err)
	}
	if tok, err := readTokenFile("-", strings.NewReader("def456\n")); err != nil || tok != "def456" {
		t.Errorf("standard input: %q, %v", tok, err)
	}
	for _, p := range []string{empty, filepath.Join(dir, "missing")} {
		if _, err := readTokenFile(p, nil); err == nil {
			t.Errorf("%s: no error", p)
		}
	}
}

// A stopping master lists each lease it waits for, with its slave and
// until when; nothing when it waits for none.
func TestWaitingText(t *testing.T) {
	now := time.Date(2026, 11, 26, 14, 3, 20, 0, time.UTC)
	if got := waitingText(nil, now); got != "" {
		t.Errorf("nothing out: %q", got)
	}
	got := waitingText([]cluster.Waiting{{ID: "412", Site: "http://a.test", Slave: "s1", Until: now.Add(90 * time.Second)},
		{ID: "417", Site: "http://b.test", Until: now.Add(time.Minute)}}, now)
	for _, want := range []string{"waiting for 2 leases", "lease 412 of http://a.test, slave s1, until 14:04:50",
		"lease 417 of http://b.test, no slave has named it yet, until 14:04:20", "q or ctrl+c again stops now"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
}
