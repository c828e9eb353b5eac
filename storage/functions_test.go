package storage

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"lidi/engine/dedup"
	"lidi/engine/record"
)

// Version 12 names the functions of a file of before: one with pages
// fetched gets FNV-1a and CRC-64, the functions every lidi used before
// their names were recorded, unless it names one already (a session-37
// file names its word hash); a file without pages gets no name (the
// engine gives it the newest functions when it first crawls it).
func TestUpgradeNamesTheFunctions(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name       string
		pages      bool
		wordHash   string // named in the file of before ("": none)
		wantHash   string // after the upgrade ("": none)
		wantDigest string
	}{
		{"pages, no names", true, "", dedup.WordHashFNV.String(), record.DigestCRC64.String()},
		{"pages, word hash named", true, dedup.WordHashMix.String(), dedup.WordHashMix.String(), record.DigestCRC64.String()},
		{"no pages", false, "", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "crawl.db")
			db, err := Open(path, Options{Now: func() time.Time { return t0 }})
			if err != nil {
				t.Fatal(err)
			}
			if tt.pages {
				for _, b := range orderBatches() {
					if err := db.Apply(ctx, &b); err != nil {
						t.Fatal(err)
					}
				}
			}
			db.Close()
			stmts := []string{"PRAGMA user_version = 11"}
			if tt.wordHash != "" {
				stmts = append(stmts, "INSERT INTO meta (key, value) VALUES ('dedup.word_hash', '"+tt.wordHash+"')")
			}
			execRaw(t, path, stmts...)
			db, _ = openUpgraded(t, path)
			for key, want := range map[string]string{dedup.MetaWordHash: tt.wantHash, record.MetaDigest: tt.wantDigest} {
				v, ok, err := db.Meta(ctx, key)
				if err != nil || ok != (want != "") || v != want {
					t.Errorf("%s: %q (%v, %v), want %q", key, v, ok, err, want)
				}
			}
		})
	}
}
