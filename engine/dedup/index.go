package dedup

import (
	"math"
	"strings"
)

// add stores page p and indexes it. newDigest is false when its digest is
// already indexed. It reports false when the detector is full (2^31 pages
// or 4 GiB of URLs) and no longer stores pages.
func (d *Detector) add(p *Page, u *urlParts, dup, newDigest bool) (uint32, bool) {
	if d.recs.len() >= dupFlag-1 {
		return 0, false
	}
	dir, ok := d.internDir(u.head, u.originEnd, u.hostStart)
	if !ok {
		return 0, false
	}
	rest, ok := d.arena.add(u.rest)
	if !ok {
		return 0, false
	}
	idx := uint32(d.recs.len())
	flag := uint32(0)
	if dup {
		flag = dupFlag
	}
	if p.Items != 0 {
		d.items.add(idx, p.Items)
	}
	lm := uint32(0)
	if p.LastModified > 0 && p.LastModified <= math.MaxUint32 {
		lm = uint32(p.LastModified)
	}
	d.recs.add(pageRec{id: p.ID, sim: p.Simhash, main: p.Main, title: title32(p.Title), digest: p.Digest, dir: uint32(dir) | flag, rest: rest, lm: lm}, p.NoURL)
	d.ids.insert(idKey(p.ID), idx, idsPerKey)
	o := d.dirHead(dir)[:u.originEnd] // the arena's copy: a map key outlives p.URL
	if len(d.byOrigin[o]) == 0 {
		d.noteOrigin(o)
	}
	d.byOrigin[o] = append(d.byOrigin[o], idx)
	if len(d.origins) > 0 {
		d.noteRep(idx, p.URL)
	}
	if newDigest {
		d.digests.insert(digestKey(p.Digest), idx, 1)
	}
	d.sitePaths.insert(sitePathKey(u), idx, d.perKey)
	d.tails.insert(tailKey(u), idx, d.perKey)
	if hasDigit(u) {
		d.shapes.insert(shapeKey(u), idx, d.perKey)
	}
	dr := d.dirs.at(dir)
	if p.Main != 0 {
		for k := range d.bands {
			d.bands[k].insert(bandKey(dr.site, k, p.Main), idx, d.perKey)
		}
	}
	if p.Title != 0 {
		d.titles.insert(titleKey(dr.origin, uint64(title32(p.Title))), idx, d.perKey)
	}
	for k := dir; k >= 0; k = d.dirs.at(k).parent {
		if dup {
			d.dirs.at(k).dup++
		} else {
			d.dirs.at(k).unique++
		}
	}
	return idx, true
}

// internDir returns the index of directory head, adding it and its
// ancestors if new.
func (d *Detector) internDir(head string, originEnd, hostStart int) (int32, bool) {
	if k, ok := d.dirOf(head); ok {
		return k, true
	}
	parent := int32(-1)
	if len(head) > originEnd+1 {
		ph := head[:strings.LastIndexByte(head[:len(head)-1], '/')+1]
		var ok bool
		if parent, ok = d.internDir(ph, originEnd, hostStart); !ok {
			return 0, false
		}
	}
	ref, ok := d.arena.add(head)
	if !ok || originEnd > math.MaxUint16 {
		return 0, false
	}
	key := dirHash(head)
	k := d.dirs.add(dirRec{head: ref, parent: parent, originEnd: uint16(originEnd), hostStart: uint16(hostStart),
		site: siteHash(head[hostStart:originEnd]), origin: originHash(head[:originEnd]), key: key,
		path: sitePathDir(head[hostStart:originEnd], head[originEnd:]), shape: shapeDir(head[:originEnd], head[originEnd:])})
	d.dirIndex.insert(dirKeyOf(key), uint32(k), 0)
	return k, true
}

// dirOf returns the index of directory head in dirs, if stored. The index
// is a keyTable (about 7 bytes a directory; a map from the string took
// about 40), each directory's key recomputed from its head in the arena.
func (d *Detector) dirOf(head string) (int32, bool) {
	k, ok := d.dirIndex.first(dirKeyOf(dirHash(head)), func(k uint32) bool { return d.dirHead(int32(k)) == head })
	return int32(k), ok
}

// dirHead returns the head of directory k: origin and path.
func (d *Detector) dirHead(k int32) string { return d.arena.get(d.dirs.at(k).head) }

// dirHash is the hash of a directory's head that its key is made of
// (dirKeyOf), kept in its dirRec.
func dirHash(head string) uint32 { return uint32(newHasher(keyDir).str(head).sum()) }

func dirKeyOf(h uint32) uint64 { return fmix64(uint64(keyDir)<<56 | uint64(h)) }

// dirCounts returns the unique and duplicate pages observed at or under a
// directory prefix.
func (d *Detector) dirCounts(prefix string) (unique, dup uint32) {
	if k, ok := d.dirOf(prefix); ok {
		return d.dirs.at(k).unique, d.dirs.at(k).dup
	}
	return 0, 0
}
