package fetch_test

import (
	"context"
	"hash/crc64"
	"net/http"
	"testing"
	"time"

	clk "lidi/engine/clock"

	"lidi/engine/dedup"
	"lidi/engine/fetch"
	"lidi/engine/simweb"
)

func TestJudge(t *testing.T) {
	old := fetch.Copy{Digest: 10, Simhash: 0b1111}
	for _, tc := range []struct {
		name            string
		old             fetch.Copy
		status          int
		digest, simhash uint64
		maxHamming      int
		want            fetch.Verdict
	}{
		{"304", old, 304, 0, 0, 3, fetch.VerdictNotModified},
		{"same bytes", old, 200, 10, 0b1111, 3, fetch.VerdictSameDigest},
		{"a timestamp", old, 200, 11, 0b1110, 3, fetch.VerdictSameText},
		{"at the threshold", old, 200, 11, 0b1000, 3, fetch.VerdictSameText},
		{"past it", old, 200, 11, 0b10000, 3, fetch.VerdictChanged},
		{"digests only", old, 200, 11, 0b1111, -1, fetch.VerdictChanged},
		{"no old text", fetch.Copy{Digest: 10}, 200, 11, 0b1111, 3, fetch.VerdictChanged},
		{"no copy", fetch.Copy{}, 200, 11, 0b1111, 3, fetch.VerdictNone},
		{"an error page", old, 500, 11, 0b1111, 3, fetch.VerdictNone},
		{"no body", old, 204, 0, 0, 3, fetch.VerdictNone},
	} {
		got := fetch.Judge(tc.old, tc.status, tc.digest, tc.simhash, tc.maxHamming)
		if got != tc.want {
			t.Errorf("%s: Judge = %v, want %v", tc.name, got, tc.want)
		}
	}
}

var crcTable = crc64.MakeTable(crc64.ECMA)

// TestConditionalAgainstChangingWeb refetches pages of a changing simweb
// with the validators of the last fetch, and checks each verdict against
// the web's ground truth.
func TestConditionalAgainstChangingWeb(t *testing.T) {
	w, err := simweb.Generate(simweb.Options{Seed: 3, Sites: 40, Pages: 400, Change: simweb.ChangeOptions{Enabled: true,
		Intervals: [simweb.MaxChangeGroups]time.Duration{10 * time.Minute, 30 * time.Minute}}})
	if err != nil {
		t.Fatal(err)
	}
	clk := clk.NewFake(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
	srv, err := simweb.Start(context.Background(), w, simweb.ServerConfig{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ch := w.Changes()
	f := fetch.New(fetch.Config{})
	verdicts := map[fetch.Verdict]int{}
	for s := range w.NumSites() {
		site := w.Site(s)
		if site.Pages < 2 {
			continue
		}
		p := site.HomePage + 1
		sess := f.Open(site.Addr, srv.Port())
		get := func(old fetch.Copy) (fetch.Copy, fetch.Verdict) {
			t.Helper()
			resp, err := sess.GetIf(context.Background(), srv.URL(p), old.Validators)
			if err != nil {
				t.Fatal(err)
			}
			cur := old
			if resp.Status != http.StatusNotModified {
				cur = fetch.Copy{Validators: resp.Validators(), Digest: crc64.Checksum(resp.Body, crcTable), Simhash: dedup.Simhash(resp.Body)}
			}
			return cur, fetch.Judge(old, resp.Status, cur.Digest, cur.Simhash, 3)
		}
		cp, _ := get(fetch.Copy{})
		fetched := srv.Clock().Offset()
		for i := range 6 {
			// Every other time past the next change, else before it.
			next, _ := ch.NextChange(p, fetched)
			step := (next - fetched) / 2
			if i%2 == 1 {
				step = next - fetched + time.Second
			}
			clk.Advance(step)
			now := srv.Clock().Offset()
			var v fetch.Verdict
			cp, v = get(cp)
			verdicts[v]++
			changed := ch.Version(p, now) != ch.Version(p, fetched)
			if v.Changed() != changed {
				t.Fatalf("site %d (validators %v, stamped %v): verdict %v, ground truth changed=%v", s, ch.Validators(s), ch.Stamped(s), v, changed)
			}
			if v == fetch.VerdictNotModified && !ch.Validators(s).ETag() && !ch.Validators(s).LastModified() {
				t.Fatalf("site %d without validators answered 304", s)
			}
			fetched = now
		}
		sess.Close()
	}
	for _, v := range []fetch.Verdict{fetch.VerdictNotModified, fetch.VerdictChanged, fetch.VerdictSameDigest, fetch.VerdictSameText} {
		if verdicts[v] == 0 {
			t.Errorf("no fetch was judged %v: %v", v, verdicts)
		}
	}
}
