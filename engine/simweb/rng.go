package simweb

import (
	"math"
	"math/bits"
)

// The generator uses its own small PRNG and distributions instead of
// math/rand so that a seed names the same web on every Go version and
// platform, forever.

// Stream tags keep the random streams of different purposes independent, so
// that, for example, changing how text is drawn never changes the graph.
const (
	tagSiteSize uint64 = iota + 1
	tagSitePop
	tagSiteAddr
	tagSite
	tagRobots
	tagTree
	tagLinks
	tagSpan
	tagText
	tagTitle
	tagSize
	tagName
	tagVocab
	tagErrors
	tagTagline
	tagTraps     // which sites get which traps
	tagTrapHref  // per-link session and tracking parameters
	tagTrapText  // text of the pages traps add
	tagTrapBytes // bytes of binary files served as HTML
)

// splitmix64 is the finaliser of SplitMix64, used to derive well-mixed seeds.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// mix derives a stream seed from the web seed, a tag and an index.
func mix(seed int64, tag uint64, i uint64) uint64 {
	return splitmix64(splitmix64(splitmix64(uint64(seed))^tag) ^ i)
}

// rng is wyrand: one 64x64->128 multiply per output, good statistical
// quality, and trivially seeded from one word. The zero value is a valid
// (if boring) generator.
type rng struct{ s uint64 }

func newRNG(seed int64, tag uint64, i uint64) rng { return rng{mix(seed, tag, i)} }

func (r *rng) next() uint64 {
	r.s += 0xa0761d6478bd642f
	hi, lo := bits.Mul64(r.s, r.s^0xe7037ed1a0b428db)
	return hi ^ lo
}

// intn returns a uniform integer in [0, n) for n > 0 (Lemire's method without
// the rejection step; the bias is below 2^-32 for the sizes used here).
func (r *rng) intn(n int) int {
	hi, _ := bits.Mul64(r.next(), uint64(n))
	return int(hi)
}

// float returns a uniform float64 in [0, 1).
func (r *rng) float() float64 {
	return float64(r.next()>>11) * (1.0 / (1 << 53))
}

// chance reports true with probability p.
func (r *rng) chance(p float64) bool { return r.float() < p }

// normal returns a standard normal deviate (Box-Muller, one of the pair).
func (r *rng) normal() float64 {
	u := 1 - r.float() // (0, 1]
	v := r.float()
	return math.Sqrt(-2*math.Log(u)) * math.Cos(2*math.Pi*v)
}

// lognormal returns a deviate whose median is median and whose logarithm has
// standard deviation sigma.
func (r *rng) lognormal(median, sigma float64) float64 {
	return median * math.Exp(sigma*r.normal())
}

// pareto returns a Pareto deviate with minimum 1 and tail index alpha.
func (r *rng) pareto(alpha float64) float64 {
	return math.Pow(1-r.float(), -1/alpha)
}

// zipfIndex returns an index in [0, n) where index k has probability roughly
// proportional to 1/(k+1)^s, using the inverse of the continuous
// distribution: O(1) and no table, so it works for any n.
func (r *rng) zipfIndex(n int, s float64) int {
	if n <= 1 {
		return 0
	}
	u := r.float()
	var x float64
	if s == 1 {
		x = math.Exp(u * math.Log(float64(n)+1))
	} else {
		a := 1 - s
		x = math.Pow(1+u*(math.Pow(float64(n)+1, a)-1), 1/a)
	}
	k := int(x) - 1
	return min(max(k, 0), n-1)
}

// aliasTable samples from a fixed discrete distribution in O(1) with Vose's
// alias method. A draw needs 32 random bits: 16 pick a column, 16 decide
// between the column and its alias, so one random word gives two draws. The
// 16-bit threshold changes probabilities by at most 2^-16 per column, which
// is fine for drawing words.
type aliasTable struct {
	// cols[i] holds the alias of column i in the high 16 bits and the
	// threshold below which column i keeps its own index in the low 16.
	cols []uint32
}

func newAliasTable(weights []float64) aliasTable {
	n := len(weights)
	if n > 1<<16 {
		panic("simweb: alias table too large")
	}
	sum := 0.0
	for _, w := range weights {
		sum += w
	}
	scaled := make([]float64, n)
	small := make([]int, 0, n)
	large := make([]int, 0, n)
	for i, w := range weights {
		scaled[i] = w * float64(n) / sum
		if scaled[i] < 1 {
			small = append(small, i)
		} else {
			large = append(large, i)
		}
	}
	t := aliasTable{cols: make([]uint32, n)}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		t.cols[s] = uint32(l)<<16 | uint32(min(scaled[s]*(1<<16), 0xffff))
		scaled[l] -= 1 - scaled[s]
		if scaled[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	for _, i := range append(small, large...) {
		t.cols[i] = uint32(i)<<16 | 0xffff // its own alias: always itself
	}
	return t
}

// draw maps 32 random bits to an index.
func (t *aliasTable) draw(x uint32) int {
	col := (x >> 16) * uint32(len(t.cols)) >> 16
	c := t.cols[col]
	// Branch-free choice between the column (keep all ones) and its alias.
	keep := uint32(int32(uint32(uint16(x))-(c&0xffff)) >> 31)
	return int(col&keep | c>>16&^keep)
}
