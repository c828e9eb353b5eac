package config

import (
	"os"
	"slices"
	"strings"
	"testing"

	"lidi/engine/dedup"
	"lidi/engine/record"
)

// A slave makes fingerprints and digests with the functions of its
// master's crawl file: the settings name them, and a master of before
// that names none made those of before. testdata/master-settings-s37.yaml
// is what a session-37 master (a6fffbd) published: its word hash, no
// digest (it made CRC-64's whatever its file).
func TestParseSettingsOfAMasterOfBefore(t *testing.T) {
	s37, err := os.ReadFile("testdata/master-settings-s37.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var unnamed []string // a master's settings of before the word hash was published
	for _, l := range strings.Split(string(s37), "\n") {
		if !strings.HasPrefix(l, "dedup.word_hash:") {
			unnamed = append(unnamed, l)
		}
	}
	with := func(lines ...string) []byte {
		return []byte(strings.Join(append(slices.Clone(unnamed), lines...), "\n"))
	}
	for _, tt := range []struct {
		name       string
		settings   []byte
		wantHash   dedup.WordHash
		wantDigest record.DigestKind
	}{
		{"session 37's master", s37, dedup.WordHashMix, record.DigestCRC64},
		{"a master naming neither", with(), dedup.WordHashFNV, record.DigestCRC64},
		{"a master naming those of before", with("dedup.word_hash: fnv1a64", "storage.digest: crc64-ecma"), dedup.WordHashFNV, record.DigestCRC64},
		{"a master naming the newest", with("dedup.word_hash: mix64", "storage.digest: crc32c-crc32"), dedup.WordHashMix, record.DigestCRC32Pair},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseSettings(tt.settings)
			if err != nil {
				t.Fatal(err)
			}
			rc := f.Engine().Robot()
			if rc.WordHash.Or() != tt.wantHash || rc.Digest.Or() != tt.wantDigest {
				t.Errorf("a slave makes %v fingerprints and %v digests, want %v and %v", rc.WordHash.Or(), rc.Digest.Or(), tt.wantHash, tt.wantDigest)
			}
		})
	}
}
