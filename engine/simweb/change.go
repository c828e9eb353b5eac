package simweb

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"lidi/engine/recrawl/change"
)

// The change model: when each page of a changing web changes. It is a pure
// function of (seed, options, channel sizes), independent of the server and
// of the link graph, so that a simulation in virtual time and the real
// server over loopback see the same change times.
//
// A channel (SARSS 2.1; a site in simweb) belongs to one of K priority
// groups, group 0 changing most often; the group gives its pages' mean
// change interval (SARSS's θ: 60, 120, 240, 480 and 960 minutes by
// default). Each page then changes as a change.Model of its group's mean:
// Poisson, Pareto (heavy-tailed gaps) or quasi-deterministic (Wolf et al.
// 2002: potential changes at fixed times, each taken or not), its times
// drawn by package change, the generator the recrawl simulation uses too.
// Times are offsets from the web's epoch, virtual time 0, at which every
// page is at version 0.

// Stream tags of the change model, apart from rng.go's so that the two
// lists grow independently.
const (
	tagChangeSite uint64 = 0x100 + iota // a channel's group and validators
	tagChangePage                       // a page's kind, mean and phase
	tagChangeETag                       // entity tags
	tagChangeText                       // the text of a changed page
	tagChangeNews                       // the text of a news site's articles
)

// MaxChangeGroups is the most priority groups ChangeOptions describe.
const MaxChangeGroups = 8

// Defaults applied by NewChanges to zero ChangeOptions fields.
const (
	// DefaultNoValidators is the fraction of sites that send neither ETag
	// nor Last-Modified.
	DefaultNoValidators = 0.2
	// DefaultStamped is the fraction of sites whose pages print the time
	// they were served, so that their bytes differ on every fetch although
	// their content changes only at change times.
	DefaultStamped = 0.1
	// DefaultNewsInterval is the mean time between two articles of a news
	// site.
	DefaultNewsInterval = 30 * time.Minute
)

// Validators says which cache validators a site sends with its pages.
type Validators uint8

const (
	// ValidatorsBoth: ETag and Last-Modified.
	ValidatorsBoth Validators = iota
	// ValidatorsETag: an ETag only.
	ValidatorsETag
	// ValidatorsLastModified: Last-Modified only.
	ValidatorsLastModified
	// ValidatorsNone: neither; a conditional request always gets 200.
	ValidatorsNone
)

var validatorsNames = [...]string{"both", "etag", "last-modified", "none"}

func (v Validators) String() string {
	if int(v) < len(validatorsNames) {
		return validatorsNames[v]
	}
	return fmt.Sprintf("Validators(%d)", v)
}

// ETag reports whether the site sends an ETag.
func (v Validators) ETag() bool { return v == ValidatorsBoth || v == ValidatorsETag }

// LastModified reports whether the site sends Last-Modified.
func (v Validators) LastModified() bool { return v == ValidatorsBoth || v == ValidatorsLastModified }

// ChangeOptions describe how a web's pages change. The zero value is a web
// whose pages never change (byte for byte the web before changes existed);
// with Enabled set, every other zero field takes its documented default.
// ChangeOptions is a plain value; NewChanges does not retain or modify it.
type ChangeOptions struct {
	// Enabled makes pages change.
	Enabled bool
	// Intervals are the mean change intervals of the priority groups,
	// group 0 (the most often changing) first; K, the number of groups, is
	// the number of leading non-zero entries (an array keeps Options
	// comparable). All zero means change.GroupMeans (SARSS's θ_i: 60, 120,
	// 240, 480 and 960 minutes). A channel's group is drawn from a
	// normal law centred on the middle group (standard deviation
	// 0.2·(K−1) groups), which gives SARSS's shares of channels per group
	// for K = 5.
	Intervals [MaxChangeGroups]time.Duration
	// Pareto and Quasi are the fractions of pages whose change times are
	// Pareto or quasi-deterministic; the rest are Poisson. Wolf's mixture
	// is 0.3 and 0.1. Zero means none.
	Pareto, Quasi float64
	// ParetoAlpha is the Pareto tail index, above 1 so that the mean is
	// finite. Zero means change.DefaultAlpha.
	ParetoAlpha float64
	// QuasiProb is the probability that a quasi-deterministic potential
	// change happens; 1 makes the page change on a fixed period. Zero means
	// change.DefaultP.
	QuasiProb float64
	// Spread is the log standard deviation of a page's mean change
	// interval around its group's. Zero gives every page of a group the
	// group's interval.
	Spread float64
	// Together makes the pages of a channel change together, at the
	// channel's change times (SARSS's model: a channel changes, and its
	// copy is fresh until then); kinds and spread are then drawn per
	// channel. False makes each page change on its own.
	Together bool
	// NoValidators is the fraction of sites without ETag and Last-Modified.
	// Zero means DefaultNoValidators; negative means none.
	NoValidators float64
	// Stamped is the fraction of sites whose pages print the time they are
	// served (and send no validators, as dynamic pages do). Zero means
	// DefaultStamped; negative means none.
	Stamped float64
	// News is the number of news sites: sites that add pages. A news
	// site publishes articles (/news/1.html, /news/2.html, ...) at the
	// times of a Poisson process of mean NewsInterval, and its home page
	// lists the newest NewsList of them; so the home page changes exactly
	// when an article appears, and an article exists from then on.
	News int
	// NewsInterval is the mean time between two articles of a news site.
	// Zero means DefaultNewsInterval.
	NewsInterval time.Duration
}

// NewsList is how many of its newest articles a news site's home page
// links to.
const NewsList = 10

func (o ChangeOptions) withDefaults() ChangeOptions {
	if !o.Enabled {
		return ChangeOptions{}
	}
	if o.Intervals == ([MaxChangeGroups]time.Duration{}) {
		copy(o.Intervals[:], change.GroupMeans())
	}
	if o.ParetoAlpha == 0 {
		o.ParetoAlpha = change.DefaultAlpha
	}
	if o.QuasiProb == 0 {
		o.QuasiProb = change.DefaultP
	}
	if o.NoValidators == 0 {
		o.NoValidators = DefaultNoValidators
	}
	o.NoValidators = max(o.NoValidators, 0)
	if o.Stamped == 0 {
		o.Stamped = DefaultStamped
	}
	o.Stamped = max(o.Stamped, 0)
	if o.NewsInterval == 0 {
		o.NewsInterval = DefaultNewsInterval
	}
	return o
}

// ErrChangeOptions is wrapped by the errors NewChanges returns for options
// out of range.
var ErrChangeOptions = errors.New("simweb: bad change options")

// groups returns K, the number of leading non-zero intervals.
func (o ChangeOptions) groups() int {
	k := 0
	for k < len(o.Intervals) && o.Intervals[k] != 0 {
		k++
	}
	return k
}

func (o ChangeOptions) validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrChangeOptions}, a...)...)
	}
	k := o.groups()
	for i, d := range o.Intervals {
		switch {
		case i < k && d < time.Second:
			return bad("group %d's interval %v under 1s", i, d)
		case i >= k && d != 0:
			return bad("group %d's interval %v follows a zero interval", i, d)
		}
	}
	switch {
	case !(o.Pareto >= 0 && o.Quasi >= 0 && o.Pareto+o.Quasi <= 1):
		return bad("pareto %v and quasi %v fractions not within [0, 1] together", o.Pareto, o.Quasi)
	case !(o.ParetoAlpha > 1 && o.ParetoAlpha <= 100):
		return bad("pareto alpha %v outside (1, 100]", o.ParetoAlpha)
	case !(o.QuasiProb > 0 && o.QuasiProb <= 1):
		return bad("quasi probability %v outside (0, 1]", o.QuasiProb)
	case !(o.Spread >= 0 && o.Spread <= 3):
		return bad("spread %v outside [0, 3]", o.Spread)
	case !(o.NoValidators <= 1 && o.Stamped <= 1):
		return bad("fractions of sites without validators %v or stamped %v above 1", o.NoValidators, o.Stamped)
	case o.News < 0:
		return bad("%d news sites", o.News)
	case o.NewsInterval < time.Second:
		return bad("news interval %v under 1s", o.NewsInterval)
	}
	return nil
}

// Changes is a web's change model: for every page, when it changes. Get
// one from NewChanges or Web.Changes. It is immutable and safe for
// concurrent use.
type Changes struct {
	seed     int64
	opt      ChangeOptions
	start    []int32 // channel c's pages are start[c] .. start[c+1]-1
	channels []channelChange
}

// channelChange is what the model draws once per channel.
type channelChange struct {
	group      uint8
	validators Validators
	stamped    bool
	news       bool
}

// NewChanges returns the change model for channels of channelPages[c]
// pages each (pages are numbered channel after channel, from 0), drawn
// from seed. Disabled options give a model in which nothing ever changes.
func NewChanges(seed int64, opt ChangeOptions, channelPages []int) (*Changes, error) {
	opt = opt.withDefaults()
	if opt.Enabled {
		if err := opt.validate(); err != nil {
			return nil, err
		}
	}
	c := &Changes{seed: seed, opt: opt, start: make([]int32, len(channelPages)+1), channels: make([]channelChange, len(channelPages))}
	total := 0
	for i, n := range channelPages {
		if n < 0 {
			return nil, fmt.Errorf("%w: channel %d has %d pages", ErrChangeOptions, i, n)
		}
		total += n
		if total > math.MaxInt32 {
			return nil, fmt.Errorf("%w: more than %d pages", ErrChangeOptions, math.MaxInt32)
		}
		c.start[i+1] = int32(total)
	}
	if !opt.Enabled {
		return c, nil
	}
	k := opt.groups()
	centre, sd := float64(k-1)/2, 0.2*float64(k-1)
	for i := range c.channels {
		r := newRNG(seed, tagChangeSite, uint64(i))
		g := int(math.Round(centre + sd*r.normal()))
		ch := channelChange{group: uint8(min(max(g, 0), k-1))}
		switch u := r.float(); {
		case u < opt.NoValidators:
			ch.validators = ValidatorsNone
		case u < opt.NoValidators+(1-opt.NoValidators)*0.625:
			ch.validators = ValidatorsBoth
		case u < opt.NoValidators+(1-opt.NoValidators)*0.8125:
			ch.validators = ValidatorsETag
		default:
			ch.validators = ValidatorsLastModified
		}
		if r.chance(opt.Stamped) {
			ch.stamped, ch.validators = true, ValidatorsNone
		}
		c.channels[i] = ch
	}
	if opt.News > len(c.channels) {
		return nil, fmt.Errorf("%w: %d news sites of %d", ErrChangeOptions, opt.News, len(c.channels))
	}
	// The news sites are spread over the ids, which the web lays out in
	// no order of size or popularity.
	for j := range opt.News {
		c.channels[(j+1)*len(c.channels)/(opt.News+1)].news = true
	}
	return c, nil
}

// Options returns the options the model was made with, defaults filled in.
func (c *Changes) Options() ChangeOptions { return c.opt }

// Enabled reports whether pages change at all.
func (c *Changes) Enabled() bool { return c.opt.Enabled }

// Groups returns K, the number of priority groups (0 when disabled).
func (c *Changes) Groups() int { return c.opt.groups() }

// Channels returns the number of channels.
func (c *Changes) Channels() int { return len(c.channels) }

// Pages returns the number of pages.
func (c *Changes) Pages() int { return int(c.start[len(c.start)-1]) }

// ChannelPages returns the first page of channel ch and its number of pages.
func (c *Changes) ChannelPages(ch int) (first, n int) {
	return int(c.start[ch]), int(c.start[ch+1] - c.start[ch])
}

// ChannelOf returns the channel of page p.
func (c *Changes) ChannelOf(p int) int {
	return sort.Search(len(c.channels), func(i int) bool { return int(c.start[i+1]) > p })
}

// Group returns channel ch's priority group, 0 for the most often
// changing, and -1 when pages do not change.
func (c *Changes) Group(ch int) int {
	if !c.opt.Enabled {
		return -1
	}
	return int(c.channels[ch].group)
}

// GroupInterval returns the mean change interval of group g.
func (c *Changes) GroupInterval(g int) time.Duration { return c.opt.Intervals[g] }

// Validators returns the validators channel ch sends; all of them when
// pages do not change (a static page is as cacheable as it gets).
func (c *Changes) Validators(ch int) Validators { return c.channels[ch].validators }

// Stamped reports whether channel ch's pages print the time they are
// served.
func (c *Changes) Stamped(ch int) bool { return c.channels[ch].stamped }

// Page returns how page p changes: its kind and mean (its group's
// interval, spread if Options.Spread asks). The zero Model when pages do
// not change.
func (c *Changes) Page(p int) change.Model {
	if !c.opt.Enabled {
		return change.Model{}
	}
	if c.newsFront(p) {
		return change.Model{Kind: change.Poisson, Mean: c.opt.NewsInterval}
	}
	r := newRNG(c.seed, tagChangePage, c.item(p))
	m := change.Model{Kind: change.Poisson, Alpha: c.opt.ParetoAlpha, P: c.opt.QuasiProb}
	switch u := r.float(); {
	case u < c.opt.Pareto:
		m.Kind = change.Pareto
	case u < c.opt.Pareto+c.opt.Quasi:
		m.Kind = change.Quasi
	}
	mean := float64(c.opt.Intervals[c.channels[c.ChannelOf(p)].group])
	if c.opt.Spread > 0 {
		mean = r.lognormal(mean, c.opt.Spread)
	}
	m.Mean = time.Duration(max(mean, float64(time.Second)))
	return m
}

// Rate returns page p's change rate λ in changes per second, 0 when it
// never changes.
func (c *Changes) Rate(p int) float64 {
	if !c.opt.Enabled {
		return 0
	}
	return c.Page(p).Rate()
}

// Stream returns page p's change times in order, or nil when pages do not
// change. The stream is change's for (the seed, p), or (the seed, the
// channel | 1<<62) when the pages of a channel change together, so a
// simulation that asks change for the same item sees the same times.
func (c *Changes) Stream(p int) *change.Stream {
	if !c.opt.Enabled {
		return nil
	}
	return c.Page(p).Stream(uint64(c.seed), c.item(p))
}

// togetherItem marks the change items of whole channels (Options.Together)
// apart from pages'.
const togetherItem = 1 << 62

// newsItem marks the change items of news sites' home pages, whose changes
// are their articles.
const newsItem = 1 << 61

// item is what draws page p's changes: the page, or its channel when the
// pages of a channel change together.
func (c *Changes) item(p int) uint64 {
	if c.newsFront(p) {
		return newsItem | uint64(p)
	}
	if c.opt.Together {
		return togetherItem | uint64(c.ChannelOf(p))
	}
	return uint64(p)
}

// State returns page p's version at time at (the number of changes in
// (0, at]) and the time of its last change (0, the epoch, for version 0).
func (c *Changes) State(p int, at time.Duration) (version int, last time.Duration) {
	s := c.Stream(p)
	if s == nil {
		return 0, 0
	}
	for s.Peek() <= at {
		version, last = version+1, s.Next()
	}
	return version, last
}

// Version returns page p's version at time at: the number of changes in
// (0, at].
func (c *Changes) Version(p int, at time.Duration) int {
	v, _ := c.State(p, at)
	return v
}

// NextChange returns the first change of page p strictly after time at,
// and false if it never changes again.
func (c *Changes) NextChange(p int, at time.Duration) (time.Duration, bool) {
	s := c.Stream(p)
	if s == nil {
		return 0, false
	}
	for s.Peek() <= at {
		s.Next()
	}
	if t := s.Peek(); t != math.MaxInt64 {
		return t, true
	}
	return 0, false
}

// Fresh reports whether a copy of page p fetched at time fetched is still
// the page's current version at time at (Cho and Garcia-Molina's
// freshness; Wolf's staleness is its complement).
func (c *Changes) Fresh(p int, fetched, at time.Duration) bool {
	t, ok := c.NextChange(p, fetched)
	return !ok || t > at
}

// Age returns how long a copy of page p fetched at time fetched has been
// out of date at time at: 0 while fresh, else the time since the first
// change after the fetch (Cho and Garcia-Molina's age).
func (c *Changes) Age(p int, fetched, at time.Duration) time.Duration {
	t, ok := c.NextChange(p, fetched)
	if !ok || t > at {
		return 0
	}
	return at - t
}

// ETag returns the strong entity tag of page p at version v: a quoted hash
// of the seed, the page and the version, so that it changes exactly when
// the page does.
func (c *Changes) ETag(p, v int) string {
	h := mix(c.seed, tagChangeETag, uint64(p)<<32|uint64(uint32(v)))
	const hexDigits = "0123456789abcdef"
	var b [18]byte
	b[0], b[17] = '"', '"'
	for i := 16; i >= 1; i-- {
		b[i] = hexDigits[h&15]
		h >>= 4
	}
	return string(b[:])
}

// Clock maps real time to a changing web's virtual time: from Epoch on,
// virtual time runs Scale times as fast as real time, so that virtual time
// Epoch+d·Scale is reached at real time Epoch+d. A Clock is a plain value,
// safe for concurrent use when Now is.
type Clock struct {
	// Epoch is the instant at which virtual time is 0, both as a real time
	// and as a virtual wall time.
	Epoch time.Time
	// Scale is how many times faster than real time virtual time runs.
	// Zero means 1.
	Scale float64
	// Now is the real clock. Nil means time.Now.
	Now func() time.Time
}

// Offset returns the virtual time now, as an offset from the epoch.
func (c Clock) Offset() time.Duration {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	return c.OffsetAt(now())
}

// OffsetAt returns the virtual time at real time t, as an offset from the
// epoch.
func (c Clock) OffsetAt(t time.Time) time.Duration {
	d := t.Sub(c.Epoch)
	if c.Scale == 0 || c.Scale == 1 {
		return d
	}
	return time.Duration(float64(d) * c.Scale)
}

// Time returns the virtual wall time of offset d: Epoch + d.
func (c Clock) Time(d time.Duration) time.Time { return c.Epoch.Add(d) }

// VirtualNow returns the virtual wall time now.
func (c Clock) VirtualNow() time.Time { return c.Time(c.Offset()) }
