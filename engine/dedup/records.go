package dedup

// pageRec is what the detector keeps of a stored page: 48 bytes. The NoURL
// simhash, which differs from the text's only on pages that spell their
// own URL, is kept apart (pageRecs.nourls), and the title as 32 bits of
// its hash: it is compared for equality only, among the pages of one
// origin with the same 32 bits (titleKey), so a false match takes two
// titles of one origin equal in 32 bits and texts within
// Soft404MaxHamming bits.
type pageRec struct {
	id, sim, main, digest uint64
	title                 uint32 // the low 32 bits of Fingerprints.Title
	dir                   uint32 // index in dirs; top bit set for a duplicate
	rest                  uint32 // arena reference of the file name and query
	lm                    uint32 // Last-Modified, Unix seconds (to 2106); 0 for none
}

const pageRecBytes = 48

const dupFlag = 1 << 31

// title32 is the part of a title hash a pageRec keeps.
func title32(title uint64) uint32 { return uint32(title) }

// pageRecs holds the stored pages in fixed chunks, so that growing copies
// nothing and holds no more than one chunk unused (a slice that doubles
// holds up to twice what it uses, and both copies while it grows). The
// zero value is empty.
type pageRecs struct {
	chunks [][]pageRec
	n      int
	// nourls is the NoURL simhash of the pages whose NoURL differs from
	// their Simhash (see pageRec).
	nourls pageItems
}

const recsChunkBits = 13

// add stores r, with NoURL simhash nourl, as number s.n (the caller knows
// it beforehand).
func (s *pageRecs) add(r pageRec, nourl uint64) {
	if s.n>>recsChunkBits == len(s.chunks) {
		s.chunks = append(s.chunks, make([]pageRec, 0, 1<<recsChunkBits))
	}
	i := uint32(s.n)
	last := len(s.chunks) - 1
	s.chunks[last] = append(s.chunks[last], r)
	s.n++
	if nourl != r.sim {
		s.nourls.add(i, nourl)
	}
}

// at returns stored page i.
func (s *pageRecs) at(i uint32) *pageRec {
	return &s.chunks[i>>recsChunkBits][i&(1<<recsChunkBits-1)]
}

// nourl returns the NoURL simhash of stored page i.
func (s *pageRecs) nourl(i uint32) uint64 {
	if v, ok := s.nourls.get(i); ok {
		return v
	}
	return s.at(i).sim
}

func (s *pageRecs) len() int { return s.n }

func (s *pageRecs) bytes() int {
	return len(s.chunks)<<recsChunkBits*pageRecBytes + s.nourls.bytes() + cap(s.chunks)*24
}

// dirRecs holds the directories in fixed chunks, as pageRecs holds the
// pages: a slice grown by append copied the whole array each time it grew
// by a quarter, both copies live at once (31 and 38 MB at 2,860,000 URLs
// discovered, which took the crawl's RSS up by 120 MB in ten seconds), and
// held up to a quarter unused. The zero value is empty.
type dirRecs struct {
	chunks [][]dirRec
	n      int
}

const (
	dirsChunkBits = 12
	dirRecBytes   = 48 // unsafe.Sizeof(dirRec{})
)

// add stores r and returns its index.
func (s *dirRecs) add(r dirRec) int32 {
	if s.n>>dirsChunkBits == len(s.chunks) {
		s.chunks = append(s.chunks, make([]dirRec, 0, 1<<dirsChunkBits))
	}
	last := len(s.chunks) - 1
	s.chunks[last] = append(s.chunks[last], r)
	s.n++
	return int32(s.n - 1)
}

// at returns directory k.
func (s *dirRecs) at(k int32) *dirRec {
	return &s.chunks[k>>dirsChunkBits][k&(1<<dirsChunkBits-1)]
}

func (s *dirRecs) len() int { return s.n }

func (s *dirRecs) bytes() int {
	return len(s.chunks)<<dirsChunkBits*dirRecBytes + cap(s.chunks)*24
}

// The pages by URL id are a keyTable (about 6 bytes a page; a Go map
// took about 24), keyed by a mix of the id, which is the key of no other
// id. A URL observed again with other content is stored again: the table
// keeps its first page and its latest, and pageByID returns the latest.
const idsPerKey = 2

func idKey(id uint64) uint64 { return fmix64(id) }

// pageByID returns the latest stored page observed with URL id.
func (d *Detector) pageByID(id uint64) (uint32, bool) {
	var found uint32
	ok := false
	d.ids.each(idKey(id), func(i uint32) bool {
		if !ok || i > found {
			found, ok = i, true
		}
		return true
	})
	return found, ok
}
