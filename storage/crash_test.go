package storage

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zlib"

	"lidi/engine/record"
)

// The kill -9 test: a child process (this test binary, re-executed) applies
// numbered batches in a loop and prints the number of each batch whose Apply
// returned; the parent kills it with SIGKILL at a random moment, then opens
// the file and checks that it is intact, that every batch reported committed
// is wholly there, and that no later batch left anything behind. It does so
// several times on one file, the child resuming from what it finds, as a
// crawl restarted after kill -9 does. Every other round the child writes
// its batches three to a transaction (Write, Write, Write, Commit), as the
// engine's committer does between its commits, and reports each group
// once committed: a group is then wholly there or not at all.

const (
	crashEnv      = "LIDI_STORAGE_CRASH_DB"
	crashGroupEnv = "LIDI_STORAGE_CRASH_GROUP"
)

// A batch holds every kind of record a crawl's does, at about the size
// of one flush of a small crawl: the kill lands inside such transactions,
// and every round checks the whole file, which each batch makes bigger.
const (
	crashURLs  = 100 // new URLs per batch
	crashPages = 50  // URLs of the previous batch fetched per batch
	crashLinks = 10  // links per page
)

// crashID is the ID of URL j of batch i: spread over all 64 bits.
func crashID(i, j int) uint64 {
	x := uint64(i)<<16 | uint64(j) + 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return (x ^ x>>31) | 1
}

func crashBody(i, j int) []byte {
	return []byte(strings.Repeat(fmt.Sprintf("batch %d url %d. ", i, j), 40))
}

var (
	crashZBuf bytes.Buffer
	crashZ    = zlib.NewWriter(&crashZBuf)
)

// crashCompress is compress without a new zlib.Writer per body, so that the
// child spends its time in Apply, where the kills should land.
func crashCompress(b []byte) []byte {
	crashZBuf.Reset()
	crashZ.Reset(&crashZBuf)
	crashZ.Write(b)
	crashZ.Close()
	return bytes.Clone(crashZBuf.Bytes())
}

// crashBatch is batch i: crashURLs new URLs; pages for the first crashPages
// URLs of batch i-1, with bodies, each linking to crashLinks new URLs; one
// event; site 1 updated with the batch number.
func crashBatch(t testing.TB, i int) *record.Batch {
	b := &record.Batch{}
	s := site(1)
	s.Fetched = int64(i)
	b.Sites = append(b.Sites, s)
	for j := range crashURLs {
		b.URLs = append(b.URLs, record.URLRecord{ID: crashID(i, j), Site: 1,
			URL: fmt.Sprintf("http://s1.test/%d/%d", i, j), Depth: i, Priority: float64(i), Seq: int64(i*crashURLs + j),
			Parent: crashID(i-1, 0), Discovered: t0, State: record.URLQueued})
	}
	if i > 0 {
		for j := range crashPages {
			body := crashBody(i-1, j)
			b.Pages = append(b.Pages, record.PageRecord{URL: crashID(i-1, j), Site: 1, Fetched: t0, Status: 200,
				Length: int64(len(body)), Body: crashCompress(body), Links: crashLinks})
			for k := range crashLinks {
				b.Links = append(b.Links, record.Link{From: crashID(i-1, j), To: crashID(i, (j+k)%crashURLs)})
			}
		}
	}
	b.Events = append(b.Events, record.Event{Time: t0, Kind: "batch", Text: strconv.Itoa(i)})
	return b
}

// TestCrashChild is the child's side; it runs only when re-executed.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("run by TestKill9")
	}
	db, err := Open(path, Options{})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	st, err := db.Stats(context.Background())
	if err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	group, _ := strconv.Atoi(os.Getenv(crashGroupEnv))
	// Bounded: the parent kills us long before this ends.
	for i := int(st.Events); i < int(st.Events)+100000; i++ {
		err := db.Write(context.Background(), crashBatch(t, i))
		if err == nil && (i-int(st.Events)+1)%max(group, 1) == 0 {
			if err = db.Commit(context.Background()); err == nil {
				fmt.Printf("committed %d\n", i)
			}
		}
		if err != nil {
			fmt.Println("error", err)
			os.Exit(3)
		}
	}
	os.Exit(4)
}

func TestKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	// Parallel: the child does the work in its own process, and the test
	// measures nothing process-wide.
	t.Parallel()
	path := filepath.Join(t.TempDir(), "crawl.db")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	committed := -1
	for round := range 6 {
		group := 1 + 2*(round%2)
		committedBefore := committed
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+path, fmt.Sprintf("%s=%d", crashGroupEnv, group))
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		// Kill after a random number of commits (at least two, to time
		// them), then at a random point of the next transaction. The file
		// grows with every commit, and each round checks all of it (an
		// integrity_check, slow under the race detector), so few commits
		// a round: where the kill lands comes from the random delay below.
		target := 2 + rng.IntN(8)
		seen := 0
		var first, last time.Time
		deadline := time.After(2 * time.Minute)
		checkedLock := false
	read:
		for seen < target {
			select {
			case line, ok := <-lines:
				if !ok {
					break read
				}
				n, found := strings.CutPrefix(line, "committed ")
				if !found {
					if strings.HasPrefix(line, "error") {
						t.Errorf("round %d child: %s", round, line)
					}
					continue
				}
				i, _ := strconv.Atoi(n)
				if i != committed+group {
					t.Errorf("round %d: child committed batch %d after %d, in groups of %d", round, i, committed, group)
				}
				committed = i
				seen++
				last = time.Now()
				if seen == 1 {
					first = last
				}
				if !checkedLock {
					checkedLock = true
					// The child holds the lock: Open fails at once,
					// naming it.
					_, err := Open(path, Options{})
					var le *LockedError
					if !errors.As(err, &le) || le.PID != cmd.Process.Pid {
						t.Errorf("Open while the child writes: %v (child pid %d)", err, cmd.Process.Pid)
					}
					// Export works from another process meanwhile.
					snap := filepath.Join(t.TempDir(), "snap.db")
					if err := Export(context.Background(), path, snap); err != nil {
						t.Errorf("Export while the child writes: %v", err)
					} else {
						checkCrashFile(t, snap, -1, group)
					}
				}
			case <-deadline:
				t.Errorf("round %d: child too slow (%d commits)", round, seen)
				break read
			}
		}
		// Kill at a random point of the next batch's life.
		if seen > 1 {
			period := last.Sub(first) / time.Duration(seen-1)
			time.Sleep(time.Duration(rng.Int64N(int64(period) + 1)))
		}
		cmd.Process.Signal(syscall.SIGKILL)
		// Drain what the child printed before it died: those batches
		// were committed too.
		for line := range lines {
			if n, found := strings.CutPrefix(line, "committed "); found {
				committed, _ = strconv.Atoi(n)
			}
		}
		err = cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("round %d: child ended with %v, not by SIGKILL", round, err)
		}
		start := committedBefore + 1
		got := checkCrashFile(t, path, committed, group)
		if (got-start)%group != 0 {
			t.Errorf("round %d: %d batches in the file, not whole groups of %d from %d", round, got, group, start)
		}
		t.Logf("round %d: killed after batch %d reported (groups of %d), %d batches in the file", round, committed, group, got)
		committed = got - 1
		if t.Failed() {
			return
		}
	}
}

// checkCrashFile opens a file the crash child wrote and checks it batch by
// batch. reported is the last batch the child reported committed (-1 if
// unknown), of groups of group batches a transaction. It returns the number
// of batches in the file.
func checkCrashFile(t *testing.T, path string, reported, group int) int {
	t.Helper()
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("Open after kill: %v", err)
	}
	defer db.Close()
	r := rawOpen(t, path)
	checkConsistent(t, r)
	st, err := db.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := int(st.Events) // one event per batch
	if n < reported+1 {
		t.Fatalf("%d batches in the file, but batch %d was reported committed", n, reported)
	}
	if n > reported+1+group && reported >= 0 {
		t.Fatalf("%d batches in the file, but the child reported only up to %d", n, reported)
	}
	// Each batch wholly present; none beyond.
	want := Stats{URLs: int64(n * crashURLs), Fetched: int64(max(n-1, 0) * crashPages),
		Links: int64(max(n-1, 0) * crashPages * crashLinks), Bodies: int64(max(n-1, 0) * crashPages)}
	want.Queued = want.URLs - want.Fetched
	if st.URLs != want.URLs || st.Fetched != want.Fetched || st.Queued != want.Queued || st.Links != want.Links ||
		st.Bodies != want.Bodies || st.Pages != want.Bodies {
		t.Errorf("%d batches: stats %+v, want %+v", n, st, want)
	}
	var texts []int
	rows, err := r.Query("SELECT text FROM events ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		rows.Scan(&s)
		i, _ := strconv.Atoi(s)
		texts = append(texts, i)
	}
	rows.Close()
	for i, v := range texts {
		if v != i {
			t.Fatalf("event %d says batch %d", i, v)
		}
	}
	for _, i := range []int{0, n / 2, n - 1, n} {
		var count int64
		err := r.QueryRow("SELECT count(*) FROM urls WHERE depth = ?", i).Scan(&count)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			t.Fatal(err)
		}
		if wantN := int64(crashURLs); (i < n && count != wantN) || (i >= n && count != 0) {
			t.Errorf("batch %d: %d URLs", i, count)
		}
	}
	if n >= 2 {
		body, err := db.Page(context.Background(), crashID(n-2, crashPages-1))
		if err != nil || string(body) != string(crashBody(n-2, crashPages-1)) {
			t.Errorf("body of the last batch: %q, %v", body, err)
		}
	}
	var siteFetched int64
	r.QueryRow("SELECT fetched FROM sites WHERE id = 1").Scan(&siteFetched)
	if n > 0 && siteFetched != int64(n-1) {
		t.Errorf("site says batch %d, file has %d batches", siteFetched, n)
	}
	return n
}
