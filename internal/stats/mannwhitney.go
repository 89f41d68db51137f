package stats

import (
	"math"
	"slices"
)

// exactLimit is the largest sample size on either side for which the
// exact distribution of U is used; beyond it the normal approximation is
// close enough.
const exactLimit = 30

// uCounts returns how many of the C(m+n, m) equally likely arrangements of
// two samples of sizes m and n give U = 0, 1, ..., m*n (U counts the pairs
// where the second sample's value is the larger). They are the
// coefficients of the Gaussian binomial [m+n choose m] in q, built as the
// product over i = 1..m of (1 - q^(n+i)) / (1 - q^i).
func uCounts(m, n int) []float64 {
	size := m*n + 1
	c := make([]float64, size)
	c[0] = 1
	for i := 1; i <= m; i++ {
		// Multiply by (1 - q^(n+i)), from the top down.
		for k := size - 1; k >= n+i; k-- {
			c[k] -= c[k-n-i]
		}
		// Divide by (1 - q^i): a running sum with stride i.
		for k := i; k < size; k++ {
			c[k] += c[k-i]
		}
	}
	return c
}

// uStat is the Mann-Whitney U of y against x (pairs with y > x, ties
// counting one half) and whether any value is tied.
func uStat(x, y []float64) (u float64, ties bool) {
	for _, a := range x {
		for _, b := range y {
			switch {
			case b > a:
				u++
			case b == a:
				u += 0.5
				ties = true
			}
		}
	}
	if !ties {
		all := append(slices.Clone(x), y...)
		slices.Sort(all)
		for i := 1; i < len(all); i++ {
			if all[i] == all[i-1] {
				ties = true
				break
			}
		}
	}
	return u, ties
}

// MannWhitney is the two-sided p-value of the Mann-Whitney U test of x
// against y: exact for small samples without ties, else the normal
// approximation with continuity and tie corrections. It is 1 when either
// sample is empty.
func MannWhitney(x, y []float64) float64 {
	m, n := len(x), len(y)
	if m == 0 || n == 0 {
		return 1
	}
	u, ties := uStat(x, y)
	if !ties && m <= exactLimit && n <= exactLimit {
		c := uCounts(m, n)
		var total, below, above float64
		for k, v := range c {
			total += v
			if float64(k) <= u {
				below += v
			}
			if float64(k) >= u {
				above += v
			}
		}
		return math.Min(1, 2*math.Min(below, above)/total)
	}
	mf, nf := float64(m), float64(n)
	N := mf + nf
	all := append(slices.Clone(x), y...)
	slices.Sort(all)
	var tie float64
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j] == all[i] {
			j++
		}
		t := float64(j - i)
		tie += t*t*t - t
		i = j
	}
	v := mf * nf / 12 * ((N + 1) - tie/(N*(N-1)))
	if v <= 0 {
		return 1
	}
	z := (math.Abs(u-mf*nf/2) - 0.5) / math.Sqrt(v)
	if z < 0 {
		return 1
	}
	return math.Min(1, 2*(1-normalCDF(z)))
}

// shiftInterval is the exact distribution-free interval (Moses) for the
// shift d such that y - d is distributed as x: from the k-th smallest to
// the k-th largest of the m*n differences y_j - x_i, k the largest with
// P(U <= k-1) <= alpha/2. It reports the interval's coverage, and false
// when the samples are too small for any k.
func shiftInterval(x, y []float64, alpha float64) (lo, hi, conf float64, ok bool) {
	m, n := len(x), len(y)
	if m == 0 || n == 0 {
		return 0, 0, 0, false
	}
	var k int
	if m <= exactLimit && n <= exactLimit {
		c := uCounts(m, n)
		var total float64
		for _, v := range c {
			total += v
		}
		var cum float64
		for k = 0; k < len(c); k++ {
			if (cum+c[k])/total > alpha/2 {
				break
			}
			cum += c[k]
		}
		// Now P(U <= k-1) = cum/total <= alpha/2 < P(U <= k).
		conf = 1 - 2*cum/total
	} else {
		mf, nf := float64(m), float64(n)
		z := normalQuantile(1 - alpha/2)
		k = int(math.Floor(mf*nf/2 - z*math.Sqrt(mf*nf*(mf+nf+1)/12)))
		conf = 1 - alpha
	}
	if k < 1 || k > m*n/2+1 {
		return 0, 0, 0, false
	}
	xs, ys := slices.Clone(x), slices.Clone(y)
	slices.Sort(xs)
	slices.Sort(ys)
	return kthDiff(xs, ys, k), kthDiff(xs, ys, m*n-k+1), conf, true
}

// kthDiff is the k-th smallest (from 1) of the m*n differences y_j - x_i
// of sorted x and y, found without forming them: a bisection over the
// float64 values, in their order as integers, for the least t with at
// least k differences at or below it. That t is a difference, and at most
// 64 steps of O(m+n) each find it, where sorting the differences would
// take O(mn log mn) time and O(mn) memory.
func kthDiff(x, y []float64, k int) float64 {
	lo, hi := orderKey(y[0]-x[len(x)-1]), orderKey(y[len(y)-1]-x[0])
	for lo < hi {
		mid := lo + (hi-lo)/2
		if countAtMost(x, y, fromOrderKey(mid)) >= k {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return fromOrderKey(lo)
}

// countAtMost counts the differences y_j - x_i at or below t. For each
// y_j they are a suffix of x (the differences fall as x_i grows), and the
// suffix starts no earlier for the next, larger, y_j.
func countAtMost(x, y []float64, t float64) int {
	n, i := 0, 0
	for _, b := range y {
		for i < len(x) && b-x[i] > t {
			i++
		}
		n += len(x) - i
	}
	return n
}

// orderKey maps a float64 to an integer that sorts as the float does.
func orderKey(f float64) uint64 {
	b := math.Float64bits(f)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

func fromOrderKey(k uint64) float64 {
	if k>>63 != 0 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}

func normalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

func normalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }
