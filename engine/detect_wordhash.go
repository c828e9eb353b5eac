package engine

import (
	"context"
	"fmt"

	"lidi/engine/dedup"
	"lidi/engine/record"
)

// metaStore is what the engine needs of a Store that keeps named values
// (storage.DB does, in its meta table): here, the word hash its pages'
// fingerprints were made with. A Store without it (MemStore) lives no
// longer than the process, which makes every fingerprint with
// dedup.NewestWordHash.
type metaStore interface {
	Meta(ctx context.Context, key string) (value string, ok bool, err error)
	SetMeta(ctx context.Context, key, value string) error
}

// keyWordHash names, in the crawl file's meta table, the function its
// fingerprints hash words with (dedup.WordHash's String).
const keyWordHash = "dedup.word_hash"

// crawlWordHash returns the word hash the crawl's fingerprints are made
// with, the one the file's stored fingerprints were made with: they are
// compared with every page fetched after (near-duplicates, a recrawled
// page's change). A file that names none and has pages fetched was
// written before the word hash had a name: dedup.WordHashFNV. A new file
// gets newFile (dedup.word_hash). The choice is recorded in the file at
// once.
func crawlWordHash(ctx context.Context, store record.Store, newFile dedup.WordHash) (dedup.WordHash, error) {
	ms, ok := store.(metaStore)
	if !ok {
		return newFile.Or(), nil
	}
	v, ok, err := ms.Meta(ctx, keyWordHash)
	if err != nil {
		return 0, err
	}
	if ok {
		return dedup.ParseWordHash(v)
	}
	c, err := store.Counters(ctx)
	if err != nil {
		return 0, err
	}
	wh := newFile.Or()
	if c.Pages > 0 {
		wh = dedup.WordHashFNV
	}
	if err := ms.SetMeta(ctx, keyWordHash, wh.String()); err != nil {
		return 0, fmt.Errorf("engine: recording the word hash: %w", err)
	}
	return wh, nil
}
