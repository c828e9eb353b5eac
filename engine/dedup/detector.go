package dedup

import (
	"math"
	"strconv"
	"strings"

	"lidi/engine/urlnorm"
)

// Kind is the verdict on one page.
type Kind uint8

const (
	// Unique: no page seen before has the same or nearly the same content.
	Unique Kind = iota
	// Exact: a page seen before has the same content digest.
	Exact
	// Near: a structural suspect has a simhash (of the whole text or of
	// the main text) within Config.MaxHamming.
	Near
	// Skipped: the page was not examined (not a 2xx answer, or no body);
	// the detector keeps nothing of it.
	Skipped
	// Soft404: the page is its host's answer to URLs that do not exist
	// (see Soft404). It is not a genuine page; its links are not worth
	// following.
	Soft404
)

func (k Kind) String() string {
	switch k {
	case Unique:
		return "unique"
	case Exact:
		return "exact"
	case Near:
		return "near"
	case Skipped:
		return "skipped"
	case Soft404:
		return "soft-404"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Tests name how a duplicate was found (Decision.Test).
const (
	TestDigest            = "digest"               // same content digest, anywhere
	TestPathRepeat        = "path-repeat"          // /a/b/a/b/x against /a/b/x
	TestQueryVariant      = "query-variant"        // same path, other query
	TestSamePathOtherHost = "same-path-other-host" // same path on the www/bare twin, another scheme or host
	TestSameTail          = "same-tail"            // same last segment and query under another directory or host
	TestSameShape         = "same-shape"           // same path but for its numbers (/cal/2026/11/, /cal/2027/01/)
	TestMainText          = "main-text"            // a structural suspect whose main text (not its template) matches
	TestSameText          = "same-text"            // a page of the site whose main text is near, whatever its URL
	TestSoft404           = "soft-404"             // the host's soft-404 page
	TestClaimed           = "claimed"              // a page observed before its original, which it names (Decision.Demoted)
	TestSameItems         = "same-items"           // same path, other query, the same set of links and a text of the same words in another order
)

// Defaults for zero Config fields.
const (
	DefaultMaxHamming     = 3
	DefaultMirrorEvidence = 3
	DefaultMaxSuspects    = 32
	DefaultPerKey         = 8
)

// Config tunes a Detector. The zero value gives the defaults.
type Config struct {
	// MaxHamming is the largest Hamming distance between two simhashes
	// that makes pages near-duplicates. Zero means DefaultMaxHamming (3 of
	// 64 bits: more than 95% similarity); negative means the simhashes must
	// be equal.
	MaxHamming int
	// MirrorEvidence is the number of duplicate pairs that must support a
	// rewrite (on that many paths, for a query parameter) before it
	// becomes a rule, and of unrelated URLs that must give one page before
	// it is a soft 404. Zero means DefaultMirrorEvidence (3, as in LiDi);
	// negative means never learn.
	MirrorEvidence int
	// MaxSuspects bounds the pages one page is compared with. Zero means
	// DefaultMaxSuspects; negative means no near-duplicate test (digests
	// only).
	MaxSuspects int
	// PerKey bounds the pages kept under one structural key (one tail, one
	// path, one shape): the first and the latest. Zero means DefaultPerKey.
	PerKey int
}

// Page is what the detector needs of a fetched page.
type Page struct {
	ID      uint64 // the page's id (urlnorm.Fingerprint of its URL)
	URL     string // the normalised URL
	Digest  uint64 // content digest of the body (record.DigestKind.Sum, the crawl file's); 0 for no body
	Simhash uint64 // Fingerprints.Text; 0 for none
	Main    uint64 // Fingerprints.Main; 0 for the same as Simhash
	NoURL   uint64 // Fingerprints.NoURL; 0 for the same as Simhash
	Title   uint64 // Fingerprints.Title; 0 for none
	Status  int    // HTTP status; 0 means unknown, taken as 200

	// Claims are what the page says of its origin.
	Claims
}

// Claims are what a page says of its origin (see extract.Result and
// original.go): normalised URLs, or "" for nothing said. They weigh which
// of two copies is the original; they never make a rule by themselves.
// The zero value claims nothing.
type Claims struct {
	// Canonical is the page's rel=canonical: its <link> element, or the
	// HTTP Link header's when it has none.
	Canonical string
	// OGURL is its og:url.
	OGURL string
	// MirroredFrom is the address a mirroring tool's note in it names.
	MirroredFrom string
	// LastModified is the response's Last-Modified time in Unix seconds;
	// 0 for none.
	LastModified int64
	// Items is not a claim but what a listing shows: ListingItems of the
	// page's links. Two pages of one path whose queries differ (a sort
	// order, a view, a filter that keeps every item) and that link the
	// same set of other pages, with texts within maxListingHamming bits
	// (the same items in another order), are duplicates. 0 for none.
	Items uint64
}

// Decision is the verdict on one page.
type Decision struct {
	Kind Kind
	// Of and OfURL name the page this one duplicates (Exact, Near), or the
	// first page of the host's soft-404 signature (Soft404).
	Of    uint64
	OfURL string
	// Test is the test that found the duplicate: TestDigest for Exact,
	// the structural test of the suspect for Near, TestSoft404.
	Test string
	// Distance is the Hamming distance between the simhashes and
	// Similarity 1 - Distance/64.
	Distance   int
	Similarity float64
	// Learned are the rules this observation completed (a copy that
	// differs from its original in three tracking parameters completes
	// three).
	Learned []Rule
	// Withdrawn are the rules this observation contradicted.
	Withdrawn []Rule
	// Demoted are pages observed before as unique that this observation
	// showed to be copies: the page itself was their original (it was
	// observed after them, and one of them claims it), or a swap rule was
	// reversed (see original.go). The crawler should record them as
	// duplicates.
	Demoted []Demotion
	// Prefer are the URLs of the original this page claims to copy
	// (its canonical URL; the URL a mirroring tool's note names, and the
	// page's own path on that host), not observed yet: the crawler should
	// fetch them ahead of the rest of their site's queue, so that the
	// evidence of which copy to keep comes from the original's side
	// before more copies are fetched. A hint: nothing is skipped for it.
	Prefer []string
	// Soft404 is the host's soft-404 signature when this observation
	// established or changed it, or nil.
	Soft404 *Soft404Sig
	// Soft404Withdrawn is the signature a probe's answer refuted, or nil.
	Soft404Withdrawn *Soft404Sig
	// Probe, when not "", is a URL that cannot exist on the page's
	// origin: the crawler should fetch it once, as any page of the site,
	// and pass the answer, whatever its status, to Probed (see
	// ProbeURL).
	Probe string
	// Await, when not "", is the URL of a probe asked for and not yet
	// answered whose answer decides whether this page (Unique until
	// then) is its host's soft 404: it matches the signature pending the
	// answer. The crawler should follow its links only once the answer
	// is in and the page is not a soft 404 (Soft404Match).
	Await string
}

// Stats is a snapshot of a Detector's counters.
type Stats struct {
	Pages       int64 // pages observed and kept (Unique, Exact, Near, Soft404)
	Unique      int64
	Exact       int64
	Near        int64
	Soft404     int64 // pages recognised as soft 404s
	Skipped     int64
	Comparisons int64 // simhash comparisons with suspects
	Rules       int   // rules in force
	RulesByKind [NumRuleKinds]int
	Withdrawn   int // rules withdrawn
	// WithdrawnByKind counts the rules withdrawn of each kind.
	WithdrawnByKind [NumRuleKinds]int
	Soft404Host     int   // hosts with a soft-404 signature
	Soft404Refuted  int   // signatures a probe's answer withdrew
	Probes          int64 // probes answered
	Bytes           int64 // estimated memory in use
}

// Detector finds duplicate pages, learns URL rewrite rules from them and
// recognises soft 404s. It is meant to be owned by the crawl loop: it is
// not safe for concurrent use. The zero value is not usable; call New.
//
// Per page it keeps 48 bytes (id, three fingerprints, 32 bits of the
// title's, digest, directory, file name, Last-Modified; see pageRec) plus
// the file name and query in an arena, one copy of each directory, and
// ten hash indexes of about 6 bytes each (keyTable): URL id, digest,
// path on the site, last segment, title on the origin, four bands of the
// main text's simhash, and shape (only for URLs with digits).
// BenchmarkDetectorMemory measures it.
type Detector struct {
	maxHamming  int
	evidenceMin int // 0: never learn
	maxSuspects int
	perKey      int

	recs     pageRecs
	arena    stringArena
	dirIndex keyTable // dirs by head (dirOf)
	dirs     dirRecs

	digests, sitePaths, tails, shapes, titles keyTable
	bands                                     [simBands]keyTable // pages of a site by 16 bits of Main
	ids                                       keyTable           // pages by URL id (pageByID)

	cands       map[uint64]*candidate
	candOrigins map[string]int
	candList    map[string][]*candidate // by origin, host swaps left out (Unproven)
	hostCands   map[string][]*candidate // host swaps by origin
	origins     map[string]*originRules
	swappedTo   map[string][]string // by origin: the origins whose whole-host swap in force rewrites to it
	all         []*Rule             // rules in force, in the order learned
	withdrawn   []*Rule

	byOrigin map[string][]uint32 // stored pages by origin
	reps     map[uint64]rep      // by canonical URL id: the first page a rule rewrites to it
	missing  map[uint64]struct{} // URL ids that answered 404 or 410 (see NotFound)

	claims         map[uint32]pageClaim // stored pages that claim another URL as their origin
	claimsByOrigin map[string][]uint32
	originsByHost  map[uint64]string    // the first origin observed with each hostKey
	mirrored       map[string]*mirrored // by origin: directories whose pages say they are copies
	items          pageItems            // Page.Items of stored pages that have it
	indexNames     map[string]bool      // file names drop-index rules learned, on any origin (Variants)

	priors  map[uint64]*prior       // shapes of rules across origins (prior.go)
	matters map[string]bool         // parameter names a pair showed to change the page
	pending map[uint64][]*candidate // shapes waiting on several origins at once (prior.go)
	waiting map[uint64][]*candidate // candidates by shape from their first pair, until a prior comes (prior.go)
	pooled  []Rule                  // rules completed by another origin's pair (prior.go)

	vouches      map[uint64]*vouch       // rewrites by vouchKey and the origins that learned them (vouch.go)
	vouched      []*vouch                // those a prior puts in force with no pair
	vouchOrigins map[uint64]*vouchOrigin // by origin and rewrite: waits, declines

	soft     map[string]*soft404State // by origin
	echo     echoPrior                // the echo sign across origins (soft404.go)
	softSigs []*Soft404Sig
	probes   map[uint64]string // probes asked for, not answered: URL id -> origin

	stats Stats
	// scratch
	seen []uint32
	segs [2][]string
}

// dirRec is one directory of the pages stored. It keeps the hashes that
// the keys of its pages' site, origin and of itself are made of (bandKey,
// titleKey, dirKey), so that a table growing recomputes those keys from
// the records alone: read from the URLs in the arena, a page moved cost
// three cache misses and a string hashed for each of the six tables, most
// of a decision's time at 200,000 pages (BenchmarkObserve).
type dirRec struct {
	head        uint32 // arena reference of "http://www.x.test:8080/a/b/" (dirHead)
	parent      int32  // -1 for the root
	unique, dup uint32 // pages observed at or under it
	originEnd   uint16
	hostStart   uint16
	site        uint32 // siteHash of its host
	origin      uint32 // originHash of its origin
	key         uint32 // dirHash of its head
	path        hasher // sitePathKey's hash of its host and path, its pages' file names to come
	shape       hasher // shapeKey's of its origin and path, its pages' file names and queries to come
}

// New returns a Detector with cfg's zero fields set to the defaults.
func New(cfg Config) *Detector {
	d := &Detector{
		maxHamming:  cfg.MaxHamming,
		evidenceMin: cfg.MirrorEvidence,
		maxSuspects: cfg.MaxSuspects,
		perKey:      cfg.PerKey,
		cands:       make(map[uint64]*candidate),
		candOrigins: make(map[string]int),
		candList:    make(map[string][]*candidate),
		hostCands:   make(map[string][]*candidate),
		origins:     make(map[string]*originRules),
		soft:        make(map[string]*soft404State),
		probes:      make(map[uint64]string),
		byOrigin:    make(map[string][]uint32),
		reps:        make(map[uint64]rep),
	}
	switch {
	case d.maxHamming == 0:
		d.maxHamming = DefaultMaxHamming
	case d.maxHamming < 0:
		d.maxHamming = 0
	case d.maxHamming > 64:
		d.maxHamming = 64
	}
	switch {
	case d.evidenceMin == 0:
		d.evidenceMin = DefaultMirrorEvidence
	case d.evidenceMin < 0:
		d.evidenceMin = 0
	}
	switch {
	case d.maxSuspects == 0:
		d.maxSuspects = DefaultMaxSuspects
	case d.maxSuspects < 0:
		d.maxSuspects = 0
	}
	if d.perKey <= 0 {
		d.perKey = DefaultPerKey
	}
	d.dirIndex = newKeyTable(func(k uint32) uint64 { return dirKeyOf(d.dirs.at(int32(k)).key) })
	d.digests = newKeyTable(func(i uint32) uint64 { return digestKey(d.recs.at(i).digest) })
	d.sitePaths = newKeyTable(func(i uint32) uint64 {
		r := d.recs.at(i)
		return d.dirs.at(int32(r.dir &^ dupFlag)).path.str(fileOf(d.arena.get(r.rest))).sum()
	})
	d.tails = newKeyTable(func(i uint32) uint64 {
		r := d.recs.at(i)
		rest := d.arena.get(r.rest)
		if rest == "" || rest[0] == '?' {
			p := d.parts(i) // an index page: its directory's name
			return tailKey(&p)
		}
		return tailKeyOf(rest)
	})
	d.shapes = newKeyTable(func(i uint32) uint64 {
		r := d.recs.at(i)
		return d.dirs.at(int32(r.dir &^ dupFlag)).shape.shape(d.arena.get(r.rest)).sum()
	})
	for k := range d.bands {
		d.bands[k] = newKeyTable(func(i uint32) uint64 {
			r := d.recs.at(i)
			return bandKey(d.dirs.at(int32(r.dir&^dupFlag)).site, k, r.main)
		})
	}
	d.ids = newKeyTable(func(i uint32) uint64 { return idKey(d.recs.at(i).id) })
	d.titles = newKeyTable(func(i uint32) uint64 {
		r := d.recs.at(i)
		return titleKey(d.dirs.at(int32(r.dir&^dupFlag)).origin, uint64(r.title))
	})
	// What the tables' keys are made of: a page's record, and for some
	// its file name and query in the arena (see keyTable.move).
	warmRec := func(i uint32) uint64 { return uint64(d.recs.at(i).dir) }
	warmURL := func(i uint32) uint64 { return uint64(d.arena.first(d.recs.at(i).rest)) }
	for _, t := range []*keyTable{&d.digests, &d.titles, &d.ids, &d.bands[0], &d.bands[1], &d.bands[2], &d.bands[3]} {
		t.warm = warmRec
	}
	for _, t := range []*keyTable{&d.sitePaths, &d.tails, &d.shapes} {
		t.warm = warmURL
	}
	return d
}

// parts returns the URL of stored page i, split.
func (d *Detector) parts(i uint32) urlParts {
	r := d.recs.at(i)
	dr := d.dirs.at(int32(r.dir &^ dupFlag))
	return urlParts{head: d.arena.get(dr.head), rest: d.arena.get(r.rest), originEnd: int(dr.originEnd), hostStart: int(dr.hostStart)}
}

func (d *Detector) urlOf(i uint32) string { p := d.parts(i); return p.url() }

// lookupURL returns the stored page observed at url.
func (d *Detector) lookupURL(url string) (uint32, bool) {
	i, ok := d.pageByID(ID(url))
	if !ok {
		return 0, false
	}
	p := d.parts(i)
	return i, len(p.head)+len(p.rest) == len(url) && strings.HasPrefix(url, p.head) && url[len(p.head):] == p.rest
}

// urlByID returns the URL of the page observed with id, or "".
func (d *Detector) urlByID(id uint64) string {
	if i, ok := d.pageByID(id); ok {
		return d.urlOf(i)
	}
	return ""
}

// sameContent reports whether page p and stored page i hold the same
// content: one digest, or near simhashes of the whole or the main text.
func (d *Detector) sameContent(p *Page, i uint32) bool {
	r := d.recs.at(i)
	if r.digest == p.Digest {
		return true
	}
	if _, ok := d.near(p, r); ok {
		return true
	}
	_, ok := d.sameItems(p, i)
	return ok
}

// maxListingHamming bounds the distance between the texts of two
// listings of the same items: the same words in another order change the
// shingles across items, not within them. Unrelated texts are about 32
// bits apart.
const maxListingHamming = 16

// sameItems reports whether page p and stored page i are listings of the
// same items (Page.Items), and the distance between their texts.
func (d *Detector) sameItems(p *Page, i uint32) (int, bool) {
	if p.Items == 0 || d.items.len() == 0 {
		return 64, false
	}
	it, ok := d.items.get(i)
	if !ok || it != p.Items {
		return 64, false
	}
	dist := Hamming(p.Simhash, d.recs.at(i).sim)
	return dist, dist <= maxListingHamming
}

// reordered reports whether page p and stored page i are listings of the
// same items whose texts differ (other order, other presentation): a
// parameter between them does something to a listing and leaves its items
// alone, evidence that it does so whatever its value. Listings the same
// but for their URLs say only that this value is the default (?page=1,
// ?category=all), nothing of the parameter's other values.
func (d *Detector) reordered(p *Page, i uint32) bool {
	if _, ok := d.sameItems(p, i); !ok {
		return false
	}
	if nourl := d.recs.nourl(i); p.NoURL != 0 && nourl != 0 {
		return p.NoURL != nourl
	}
	return p.Digest != d.recs.at(i).digest
}

// near returns the smaller distance of the whole and main texts and
// whether it is within MaxHamming.
func (d *Detector) near(p *Page, r *pageRec) (int, bool) {
	if p.Simhash == 0 || r.sim == 0 {
		return 64, false
	}
	dist := Hamming(p.Simhash, r.sim)
	if pm, rm := p.Main, r.main; pm != 0 && rm != 0 && (pm != p.Simhash || rm != r.sim) {
		dist = min(dist, Hamming(pm, rm))
	}
	return dist, dist <= d.maxHamming
}

// Observe examines a fetched page, remembers it, and returns whether it
// duplicates a page observed before or is its host's soft 404. The
// crawler should follow no link of either. Exact duplicates are found by
// digest wherever they are; near-duplicates only among the suspects the
// URL's structure names: the path with its repeated segments collapsed,
// the same path under another query or on the www/bare twin host, the
// same last segment under another directory or host, and the same path
// but for its numbers.
//
// Each duplicate pair supports the rewrites that relate its URLs; when
// one has the evidence a rule needs (see learn.go), Observe returns it in
// Decision.Learned, once. Canonical then rewrites the URLs it covers.
// A page that differs from a suspect contradicts the rewrites relating
// them, and one that differs from its canonical URL's page withdraws the
// rule (Decision.Withdrawn).
//
// Observing the same page (same id and digest) again returns Unique and
// changes nothing.
func (d *Detector) Observe(p Page) Decision {
	if p.Status != 0 && (p.Status < 200 || p.Status > 299) || p.Digest == 0 {
		d.stats.Skipped++
		return Decision{Kind: Skipped}
	}
	if p.Main == 0 {
		p.Main = p.Simhash
	}
	if p.NoURL == 0 {
		p.NoURL = p.Simhash
	}
	if i, ok := d.pageByID(p.ID); ok && d.recs.at(i).digest == p.Digest {
		return Decision{Kind: Unique}
	}
	u := splitURL(p.URL)
	var dec Decision
	dec.Withdrawn = d.checkRules(&p)

	if sig, ok := d.softMatch(&p, &u); ok {
		dec.Kind, dec.Test, dec.Of, dec.OfURL = Soft404, TestSoft404, sig.Of, sig.OfURL
		dec.Distance = Hamming(p.NoURL, sig.Simhash)
		dec.Similarity = 1 - float64(dec.Distance)/64
		d.add(&p, &u, true, d.newDigest(&p))
		d.stats.Soft404++
		return dec
	}

	s := search{d: d, p: &p, u: &u, exact: -1, best: -1, exactStruct: -1, bestDist: math.MaxInt, budget: d.maxSuspects}
	if i, ok := d.digests.first(digestKey(p.Digest), func(i uint32) bool { return d.recs.at(i).digest == p.Digest }); ok {
		s.exact = int64(i)
	}
	s.run()
	dec.Withdrawn = append(dec.Withdrawn, s.withdrawn...)

	dec.Kind = Unique
	orig := int64(-1)
	switch {
	case s.exact >= 0:
		orig = s.exact
		if s.exactStruct >= 0 {
			orig = s.exactStruct
		}
		dec.Kind, dec.Test = Exact, TestDigest
		dec.Distance = Hamming(p.Simhash, d.recs.at(uint32(orig)).sim)
	case s.best >= 0:
		orig = s.best
		dec.Kind, dec.Test, dec.Distance = Near, s.bestTest, s.bestDist
	}
	if orig >= 0 {
		dec.Of = d.recs.at(uint32(orig)).id
		dec.OfURL = d.urlOf(uint32(orig))
		dec.Similarity = 1 - float64(dec.Distance)/64
	}

	original := orig >= 0 && d.pageOriginal(&p, uint32(orig))
	if original {
		// The page observed before claims this one as its origin.
		d.demote(uint32(orig))
		dec.Demoted = append(dec.Demoted, Demotion{Copy: dec.Of, CopyURL: dec.OfURL, Of: p.ID, OfURL: p.URL, Similarity: dec.Similarity})
		dec.Kind, dec.Of, dec.OfURL, dec.Test, dec.Distance, dec.Similarity = Unique, 0, "", "", 0, 0
	}
	idx, stored := d.add(&p, &u, dec.Kind != Unique, s.exact < 0)
	if stored {
		dec.Withdrawn = append(dec.Withdrawn, d.checkTwins(idx, &u)...)
		dec.Prefer = d.noteClaim(idx, &p, &u)
		w, l, dm := d.reconsider(&p, &u)
		dec.Withdrawn, dec.Learned, dec.Demoted = append(dec.Withdrawn, w...), append(dec.Learned, l...), append(dec.Demoted, dm...)
	}
	switch dec.Kind {
	case Unique:
		d.stats.Unique++
	case Exact:
		d.stats.Exact++
	case Near:
		d.stats.Near++
	}
	if !stored {
		return dec
	}
	if original && d.evidenceMin > 0 {
		ou := d.parts(uint32(orig))
		dec.Learned = append(dec.Learned, d.support(uint32(orig), idx, &ou, d.reordered(&p, uint32(orig)))...)
	} else if orig >= 0 && d.evidenceMin > 0 && !d.isSoft404(uint32(orig)) {
		dec.Learned = append(dec.Learned, d.support(idx, uint32(orig), &u, d.reordered(&p, uint32(orig)))...)
		if len(dec.Learned) == 0 {
			ou := d.parts(uint32(orig))
			if u.origin() == ou.origin() && hasDigit(&u) && shapeKey(&u) == shapeKey(&ou) {
				if r := d.tieShape(&u, &ou, Pair{Copy: p.ID, Original: dec.Of}); r != nil {
					dec.Learned = append(dec.Learned, *r)
				}
			}
		}
	}
	dec.Learned = d.withPooled(dec.Learned) // rules another origin's candidates became (reconsider)
	sig, probe := d.softEvidence(idx, &p, &u)
	if !probe && sig == nil && dec.Kind == Unique {
		sig, probe = d.softEcho(idx, &p, &u)
		if !probe && sig == nil {
			dec.Await = d.softAwait(&p, &u)
		}
	}
	if probe {
		dec.Probe = ProbeURL(p.URL)
		d.probes[ID(dec.Probe)] = u.origin()
		d.soft[u.origin()].probeURL = dec.Probe
	}
	if sig != nil {
		dec.Soft404 = sig
		if dec.Kind == Unique {
			d.stats.Unique--
		} else if dec.Kind == Exact {
			d.stats.Exact--
		} else {
			d.stats.Near--
		}
		d.stats.Soft404++
		dec.Kind, dec.Test, dec.Of, dec.OfURL = Soft404, TestSoft404, sig.Of, sig.OfURL
		d.recs.at(idx).dir |= dupFlag
	}
	return dec
}

func (d *Detector) newDigest(p *Page) bool {
	_, ok := d.digests.first(digestKey(p.Digest), func(i uint32) bool { return d.recs.at(i).digest == p.Digest })
	return !ok
}

// Covered records that the crawler dropped a URL that rule r (as
// Canonical returned it) covers.
func (d *Detector) Covered(r *Rule) {
	if r != nil {
		r.Covered++
	}
}

// AllRules returns a copy of every rule in force, in the order learned,
// then of every rule withdrawn, in the order withdrawn.
func (d *Detector) AllRules() []Rule {
	out := d.Rules()
	for _, r := range d.withdrawn {
		c := *r
		c.Support = append([]Pair(nil), r.Support...)
		c.Contradictions = append([]Pair(nil), r.Contradictions...)
		out = append(out, c)
	}
	return out
}

// Rules returns a copy of every rule in force, in the order learned.
func (d *Detector) Rules() []Rule {
	out := make([]Rule, len(d.all))
	for i, r := range d.all {
		out[i] = *r
		out[i].Support = append([]Pair(nil), r.Support...)
		out[i].Contradictions = append([]Pair(nil), r.Contradictions...)
	}
	return out
}

// Stats returns a snapshot of the counters.
func (d *Detector) Stats() Stats {
	s := d.stats
	s.Pages = s.Unique + s.Exact + s.Near + s.Soft404
	s.Bytes = d.bytes()
	return s
}

// tables returns the detector's hash indexes.
func (d *Detector) tables() []*keyTable {
	ts := []*keyTable{&d.dirIndex, &d.digests, &d.sitePaths, &d.tails, &d.shapes, &d.titles, &d.ids}
	for k := range d.bands {
		ts = append(ts, &d.bands[k])
	}
	return ts
}

func (d *Detector) bytes() int64 {
	const (
		candidateBytes = 320
		repBytes       = 24
		// an origin's record of a vouched rewrite: its map entry
		// (key, pointer, a bucket's share) and the record
		vouchOriginBytes = 48
	)
	n := int64(d.recs.bytes()) + int64(d.arena.bytes()) + int64(d.items.bytes())
	n += int64(d.dirs.bytes()) + int64(d.dirIndex.bytes())
	for k := range d.bands {
		n += int64(d.bands[k].bytes())
	}
	n += int64(d.digests.bytes() + d.sitePaths.bytes() + d.tails.bytes() + d.shapes.bytes() + d.titles.bytes())
	n += int64(len(d.cands))*candidateBytes + int64(d.ids.bytes()) + int64(len(d.reps))*repBytes + int64(d.recs.len())*4
	n += int64(len(d.vouchOrigins)) * vouchOriginBytes
	return n
}

// ID returns the id the detector gives a normalised URL: the crawler's
// URL fingerprint.
func ID(url string) uint64 { return urlnorm.Fingerprint(url) }
