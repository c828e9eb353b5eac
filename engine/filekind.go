package engine

import (
	"context"
	"fmt"

	"lidi/engine/dedup"
	"lidi/engine/record"
)

// metaStore is what the engine needs of a Store that keeps named values
// (storage.DB does, in its meta table): here, the functions its stored
// values were made with. A Store without it (MemStore) lives no longer
// than the process, which makes them with the newest functions.
type metaStore interface {
	Meta(ctx context.Context, key string) (value string, ok bool, err error)
	SetMeta(ctx context.Context, key, value string) error
}

// crawlWordHash returns the word hash the crawl's fingerprints are made
// with, the one the file's stored fingerprints were made with: they are
// compared with every page fetched after (near-duplicates, a recrawled
// page's change). A file of before the word hash had a name used
// dedup.WordHashFNV; a new file gets newFile (dedup.word_hash).
func crawlWordHash(ctx context.Context, store record.Store, newFile dedup.WordHash) (dedup.WordHash, error) {
	return fileKind(ctx, store, dedup.MetaWordHash, newFile.Or(), dedup.WordHashFNV, dedup.ParseWordHash)
}

// crawlDigest returns the function the crawl's content digests are made
// with, the one the file's stored digests were made with: they are
// compared with later ones (exact duplicates, a recrawled page's change,
// a WARC export's revisits). A file of before the digest had a name used
// record.DigestCRC64; a new file gets newFile (storage.digest).
func crawlDigest(ctx context.Context, store record.Store, newFile record.DigestKind) (record.DigestKind, error) {
	return fileKind(ctx, store, record.MetaDigest, newFile.Or(), record.DigestCRC64, record.ParseDigestKind)
}

// fileKind returns the function a crawl file's stored values of one kind
// were made with, named in its meta table under key and read by parse. A
// file that names none and has pages fetched was written before the name
// was recorded: legacy. A new file gets newFile. The choice is recorded
// in the file at once.
func fileKind[K fmt.Stringer](ctx context.Context, store record.Store, key string, newFile, legacy K, parse func(string) (K, error)) (K, error) {
	var zero K
	ms, ok := store.(metaStore)
	if !ok {
		return newFile, nil
	}
	v, ok, err := ms.Meta(ctx, key)
	if err != nil {
		return zero, err
	}
	if ok {
		return parse(v)
	}
	c, err := store.Counters(ctx)
	if err != nil {
		return zero, err
	}
	k := newFile
	if c.Pages > 0 {
		k = legacy
	}
	if err := ms.SetMeta(ctx, key, k.String()); err != nil {
		return zero, fmt.Errorf("engine: recording %s: %w", key, err)
	}
	return k, nil
}
