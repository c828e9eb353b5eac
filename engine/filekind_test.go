package engine_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"lidi/engine"
	"lidi/engine/dedup"
	"lidi/engine/record"
	"lidi/engine/simweb"
	"lidi/engine/simweb/simwebtest"
	"lidi/storage"
)

// A crawl file keeps the word hash its fingerprints were begun with, since
// they are compared with every page fetched after: a new file records the
// newest and makes every fingerprint with it; a file written before the
// word hash had a name (pages fetched, no name in its meta table) is
// continued with FNV-1a and records that. Each case crawls part of a web,
// then continues the file, and checks the name recorded and every stored
// fingerprint against its body.
func TestCrawlFileKeepsItsWordHash(t *testing.T) {
	t.Parallel()
	srv := simwebtest.Start(t, simweb.Options{Seed: 5, Sites: 4, Pages: 120, PageSizeMedian: smallPages})
	for _, tt := range []struct {
		name string
		old  bool           // a file of before: its first run's fingerprints FNV-1a's, and no name recorded
		set  dedup.WordHash // dedup.word_hash (0: the default)
		want dedup.WordHash
	}{
		{"new file", false, 0, dedup.NewestWordHash},
		{"new file, dedup.word_hash fnv1a64", false, dedup.WordHashFNV, dedup.WordHashFNV},
		{"file of before", true, 0, dedup.WordHashFNV},
		{"file of before, dedup.word_hash mix64", true, dedup.WordHashMix, dedup.WordHashFNV},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// A file of before: FNV-1a's fingerprints, as lidi made them.
			path, db := crawlTwice(t, srv, dedup.MetaWordHash, dedup.WordHashFNV.String(), tt.old, tt.want.String(),
				func(cfg *engine.Config) { cfg.WordHash = tt.set })
			ctx := context.Background()
			other := dedup.WordHashFNV
			if tt.want == other {
				other = dedup.WordHashMix
			}
			checked, differ := 0, 0
			eachRow(t, path, `SELECT id, url, simhash, main_simhash, nourl_simhash, title_hash FROM urls WHERE simhash IS NOT NULL`, func(rows *sql.Rows) error {
				var id int64
				var url string
				var text, main, noURL, title sql.NullInt64
				if err := rows.Scan(&id, &url, &text, &main, &noURL, &title); err != nil {
					return err
				}
				body, err := db.Page(ctx, uint64(id))
				if err != nil {
					return err
				}
				stored := dedup.Fingerprints{Text: uint64(text.Int64), Main: uint64(main.Int64), NoURL: uint64(noURL.Int64), Title: uint64(title.Int64)}
				if fp := tt.want.Fingerprint(body, url); fp != stored {
					t.Errorf("%s: stored %+v, %v gives %+v", url, stored, tt.want, fp)
				}
				if other.Fingerprint(body, url).Text != stored.Text {
					differ++
				}
				checked++
				return nil
			})
			if checked < 60 || differ < checked/2 {
				t.Errorf("%d pages checked, %d of them with another fingerprint under %v: want 60 and most", checked, differ, other)
			}
		})
	}
}

// crawlTwice crawls part of srv's web into a new file, then continues the
// file, with set applied to the configuration, and checks that the file
// names want under key; it returns the file's path and the file, open
// (closed at the test's end). With old, the first run is a file of
// before: made under the function named legacy, whose name is then taken
// out of the file.
func crawlTwice(t *testing.T, srv *simweb.Server, key, legacy string, old bool, want string, set func(*engine.Config)) (string, *storage.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "crawl.db")
	if old {
		setMeta(t, path, key, legacy)
	}
	cfg := crawlConfig(srv.SeedURLs(2))
	cfg.Delay, cfg.MaxDelay = 0, 0
	cfg.MaxPages = 30
	set(&cfg)
	runCrawl(t, cfg, srv.DNSAddr(), path)
	if old {
		execSQL(t, path, `DELETE FROM meta WHERE key = '`+key+`'`)
	}
	cfg.MaxPages = 90
	runCrawl(t, cfg, srv.DNSAddr(), path)
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if v, ok, err := db.Meta(context.Background(), key); err != nil || !ok || v != want {
		t.Fatalf("%s recorded %q (%v, %v), want %q", key, v, ok, err, want)
	}
	return path, db
}

// setMeta records a meta value in the crawl file at path (created if
// need be).
func setMeta(t *testing.T, path, key, value string) {
	t.Helper()
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.SetMeta(context.Background(), key, value); err != nil {
		t.Fatal(err)
	}
}

// execSQL runs a statement on the crawl file at path, closed.
func execSQL(t *testing.T, path, stmt string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(stmt); err != nil {
		t.Fatal(err)
	}
}

// A crawl file naming a word hash or a content digest this lidi does not
// know (one a later lidi wrote) is not crawled on: its fingerprints or
// digests could not be made alike.
func TestCrawlFileOfALaterFunction(t *testing.T) {
	for _, tt := range []struct{ key, name string }{
		{dedup.MetaWordHash, "mix128"},
		{record.MetaDigest, "sha3-64"},
	} {
		t.Run(tt.key, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "crawl.db")
			setMeta(t, path, tt.key, tt.name)
			db, err := storage.Open(path, storage.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			_, err = engine.New(crawlConfig([]string{"http://a.test/"}), db, nil, nil)
			if err == nil || !strings.Contains(err.Error(), `"`+tt.name+`"`) {
				t.Fatalf("engine.New: %v, want an error naming %q", err, tt.name)
			}
		})
	}
}

// A crawl file keeps the content digest its pages' digests were begun
// with, since they are compared with later ones (exact duplicates, a
// recrawled page's change, a WARC export's revisits): a new file records
// storage.digest (the newest by default); a file written before the
// digest had a name is continued with CRC-64. Each case crawls part of a
// web, then continues the file, and checks the name recorded and every
// stored digest against its body.
func TestCrawlFileKeepsItsDigest(t *testing.T) {
	t.Parallel()
	srv := simwebtest.Start(t, simweb.Options{Seed: 5, Sites: 4, Pages: 120, PageSizeMedian: smallPages})
	for _, tt := range []struct {
		name string
		old  bool              // a file of before: its first run's digests CRC-64's, and no name recorded
		set  record.DigestKind // storage.digest (0: the default)
		want record.DigestKind
	}{
		{"new file", false, 0, record.NewestDigest},
		{"new file, storage.digest crc64-ecma", false, record.DigestCRC64, record.DigestCRC64},
		{"file of before", true, 0, record.DigestCRC64},
		{"file of before, storage.digest crc32c-crc32", true, record.DigestCRC32Pair, record.DigestCRC64},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path, db := crawlTwice(t, srv, record.MetaDigest, record.DigestCRC64.String(), tt.old, tt.want.String(),
				func(cfg *engine.Config) { cfg.Digest = tt.set })
			ctx := context.Background()
			checked := 0
			eachRow(t, path, `SELECT id, url, digest FROM urls WHERE digest IS NOT NULL`, func(rows *sql.Rows) error {
				var id, digest int64
				var url string
				if err := rows.Scan(&id, &url, &digest); err != nil {
					return err
				}
				body, err := db.Page(ctx, uint64(id))
				if err != nil {
					return err
				}
				if got := tt.want.Sum(body); got != uint64(digest) {
					t.Errorf("%s: stored digest %x, %v gives %x", url, uint64(digest), tt.want, got)
				}
				checked++
				return nil
			})
			if checked < 60 {
				t.Errorf("%d pages checked, want 60", checked)
			}
		})
	}
}

// A function without a name (set from Go: no YAML can make it) is refused
// before anything is recorded: recorded, the file named a function no
// lidi knows, and its next run was refused (found in review, s38).
func TestNewRefusesAFunctionWithoutAName(t *testing.T) {
	for _, tt := range []struct {
		key string
		set func(*engine.Config)
	}{
		{record.MetaDigest, func(c *engine.Config) { c.Digest = record.DigestKind(7) }},
		{dedup.MetaWordHash, func(c *engine.Config) { c.WordHash = dedup.WordHash(7) }},
	} {
		t.Run(tt.key, func(t *testing.T) {
			db, err := storage.Open(filepath.Join(t.TempDir(), "crawl.db"), storage.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			cfg := crawlConfig([]string{"http://a.test/"})
			tt.set(&cfg)
			if _, err := engine.New(cfg, db, nil, nil); err == nil || !strings.Contains(err.Error(), "(7)") {
				t.Errorf("engine.New: %v, want an error naming the function", err)
			}
			if v, ok, err := db.Meta(context.Background(), tt.key); ok || err != nil {
				t.Errorf("%s recorded %q (%v)", tt.key, v, err)
			}
		})
	}
}
