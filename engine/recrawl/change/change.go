// Package change generates when things change: the change times of a page or
// a channel as a stationary point process (Poisson, Pareto renewal or Wolf's
// quasi-deterministic), deterministically from a seed and an item number.
// It is the ground truth shared by simweb's changing web and the recrawl
// simulation, so that their figures describe the same web.
//
// Times are offsets from the start of the web's clock. Everything here is a
// pure function of its arguments; a Stream is not safe for concurrent use,
// the rest is.
package change

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
)

// ErrBadModel reports a Model that cannot generate change times.
var ErrBadModel = errors.New("change: bad model")

// Kind is a family of change processes.
type Kind uint8

const (
	// Poisson: exponential times between changes (Cho and Garcia-Molina's
	// and SARSS's assumption).
	Poisson Kind = iota
	// Pareto: a renewal process whose times between changes have the heavy
	// tail (b/(b+t))^α that Wolf et al. found on the Nagano pages.
	Pareto
	// Quasi: Wolf's quasi-deterministic pages: changes can only happen at
	// fixed potential times, one every Period, each with probability P.
	Quasi
)

var kindNames = [...]string{Poisson: "poisson", Pareto: "pareto", Quasi: "quasi"}

// String returns the kind's configuration name.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Kinds lists every kind in declaration order.
func Kinds() []Kind { return []Kind{Poisson, Pareto, Quasi} }

// ParseKind reads a kind's name, as String writes it.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds() {
		if strings.EqualFold(s, k.String()) {
			return k, nil
		}
	}
	return 0, fmt.Errorf("%w: unknown kind %q (known: poisson, pareto, quasi)", ErrBadModel, s)
}

// Model describes one item's change process. Mean is the mean time between
// changes (SARSS's θ; 1/λ). The zero value is not usable: Mean must be set.
type Model struct {
	Kind Kind
	Mean time.Duration
	// Alpha is the Pareto shape α (> 1 so that the mean exists; Wolf's
	// heavy tails have α < 2). 0 means 1.5.
	Alpha float64
	// P is the probability that a quasi-deterministic potential change
	// happens (0 means 0.5); the potential times are Mean·P apart.
	P float64
}

// DefaultAlpha and DefaultP are what a zero Alpha and P mean.
const (
	DefaultAlpha = 1.5
	DefaultP     = 0.5
)

func (m Model) alpha() float64 {
	if m.Alpha == 0 {
		return DefaultAlpha
	}
	return m.Alpha
}

func (m Model) p() float64 {
	if m.P == 0 {
		return DefaultP
	}
	return m.P
}

// Validate says why m cannot generate change times, or nil.
func (m Model) Validate() error {
	switch {
	case m.Mean <= 0:
		return fmt.Errorf("%w: mean time between changes %v is not positive", ErrBadModel, m.Mean)
	case m.Kind > Quasi:
		return fmt.Errorf("%w: unknown kind %d", ErrBadModel, m.Kind)
	case m.Kind == Pareto && m.alpha() <= 1:
		return fmt.Errorf("%w: Pareto shape %g must exceed 1 for the mean to exist", ErrBadModel, m.alpha())
	case m.Kind == Quasi && (m.p() <= 0 || m.p() > 1):
		return fmt.Errorf("%w: quasi-deterministic probability %g is not in (0,1]", ErrBadModel, m.p())
	}
	return nil
}

// Rate is the mean number of changes per second, 1/Mean.
func (m Model) Rate() float64 { return 1 / m.Mean.Seconds() }

// Stream returns the change times of item under m from seed, in order.
// Streams of different (seed, item) pairs are independent; the same pair
// always gives the same times. m must be valid.
func (m Model) Stream(seed, item uint64) *Stream {
	s := &Stream{m: m, r: rand.New(rand.NewPCG(seed, item^0x6c69646963686e67))}
	mean := m.Mean.Seconds()
	// Start in equilibrium: the first change is the forward recurrence
	// time of a process that has been running forever, so that t = 0 is
	// not special.
	switch m.Kind {
	case Poisson:
		s.next = s.exp() * mean
	case Pareto:
		// For the Lomax tail (b/(b+t))^α the forward recurrence time
		// has tail (b/(b+t))^(α-1).
		a := m.alpha()
		s.b = mean * (a - 1)
		s.next = s.lomax(a - 1)
	case Quasi:
		s.period = mean * m.p()
		s.next = s.uniform() * s.period
		s.advanceQuasi()
	}
	return s
}

// Stream yields one item's change times. It is not safe for concurrent use.
type Stream struct {
	m      Model
	r      *rand.Rand
	next   float64 // seconds
	b      float64 // Pareto scale
	period float64 // Quasi period, seconds
}

func (s *Stream) uniform() float64 { return float64(s.r.Uint64()>>11) / (1 << 53) }

// exp draws a unit exponential by inversion (not rand.ExpFloat64, whose
// algorithm Go may change: a seed must name the same web forever).
func (s *Stream) exp() float64 { return -math.Log(1 - s.uniform()) }

func (s *Stream) lomax(a float64) float64 {
	return s.b * (math.Pow(1-s.uniform(), -1/a) - 1)
}

// advanceQuasi moves next to the first potential time at or after it that
// actually changes.
func (s *Stream) advanceQuasi() {
	for s.uniform() >= s.m.p() {
		s.next += s.period
	}
}

// Peek returns the next change time without consuming it.
func (s *Stream) Peek() time.Duration { return seconds(s.next) }

// Next returns the next change time and moves past it.
func (s *Stream) Next() time.Duration {
	t := s.next
	switch s.m.Kind {
	case Poisson:
		s.next += s.exp() * s.m.Mean.Seconds()
	case Pareto:
		s.next += s.lomax(s.m.alpha())
	case Quasi:
		s.next += s.period
		s.advanceQuasi()
	}
	return seconds(t)
}

// Until returns every change time in (0, until], in order.
func (s *Stream) Until(until time.Duration) []time.Duration {
	var out []time.Duration
	for s.Peek() <= until {
		out = append(out, s.Next())
	}
	return out
}

func seconds(s float64) time.Duration {
	if s >= math.MaxInt64/float64(time.Second) {
		return math.MaxInt64
	}
	return time.Duration(s * float64(time.Second))
}

// History is an item's change times up to some horizon, sorted. Its zero
// value has no changes. It is safe for concurrent reads.
type History []time.Duration

// Times returns item's changes under m from seed up to until.
func (m Model) Times(seed, item uint64, until time.Duration) History {
	return m.Stream(seed, item).Until(until)
}

// Version is the number of changes at or before t: the version of the item
// a fetch at t sees (0 is the original).
func (h History) Version(t time.Duration) int {
	return sort.Search(len(h), func(i int) bool { return h[i] > t })
}

// Changed reports whether the item changed in (from, to].
func (h History) Changed(from, to time.Duration) bool { return h.Version(to) > h.Version(from) }

// LastAt returns the last change at or before t; false if there is none.
func (h History) LastAt(t time.Duration) (time.Duration, bool) {
	v := h.Version(t)
	if v == 0 {
		return 0, false
	}
	return h[v-1], true
}

// FirstAfter returns the first change after t; false if there is none
// before the history's horizon.
func (h History) FirstAfter(t time.Duration) (time.Duration, bool) {
	v := h.Version(t)
	if v == len(h) {
		return 0, false
	}
	return h[v], true
}

// GroupMeans returns SARSS's mean times between changes of its five
// priority groups, fastest first: θ = 60, 120, 240, 480 and 960 minutes.
func GroupMeans() []time.Duration {
	return []time.Duration{60 * time.Minute, 120 * time.Minute, 240 * time.Minute, 480 * time.Minute, 960 * time.Minute}
}
