// Package segment splits one load over many runners without a coordinator.
//
// A segment is a rational interval (From, To] of the whole load, 0 <= From <
// To <= 1. Each runner is given its own segment and works out its share of
// every figure alone:
//
//   - a count v (threads, --events) becomes round(v*To) - round(v*From), so
//     the shares of a complete set of segments always add up to v exactly;
//   - a rate r (--rate) becomes r*(To-From);
//   - events are numbered: the segment's events are the whole's numbers
//     [round(v*From), round(v*To)), so the runners' events together are the
//     whole's, each exactly once;
//   - ticks of a global schedule (an arrival rate) are striped: every runner
//     ticks on the global period and fires only the ticks its segment owns
//     (see Stripe), so the union of the runners' ticks is the one-process
//     schedule.
//
// Boundaries are exact fractions, never floats: 1/3 + 1/3 + 1/3 is 1 here.
// Rounding is half up, and the same in every runner, which is all the
// adding up needs.
package segment

import (
	"fmt"
	"math/big"
	"math/bits"
	"strconv"
	"strings"

	"github.com/shakedown/shakedown/internal/usage"
)

// maxDen bounds a boundary's denominator, so that products with counts stay
// cheap and striping tables small. No real split needs finer slices.
const maxDen = 1 << 20

// Frac is an exact fraction Num/Den in lowest terms, 0 <= Num <= Den, Den > 0.
type Frac struct{ Num, Den int64 }

// rat is f as a big.Rat, for comparisons and products.
func (f Frac) rat() *big.Rat { return big.NewRat(f.Num, f.Den) }

// Cmp compares f and g: -1, 0 or +1.
func (f Frac) Cmp(g Frac) int { return f.rat().Cmp(g.rat()) }

// String writes f as 0, 1 or NUM/DEN.
func (f Frac) String() string {
	if f.Den == 1 {
		return strconv.FormatInt(f.Num, 10)
	}
	return strconv.FormatInt(f.Num, 10) + "/" + strconv.FormatInt(f.Den, 10)
}

// Float is f as a float64, for rates only: never for a boundary.
func (f Frac) Float() float64 { return float64(f.Num) / float64(f.Den) }

// scale returns round(v*f), half up; v >= 0.
func (f Frac) scale(v int64) int64 {
	// (v*2*Num + Den) / (2*Den) in 128 bits: v*Num can pass 64. The
	// quotient is at most v, so it fits and Div64 cannot overflow.
	hi, lo := bits.Mul64(uint64(v), uint64(2*f.Num))
	lo, carry := bits.Add64(lo, uint64(f.Den), 0)
	q, _ := bits.Div64(hi+carry, lo, uint64(2*f.Den))
	return int64(q)
}

// fracOf turns r into a Frac, refusing what is out of [0, 1] or too fine.
func fracOf(r *big.Rat) (Frac, error) {
	if r.Sign() < 0 || r.Cmp(big.NewRat(1, 1)) > 0 {
		return Frac{}, fmt.Errorf("%s is outside 0..1", r.RatString())
	}
	if !r.Denom().IsInt64() || r.Denom().Int64() > maxDen {
		return Frac{}, fmt.Errorf("%s is finer than 1/%d", r.RatString(), maxDen)
	}
	return Frac{Num: r.Num().Int64(), Den: r.Denom().Int64()}, nil
}

// parseFrac reads a boundary: 0, 1, 1/4, 0.25 or 25%.
func parseFrac(s string) (Frac, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return Frac{}, fmt.Errorf("empty boundary")
	}
	pct := strings.HasSuffix(t, "%")
	t = strings.TrimSuffix(t, "%")
	// big.Rat.SetString also takes exponents and huge numbers; keep to the
	// forms we document so a typo is not read as something else.
	for _, c := range t {
		if (c < '0' || c > '9') && c != '/' && c != '.' {
			return Frac{}, fmt.Errorf("%q is not a fraction (write 1/4, 0.25 or 25%%)", s)
		}
	}
	if len(t) > 24 || strings.Count(t, "/")+strings.Count(t, ".") > 1 || strings.HasPrefix(t, "/") || strings.HasSuffix(t, "/") || t == "." {
		return Frac{}, fmt.Errorf("%q is not a fraction (write 1/4, 0.25 or 25%%)", s)
	}
	r, ok := new(big.Rat).SetString(t)
	if !ok {
		return Frac{}, fmt.Errorf("%q is not a fraction (write 1/4, 0.25 or 25%%)", s)
	}
	if pct {
		r.Quo(r, big.NewRat(100, 1))
	}
	return fracOf(r)
}

// Segment is the part (From, To] of the whole load one runner drives.
type Segment struct{ From, To Frac }

// Whole is the segment of a runner alone: 0:1.
var Whole = Segment{From: Frac{0, 1}, To: Frac{1, 1}}

// IsWhole reports whether s is the whole load.
func (s Segment) IsWhole() bool { return s.From.Num == 0 && s.To.Num == s.To.Den }

// String writes s as FROM:TO, e.g. 1/4:1/2.
func (s Segment) String() string { return s.From.String() + ":" + s.To.String() }

// Part says whether s is the i-th (from 1) of n equal parts, and which.
func (s Segment) Part() (i, n int64, ok bool) {
	w := new(big.Rat).Sub(s.To.rat(), s.From.rat())
	if w.Num().Cmp(big.NewInt(1)) != 0 {
		return 0, 0, false
	}
	n = w.Denom().Int64()
	// From = (i-1)/n must hold exactly.
	f := new(big.Rat).Mul(s.From.rat(), big.NewRat(n, 1))
	if !f.IsInt() {
		return 0, 0, false
	}
	return f.Num().Int64() + 1, n, true
}

// Share is the segment's part of a count v >= 0: round(v*To) - round(v*From).
// The shares of a complete set of segments add up to v.
func (s Segment) Share(v int64) int64 {
	lo, hi := s.Range(v)
	return hi - lo
}

// Range is the numbers [lo, hi) of the whole's v events (numbered from 0)
// that belong to the segment.
func (s Segment) Range(v int64) (lo, hi int64) {
	if v <= 0 {
		return 0, 0
	}
	return s.From.scale(v), s.To.scale(v)
}

// Rate is the segment's part of a rate: rate*(To-From).
func (s Segment) Rate(rate float64) float64 {
	w, _ := new(big.Rat).Sub(s.To.rat(), s.From.rat()).Float64()
	return rate * w
}

// Parse reads a --segment value: I/N, the I-th of N equal parts (1 <= I <=
// N), or FROM:TO with boundaries written 1/4, 0.25 or 25%.
func Parse(s string) (Segment, error) {
	bad := func(why string) (Segment, error) {
		return Segment{}, usage.Errorf("--segment %q: %s; write I/N (the I-th of N equal parts, 1 <= I <= N, e.g. 2/4) or FROM:TO (e.g. 1/4:1/2)", s, why)
	}
	if from, to, ok := strings.Cut(s, ":"); ok {
		f, err := parseFrac(from)
		if err != nil {
			return bad(err.Error())
		}
		t, err := parseFrac(to)
		if err != nil {
			return bad(err.Error())
		}
		if f.Cmp(t) >= 0 {
			return bad("FROM must be below TO")
		}
		return Segment{From: f, To: t}, nil
	}
	is, ns, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return bad("no / or :")
	}
	i, err1 := strconv.ParseInt(is, 10, 64)
	n, err2 := strconv.ParseInt(ns, 10, 64)
	if err1 != nil || err2 != nil {
		return bad("I and N must be whole numbers")
	}
	return Nth(i, n)
}

// Nth is the i-th (1-based) of n equal segments.
func Nth(i, n int64) (Segment, error) {
	switch {
	case n < 1 || n > maxDen:
		return Segment{}, usage.Errorf("--segment %d/%d: N must be 1..%d", i, n, maxDen)
	case i < 1 || i > n:
		return Segment{}, usage.Errorf("--segment %d/%d: I must be 1..%d (segments count from 1)", i, n, n)
	}
	from, _ := fracOf(big.NewRat(i-1, n))
	to, _ := fracOf(big.NewRat(i, n))
	return Segment{From: from, To: to}, nil
}
