package fetch

import (
	"fmt"
	"math/bits"
	"net/http"
)

// Validators are the cache validators a server sent with a page (RFC 9110,
// 8.8), kept with the copy so that a recrawl can ask for the page only if
// it changed. The zero value asks unconditionally.
type Validators struct {
	ETag         string // the ETag header, quotes and W/ included
	LastModified string // the Last-Modified header, as sent
}

// IsZero reports whether v holds no validator.
func (v Validators) IsZero() bool { return v.ETag == "" && v.LastModified == "" }

// set adds the conditional headers: If-None-Match with the ETag and
// If-Modified-Since with the Last-Modified date. A server that has an ETag
// decides on If-None-Match alone; the date serves the others.
func (v Validators) set(h http.Header) {
	if v.ETag != "" {
		h.Set("If-None-Match", v.ETag)
	}
	if v.LastModified != "" {
		h.Set("If-Modified-Since", v.LastModified)
	}
}

// Validators returns the validators the response carries. A 304 carries
// the current ones (or none, meaning those of the copy still hold).
func (r *Response) Validators() Validators {
	return Validators{ETag: r.Header.Get("ETag"), LastModified: r.Header.Get("Last-Modified")}
}

// Copy is what a crawler kept of a page's last fetch: its validators and
// its fingerprints, enough to tell whether a new fetch found a change.
type Copy struct {
	Validators
	Digest  uint64 // digest of the body's bytes; 0 for none
	Simhash uint64 // fingerprint of the body's text; 0 for none
}

// Verdict says whether a refetched page changed since its copy, and how
// lidi knows.
type Verdict uint8

const (
	// VerdictNone: no earlier copy to compare with, or no body to compare
	// (an error, a status other than 2xx and 304).
	VerdictNone Verdict = iota
	// VerdictNotModified: the server answered 304 to the copy's
	// validators.
	VerdictNotModified
	// VerdictSameDigest: the same bytes.
	VerdictSameDigest
	// VerdictSameText: other bytes but the text fingerprints differ by no
	// more than the threshold: a timestamp or a counter, not a change.
	VerdictSameText
	// VerdictChanged: the content changed.
	VerdictChanged
)

var verdictNames = [...]string{"none", "not-modified", "same-digest", "same-text", "changed"}

func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return fmt.Sprintf("Verdict(%d)", v)
}

// Known reports whether the verdict says anything about change.
func (v Verdict) Known() bool { return v != VerdictNone }

// Changed reports whether the verdict is a change.
func (v Verdict) Changed() bool { return v == VerdictChanged }

// Judge compares a fetch (its status and, for a 2xx, its body's digest and
// text fingerprint) with the copy kept from the last one. maxHamming is the
// number of simhash bits two versions may differ by and still count as the
// same text; negative compares digests only. A copy or body without a text
// fingerprint is judged on its digest.
func Judge(old Copy, status int, digest, simhash uint64, maxHamming int) Verdict {
	switch {
	case status == http.StatusNotModified:
		return VerdictNotModified
	case status < 200 || status >= 300 || old.Digest == 0 || digest == 0:
		return VerdictNone
	case digest == old.Digest:
		return VerdictSameDigest
	case maxHamming >= 0 && old.Simhash != 0 && simhash != 0 && bits.OnesCount64(old.Simhash^simhash) <= maxHamming:
		return VerdictSameText
	}
	return VerdictChanged
}
