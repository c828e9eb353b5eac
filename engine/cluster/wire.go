package cluster

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/zlib"

	"lidi/engine/visit"
)

// Headers of lease and result messages.
const (
	hdrMsgID = "Nats-Msg-Id"   // JetStream's de-duplication key
	hdrLease = "Lidi-Lease"    // the lease id
	hdrDead  = "Lidi-Deadline" // no request after it, by the slave's clock (RFC 3339)
	hdrBeat  = "Lidi-Beat"     // how often it reports progress
	hdrSeq   = "Lidi-Seq"      // a result part's number, from 0
	hdrParts = "Lidi-Parts"    // how many parts a lease's result has; 0: more follow
	hdrSlave = "Lidi-Slave"    // who sent it
)

// ErrBadMessage is wrapped by the errors about a malformed message.
var ErrBadMessage = errors.New("cluster: malformed message")

// resultID is a result part's message id: the lease id and the part's
// number, so that a part sent twice is recognised.
func resultID(lease string, seq int) string { return lease + "." + strconv.Itoa(seq) }

// splitResultID is resultID's inverse.
func splitResultID(id string) (lease string, seq int, err error) {
	i := strings.LastIndexByte(id, '.')
	if i <= 0 {
		return "", 0, fmt.Errorf("%w: result id %q", ErrBadMessage, id)
	}
	seq, err = strconv.Atoi(id[i+1:])
	if err != nil || seq < 0 {
		return "", 0, fmt.Errorf("%w: result id %q", ErrBadMessage, id)
	}
	return id[:i], seq, nil
}

// Compress returns data compressed with zlib: what travels between master
// and slaves, and what a slave spools.
func Compress(data []byte) []byte {
	var buf bytes.Buffer
	w, _ := zlib.NewWriterLevel(&buf, zlib.BestSpeed)
	w.Write(data)
	w.Close()
	return buf.Bytes()
}

// maxInflated bounds what a message may inflate to.
const maxInflated = 256 << 20

// Decompress is Compress's inverse.
func Decompress(data []byte) ([]byte, error) {
	r, err := zlib.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadMessage, err)
	}
	defer r.Close()
	out, err := io.ReadAll(io.LimitReader(r, maxInflated+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadMessage, err)
	}
	if len(out) > maxInflated {
		return nil, fmt.Errorf("%w: inflates past %d bytes", ErrBadMessage, maxInflated)
	}
	return out, nil
}

// spooled is a result part as kept in the spool: the lease's part count
// (0 while the lease runs: more parts follow), then its compressed payload
// (the lease id and number are in the spool id).
func spooled(parts int, payload []byte) []byte {
	return append(binary.AppendUvarint(nil, uint64(parts)), payload...)
}

func unspooled(b []byte) (parts int, payload []byte, err error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > 1<<16 {
		return 0, nil, fmt.Errorf("%w: spooled result", ErrBadMessage)
	}
	return int(n), b[k:], nil
}

func durationHeader(v string, def time.Duration) time.Duration {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return def
	}
	return d
}

func timeHeader(v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: time %q", ErrBadMessage, v)
	}
	return t, nil
}

// maxPart bounds a result part's JSON before compression, well under the
// server's 8 MiB message limit.
const maxPart = 2 << 20

// EncodeLease is the lease as it travels to a slave (Master.Lease
// compresses it).
func EncodeLease(l *visit.Lease) ([]byte, error) {
	b, err := json.Marshal(l)
	if err != nil {
		return nil, fmt.Errorf("cluster: encoding lease %d: %w", l.ID, err)
	}
	return b, nil
}

// DecodeLease is EncodeLease's inverse.
func DecodeLease(b []byte) (*visit.Lease, error) {
	var l visit.Lease
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("%w: lease: %v", ErrBadMessage, err)
	}
	if l.ID == 0 || l.Key == "" || !l.Addr.IsValid() {
		return nil, fmt.Errorf("%w: lease without id, site or address", ErrBadMessage)
	}
	return &l, nil
}

// EncodeResults batches a lease's results into parts (Cho's exchange mode,
// batched per lease): each part a JSON array under maxPart bytes, unless
// one result alone is larger.
func EncodeResults(rs []visit.Result) ([][]byte, error) {
	var parts [][]byte
	cur := []byte{'['}
	for _, r := range rs {
		b, err := json.Marshal(r)
		if err != nil {
			return nil, fmt.Errorf("cluster: encoding result %d of lease %d: %w", r.Seq, r.Lease, err)
		}
		if len(cur) > 1 && len(cur)+len(b) > maxPart {
			parts = append(parts, append(cur, ']'))
			cur = []byte{'['}
		}
		if len(cur) > 1 {
			cur = append(cur, ',')
		}
		cur = append(cur, b...)
	}
	return append(parts, append(cur, ']')), nil
}

// DecodeResults is EncodeResults's inverse: the results of all parts, in
// Seq order.
func DecodeResults(parts [][]byte) ([]visit.Result, error) {
	var out []visit.Result
	for _, p := range parts {
		var rs []visit.Result
		if err := json.Unmarshal(p, &rs); err != nil {
			return nil, fmt.Errorf("%w: results: %v", ErrBadMessage, err)
		}
		out = append(out, rs...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out, nil
}
