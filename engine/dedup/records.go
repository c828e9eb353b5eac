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

// chunked holds records in fixed chunks of 1<<recChunkBits, so that
// growing copies nothing and holds no more than one chunk unused: a slice
// grown by append holds up to half of it unused, and both copies while it
// grows (the directories' copied 31 MB into 38 at 2,860,000 URLs
// discovered, and took the crawl's RSS up by 120 MB in ten seconds). The
// zero value is empty.
type chunked[T any] struct {
	chunks [][]T
	n      int
}

const recChunkBits = 12

// add stores v as number c.n and returns that number.
func (c *chunked[T]) add(v T) int {
	if c.n>>recChunkBits == len(c.chunks) {
		c.chunks = append(c.chunks, make([]T, 0, 1<<recChunkBits))
	}
	last := len(c.chunks) - 1
	c.chunks[last] = append(c.chunks[last], v)
	c.n++
	return c.n - 1
}

// at returns record i.
func (c *chunked[T]) at(i int) *T { return &c.chunks[i>>recChunkBits][i&(1<<recChunkBits-1)] }

func (c *chunked[T]) len() int { return c.n }

// bytes is what the chunks hold, records of size bytes each.
func (c *chunked[T]) bytes(size int) int { return len(c.chunks)<<recChunkBits*size + cap(c.chunks)*24 }

// pageRecs holds the stored pages. The zero value is empty.
type pageRecs struct {
	recs chunked[pageRec]
	// nourls is the NoURL simhash of the pages whose NoURL differs from
	// their Simhash (see pageRec).
	nourls pageItems
}

// add stores r, with NoURL simhash nourl, as number s.len() (the caller
// knows it beforehand).
func (s *pageRecs) add(r pageRec, nourl uint64) {
	i := uint32(s.recs.add(r))
	if nourl != r.sim {
		s.nourls.add(i, nourl)
	}
}

// at returns stored page i.
func (s *pageRecs) at(i uint32) *pageRec { return s.recs.at(int(i)) }

// nourl returns the NoURL simhash of stored page i.
func (s *pageRecs) nourl(i uint32) uint64 {
	if v, ok := s.nourls.get(i); ok {
		return v
	}
	return s.at(i).sim
}

func (s *pageRecs) len() int { return s.recs.len() }

func (s *pageRecs) bytes() int { return s.recs.bytes(pageRecBytes) + s.nourls.bytes() }

// dirRecs holds the directories, numbered from 0 as int32 (a dirRec's
// parent, -1 for none). The zero value is empty.
type dirRecs struct{ recs chunked[dirRec] }

const dirRecBytes = 48 // unsafe.Sizeof(dirRec{})

// add stores r and returns its index.
func (s *dirRecs) add(r dirRec) int32 { return int32(s.recs.add(r)) }

// at returns directory k.
func (s *dirRecs) at(k int32) *dirRec { return s.recs.at(int(k)) }

func (s *dirRecs) len() int { return s.recs.len() }

func (s *dirRecs) bytes() int { return s.recs.bytes(dirRecBytes) }

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
