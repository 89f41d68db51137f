package stats

import (
	"math"
	"slices"
)

// ComparePaired compares a candidate with the control where the samples
// are pairs: candidate[i] and control[i] measure the same thing (one
// statement run on both), so the question is how the candidate's figure
// moves pair by pair, not how two crowds differ. The ratio is the median
// of the pairs' ratios, and its interval the sign test's, from order
// statistics of the same ratios: distribution-free, exact, and the ratio
// always lies within it (Compare's ratio of medians need not lie within
// its shift interval when the two sides differ in shape).
//
// Pairs with a side that is not positive are left out; fewer than
// MinRuns pairs give no verdict. Needed is not estimated.
func ComparePaired(control, candidate []float64, o Options) Comparison {
	o = o.norm()
	n := min(len(control), len(candidate))
	c := Comparison{Control: Summarize(control[:n]), Candidate: Summarize(candidate[:n]), P: 1, State: NoVerdict, Threshold: o.Threshold}
	d := make([]float64, 0, n)
	for i := range n {
		a, b := control[i], candidate[i]
		if a > 0 && b > 0 && !math.IsInf(a, 0) && !math.IsInf(b, 0) {
			d = append(d, math.Log(b/a))
		}
	}
	if len(d) == 0 {
		return c
	}
	slices.Sort(d)
	c.Ratio = math.Exp(Median(d))
	if len(d) < MinRuns {
		return c
	}
	c.P = signTest(d)
	if k, conf, ok := signInterval(len(d), 1-o.Confidence); ok {
		c.Low, c.High, c.Interval, c.Confidence = math.Exp(d[k-1]), math.Exp(d[len(d)-k]), true, conf
	}
	c.State = Inconclusive
	if c.Interval {
		c.State = StateOf(c.Low, c.High, o.Threshold)
		if o.LowerIsBetter {
			c.State = swap(c.State)
		}
	}
	return c
}

// signInterval is the sign test's interval for the median of n sorted
// values: from the k-th smallest to the k-th largest, k the largest with
// P(B <= k-1) <= alpha/2 for B ~ Binomial(n, 1/2). It reports the
// interval's coverage, 1 - 2 P(B <= k-1), and false when n is too small
// for any k.
func signInterval(n int, alpha float64) (k int, conf float64, ok bool) {
	var cum float64
	for k = 0; k <= n/2; k++ {
		p := binomHalf(n, k)
		if cum+p > alpha/2 {
			break
		}
		cum += p
	}
	// Now P(B <= k-1) = cum <= alpha/2 < P(B <= k).
	if k < 1 {
		return 0, 0, false
	}
	return k, 1 - 2*cum, true
}

// signTest is the two-sided exact sign test of sorted log ratios d
// against a median of 0 (no change); zeros are left out.
func signTest(d []float64) float64 {
	var pos, neg int
	for _, x := range d {
		switch {
		case x > 0:
			pos++
		case x < 0:
			neg++
		}
	}
	n, s := pos+neg, min(pos, neg)
	if n == 0 {
		return 1
	}
	var p float64
	for i := 0; i <= s; i++ {
		p += binomHalf(n, i)
	}
	return math.Min(1, 2*p)
}

// binomHalf is P(B = k) for B ~ Binomial(n, 1/2), through the log-gamma
// function so that large n neither overflows nor loses the tail.
func binomHalf(n, k int) float64 {
	ln, _ := math.Lgamma(float64(n + 1))
	lk, _ := math.Lgamma(float64(k + 1))
	lnk, _ := math.Lgamma(float64(n - k + 1))
	return math.Exp(ln - lk - lnk - float64(n)*math.Ln2)
}
