package bench

import (
	"context"
	"path/filepath"
	"testing"

	"lidi/engine"
	"lidi/engine/record"
	"lidi/engine/simweb"
	"lidi/storage"
)

// A crawl file the benches write through their recorders (lidi bench
// mirror, precision, strategies and recrawl-live keep it with --dir)
// names the functions its digests and fingerprints are made with, as a
// file the engine writes directly does: recorders that hid storage.DB's
// Meta and SetMeta (found in review, s38) let the engine make the newest
// and record nothing, and the file was read later (lidi export --warc, a
// continued crawl) as one of before: CRC-64.
func TestRecordersKeepTheFilesKinds(t *testing.T) {
	for _, tt := range []struct {
		name string
		wrap func(record.Store) record.Store
	}{
		{"storage.DB", func(s record.Store) record.Store { return s }},
		{"recorder", func(s record.Store) record.Store { return newRecorder(s) }},
		{"fetchRecorder", func(s record.Store) record.Store { return newFetchRecorder(s, simweb.Clock{}) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db, err := storage.Open(filepath.Join(t.TempDir(), "crawl.db"), storage.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := engine.New(benchConfig([]string{"http://a.test/"}, 1, 1), tt.wrap(db), nil, nil); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			for _, key := range []string{record.MetaDigest, "dedup.word_hash"} {
				if v, ok, err := db.Meta(ctx, key); err != nil || !ok {
					t.Errorf("meta %s: %q, %v, %v: want the function the engine makes them with recorded", key, v, ok, err)
				}
			}
		})
	}
}
