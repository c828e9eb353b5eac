package record

import (
	"strings"
	"testing"
)

// Each digest against the published check value of its CRCs ("123456789"):
// a digest is stored and compared across runs and machines, so the
// functions must never change.
func TestDigestKinds(t *testing.T) {
	for _, tt := range []struct {
		kind DigestKind
		name string
		want uint64
	}{
		{DigestCRC64, "crc64-ecma", 0x995dc9bbdf1939fa},        // CRC-64/XZ
		{DigestCRC32Pair, "crc32c-crc32", 0xe3069283_cbf43926}, // CRC-32C, CRC-32 (ISO-HDLC)
		{0, "crc32c-crc32", 0xe3069283_cbf43926},               // the zero value: the newest
	} {
		if got := tt.kind.Sum([]byte("123456789")); got != tt.want {
			t.Errorf("%v: Sum = %#x, want %#x", tt.kind, got, tt.want)
		}
		if got := tt.kind.String(); got != tt.name {
			t.Errorf("%d: String = %q, want %q", tt.kind, got, tt.name)
		}
		var back DigestKind
		if err := back.UnmarshalText([]byte(tt.name)); err != nil || back != tt.kind.Or() {
			t.Errorf("%q: read back as %v (%v), want %v", tt.name, back, err, tt.kind.Or())
		}
	}
	if _, err := ParseDigestKind("sha3-64"); err == nil || !strings.Contains(err.Error(), `"sha3-64"`) {
		t.Errorf("ParseDigestKind(sha3-64): %v, want an error naming it", err)
	}
}

// BenchmarkDigest times each digest on a 30 KB body, a simweb page's size
// decoded.
func BenchmarkDigest(b *testing.B) {
	body := []byte(strings.Repeat("<p>The quick brown fox jumps over the lazy dog.</p>\n", 600))
	for _, k := range []DigestKind{DigestCRC64, DigestCRC32Pair} {
		b.Run(k.String(), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			var sink uint64
			for b.Loop() {
				sink += k.Sum(body)
			}
			_ = sink
		})
	}
}
