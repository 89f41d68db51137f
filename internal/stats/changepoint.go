package stats

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"math/rand/v2"
)

// Change point detection over a long history (one value per sweep or run,
// in time order), after Hunter's approach:
//
//  1. E-Divisive means finds candidates: the split of a stretch of history
//     that makes its two sides most different by the energy distance, kept
//     when a permutation test (the values shuffled, ChangeOptions.
//     Permutations times, from a seed taken from the data so that the
//     answer is the same each time) finds so large a difference in fewer
//     than Alpha of the shuffles; then each side is split again. Long
//     histories are cut into overlapping windows of Window points.
//  2. Each candidate is then checked against its neighbours: Welch's
//     t-test of the points between the previous change and it against
//     those between it and the next, and the change of their means. The
//     weakest candidate that fails (p above MaxP, or a change smaller than
//     MinMagnitude) is removed, and the rest checked again, until every
//     one left passes.

// ChangeOptions tune ChangePoints. Zero values take the defaults.
type ChangeOptions struct {
	// MinMagnitude is the smallest relative change of the mean that
	// counts (0.05: 5%).
	MinMagnitude float64
	// MaxP is the largest t-test p-value a change may have (0.01).
	MaxP float64
	// Alpha is the permutation test's level for a candidate (0.05).
	Alpha float64
	// Permutations per permutation test (199).
	Permutations int
	// Window is the length of the windows a long history is cut into (50).
	Window int
	// MinSize is the fewest points on each side of a candidate (2).
	MinSize int
}

func (o ChangeOptions) norm() ChangeOptions {
	if o.MinMagnitude <= 0 {
		o.MinMagnitude = 0.05
	}
	if o.MaxP <= 0 {
		o.MaxP = 0.01
	}
	if o.Alpha <= 0 {
		o.Alpha = 0.05
	}
	if o.Permutations <= 0 {
		o.Permutations = 199
	}
	if o.Window <= 0 {
		o.Window = 50
	}
	if o.MinSize <= 0 {
		o.MinSize = 2
	}
	return o
}

// ChangePoint is where a history changes.
type ChangePoint struct {
	// Index is the first point after the change (from 0).
	Index int `json:"index"`
	// Before and After are the means of the stretches on either side, up
	// to the neighbouring change points.
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	// Change is After/Before - 1.
	Change float64 `json:"change"`
	// P is the t-test p-value of the two stretches.
	P float64 `json:"p"`
}

// ChangePoints finds the change points of xs, in order.
func ChangePoints(xs []float64, o ChangeOptions) []ChangePoint {
	o = o.norm()
	if len(xs) < 2*o.MinSize {
		return nil
	}
	rng := rand.New(rand.NewPCG(seedOf(xs), 0x5eed))
	found := map[int]bool{}
	step := max(o.Window/2, 1)
	for lo := 0; ; lo += step {
		hi := min(lo+o.Window, len(xs))
		eDivisive(xs, lo, hi, o, rng, found)
		if hi == len(xs) {
			break
		}
	}
	var idx []int
	for i := range xs {
		if found[i] {
			idx = append(idx, i)
		}
	}
	for {
		cps := describe(xs, idx)
		worst, worstP := -1, -1.0
		for i, cp := range cps {
			if cp.P > o.MaxP || math.Abs(cp.Change) < o.MinMagnitude {
				if cp.P > worstP {
					worst, worstP = i, cp.P
				}
			}
		}
		if worst < 0 {
			return cps
		}
		idx = append(idx[:worst], idx[worst+1:]...)
	}
}

// describe measures each change point against its neighbours.
func describe(xs []float64, idx []int) []ChangePoint {
	out := make([]ChangePoint, len(idx))
	for i, at := range idx {
		lo, hi := 0, len(xs)
		if i > 0 {
			lo = idx[i-1]
		}
		if i+1 < len(idx) {
			hi = idx[i+1]
		}
		before, after := xs[lo:at], xs[at:hi]
		mb, _ := meanSD(before)
		ma, _ := meanSD(after)
		cp := ChangePoint{Index: at, Before: mb, After: ma, P: WelchT(before, after)}
		if mb != 0 {
			cp.Change = ma/mb - 1
		}
		out[i] = cp
	}
	return out
}

// eDivisive adds to found the significant splits of xs[lo:hi], and of the
// stretches on either side of each, recursively.
func eDivisive(xs []float64, lo, hi int, o ChangeOptions, rng *rand.Rand, found map[int]bool) {
	seg := xs[lo:hi]
	if len(seg) < 2*o.MinSize {
		return
	}
	at, q := bestSplit(seg, o.MinSize)
	if at < 0 {
		return
	}
	shuffled := make([]float64, len(seg))
	copy(shuffled, seg)
	exceed := 0
	for range o.Permutations {
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if _, qp := bestSplit(shuffled, o.MinSize); qp >= q {
			exceed++
		}
	}
	if float64(exceed+1)/float64(o.Permutations+1) > o.Alpha {
		return
	}
	found[lo+at] = true
	eDivisive(xs, lo, lo+at, o, rng, found)
	eDivisive(xs, lo+at, hi, o, rng, found)
}

// bestSplit returns the split of seg (the index of the first point of the
// right side) with the largest energy statistic
//
//	Q = m n / (m + n) * (2/(m n) sum|a-b| - 1/C(m,2) sum|a-a'| - 1/C(n,2) sum|b-b'|)
//
// and that statistic; -1 when no split leaves minSize points a side.
func bestSplit(seg []float64, minSize int) (int, float64) {
	n := len(seg)
	best, bestQ := -1, math.Inf(-1)
	for at := minSize; at <= n-minSize; at++ {
		a, b := seg[:at], seg[at:]
		var cross, wa, wb float64
		for _, x := range a {
			for _, y := range b {
				cross += math.Abs(x - y)
			}
		}
		for i := range a {
			for j := i + 1; j < len(a); j++ {
				wa += math.Abs(a[i] - a[j])
			}
		}
		for i := range b {
			for j := i + 1; j < len(b); j++ {
				wb += math.Abs(b[i] - b[j])
			}
		}
		m, k := float64(len(a)), float64(len(b))
		e := 2 * cross / (m * k)
		if len(a) > 1 {
			e -= wa / (m * (m - 1) / 2)
		}
		if len(b) > 1 {
			e -= wb / (k * (k - 1) / 2)
		}
		if q := m * k / (m + k) * e; q > bestQ {
			best, bestQ = at, q
		}
	}
	return best, bestQ
}

// seedOf derives a seed from the values, so that the same history always
// gets the same shuffles.
func seedOf(xs []float64) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for _, x := range xs {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(x))
		h.Write(b[:])
	}
	return h.Sum64()
}
