package bisect

import (
	"math"
	"slices"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/stats"
)

// A round pairs each run of a group with a run of the control made next to
// it, so that a machine that gets busier or quieter part way through a round
// moves both runs of a pair alike and cancels in their ratio. Comparing the
// two sides' medians instead (two independent samples) lets one shift of
// load split each side in two and leave every such round open.
//
// The pairs' ratios are judged with the exact distribution-free interval
// that goes with Wilcoxon's signed-rank test, on their logarithms: the
// Hodges-Lehmann estimate (the median of the n(n+1)/2 averages of two log
// ratios) and, around it, the k-th smallest to the k-th largest of those
// averages, k taken from the exact distribution of the signed-rank
// statistic. It assumes only that the pairs are independent and that each
// log ratio is spread symmetrically around the true one.

// MinPairs is the fewest pairs for which an exact 95% interval exists: with
// 5 the test cannot reach p <= 0.05.
const MinPairs = 6

// comparePaired judges candidate[i] against control[i], pair by pair, with
// the same states as compare. threshold is relative.
func comparePaired(control, candidate []float64, threshold float64) result.Effect {
	n := min(len(control), len(candidate))
	var d []float64
	for i := 0; i < n; i++ {
		if control[i] > 0 && candidate[i] > 0 {
			d = append(d, math.Log(candidate[i]/control[i]))
		}
	}
	if len(d) == 0 {
		return result.Effect{State: stats.NoVerdict}
	}
	walsh := make([]float64, 0, len(d)*(len(d)+1)/2)
	for i := range d {
		for j := i; j < len(d); j++ {
			walsh = append(walsh, (d[i]+d[j])/2)
		}
	}
	slices.Sort(walsh)
	est := median(walsh)
	c := result.Effect{Ratio: math.Exp(est), Lo: math.Exp(est), Hi: math.Exp(est), State: stats.NoVerdict}
	if len(d) < 2 || len(d) != n {
		return c
	}
	k := signedRankK(len(d), 1-confidence)
	if k < 1 {
		c.State = stats.Inconclusive
		return c
	}
	c.Lo, c.Hi = math.Exp(walsh[k-1]), math.Exp(walsh[len(walsh)-k])
	c.State = stats.StateOf(c.Lo, c.Hi, threshold)
	return c
}

// signedRankK is the largest k with P(W <= k-1) <= alpha/2, W the
// signed-rank statistic of n pairs under no difference; 0 when n is too
// small for any.
func signedRankK(n int, alpha float64) int {
	top := n * (n + 1) / 2
	counts := make([]float64, top+1)
	counts[0] = 1
	for r := 1; r <= n; r++ {
		for w := top; w >= r; w-- {
			counts[w] += counts[w-r]
		}
	}
	total := math.Pow(2, float64(n))
	var cum float64
	k := 0
	for ; k <= top; k++ {
		if (cum+counts[k])/total > alpha/2 {
			break
		}
		cum += counts[k]
	}
	return k
}

func median(sorted []float64) float64 {
	m := len(sorted) / 2
	if len(sorted)%2 == 1 {
		return sorted[m]
	}
	return (sorted[m-1] + sorted[m]) / 2
}
