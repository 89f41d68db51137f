package bisect

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sort"
)

// States of a comparison.
const (
	Faster       = "faster"       // the whole interval lies above 1+threshold
	Slower       = "slower"       // the whole interval lies below 1/(1+threshold)
	Same         = "same"         // the whole interval lies within the threshold
	Inconclusive = "inconclusive" // the interval straddles a threshold
	NoVerdict    = "no verdict"   // too few samples on a side
)

// Comparison is what the measurements of b say against those of a.
type Comparison struct {
	// Ratio is median(b) / median(a); Lo and Hi bound it (95%).
	Ratio float64 `json:"ratio"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	State string  `json:"state"`
}

// Differs reports whether the comparison shows a difference beyond the
// threshold.
func (c Comparison) Differs() bool { return c.State == Faster || c.State == Slower }

// compareFunc decides whether two sets of throughput samples differ, by what
// ratio and with what interval. threshold is relative: 0.1 means a ratio
// beyond 1.1 (or below 1/1.1) is a difference.
//
// INTEGRATION: this is the one place where bisect makes a statistical
// decision. It is a placeholder until the project's shared verdict
// statistics land (ratio of medians with a confidence interval, states
// faster/slower/same/inconclusive/no verdict); then point compare at that
// package and delete bootstrapCompare.
var compare compareFunc = bootstrapCompare

type compareFunc func(a, b []float64, threshold float64) Comparison

// resamples is the bootstrap's size.
const resamples = 2000

// bootstrapCompare is the placeholder: a percentile bootstrap of the ratio
// of medians, seeded from the data so that the same samples always give the
// same interval. It calls a difference only when the whole 95% interval lies
// beyond the threshold, and "same" only when the whole interval lies within
// it; anything else is inconclusive. With fewer than two samples on a side
// there is no verdict.
func bootstrapCompare(a, b []float64, threshold float64) Comparison {
	ma, mb := median(a), median(b)
	c := Comparison{State: NoVerdict}
	if ma > 0 {
		c.Ratio, c.Lo, c.Hi = mb/ma, mb/ma, mb/ma
	}
	if len(a) < 2 || len(b) < 2 || ma <= 0 {
		return c
	}
	rng := rand.New(rand.NewPCG(seed(a, b), 0x5eed))
	ratios := make([]float64, 0, resamples)
	ra, rb := make([]float64, len(a)), make([]float64, len(b))
	for i := 0; i < resamples; i++ {
		for j := range ra {
			ra[j] = a[rng.IntN(len(a))]
		}
		for j := range rb {
			rb[j] = b[rng.IntN(len(b))]
		}
		if m := median(ra); m > 0 {
			ratios = append(ratios, median(rb)/m)
		}
	}
	sort.Float64s(ratios)
	c.Lo = quantile(ratios, 0.025)
	c.Hi = quantile(ratios, 0.975)
	up, down := 1+threshold, 1/(1+threshold)
	switch {
	case c.Lo > up:
		c.State = Faster
	case c.Hi < down:
		c.State = Slower
	case c.Lo >= down && c.Hi <= up:
		c.State = Same
	default:
		c.State = Inconclusive
	}
	return c
}

// seed derives the bootstrap's seed from the samples.
func seed(a, b []float64) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	for _, xs := range [][]float64{a, b} {
		for _, x := range xs {
			binary.LittleEndian.PutUint64(buf[:], math.Float64bits(x))
			h.Write(buf[:])
		}
		h.Write([]byte{0xff})
	}
	return h.Sum64()
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// quantile of sorted xs, by linear interpolation.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	pos := q * float64(len(sorted)-1)
	i := int(pos)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	f := pos - float64(i)
	return sorted[i]*(1-f) + sorted[i+1]*f
}
