// Package stats holds the statistics behind every comparison shakedown
// makes: a candidate's samples against the control's (one sample per
// repeat, such as a run's QPS or its p95 latency), the ratio of their
// medians with a confidence interval, a significance test, and one of five
// states; the steadiness of one run's per-second series; drift of a series
// over time; change points in a long history; and the Universal
// Scalability Law fitted to a sweep's throughput (usl.go).
//
// The method, in plain words:
//
//   - The ratio is the candidate's median over the control's.
//   - Its interval is the exact distribution-free one that goes with the
//     Mann-Whitney U test (Moses' interval, computed on the logarithms):
//     every candidate value is divided by every control value, and the
//     interval runs from the k-th smallest of those ratios to the k-th
//     largest, k taken from the exact distribution of U so that the
//     interval covers the true ratio with at least the confidence asked
//     (95% by default). It assumes only that the repeats of one side are
//     alike and independent, and that the candidate differs from the
//     control by a factor. It needs no random numbers, so a report is the
//     same each time it is made.
//   - The p-value is the Mann-Whitney U test's, two-sided (exact for small
//     samples without ties, else the normal approximation with a
//     correction for ties). The interval leaves out 1 exactly when p is
//     below 1 - confidence.
//   - "faster" or "slower" only when the whole interval lies beyond the
//     noise threshold (2% by default): above 1 + threshold or below 1 -
//     threshold, in the direction that is better or worse;
//   - "same" when the whole interval lies inside 1 +/- threshold;
//   - "inconclusive" otherwise, with an estimate of the repeats per side
//     that would settle it;
//   - "no verdict" with fewer than MinRuns runs on either side. With 2 or
//     3 runs a side no 95% interval exists (the test cannot reach p <=
//     0.05 before 4 runs a side, or 3 against 5): such comparisons come
//     out inconclusive, never faster, slower or same.
//
// Every function is pure: the same samples give the same answer.
package stats

import (
	"math"
	"slices"
)

// State is the outcome of a comparison.
type State string

// States of a comparison. "faster" and "slower" say which side is better
// for the figure compared: for latency, "faster" means lower.
const (
	Faster       State = "faster"
	Slower       State = "slower"
	Same         State = "same"
	Inconclusive State = "inconclusive"
	NoVerdict    State = "no verdict"
	// NoData is the verdict of a comparison in which a side has no
	// successful run: there is nothing to compare.
	NoData State = "no data"
)

// MinRuns is the fewest runs on each side for any verdict: with one run
// a side there is no spread to judge a difference by.
const MinRuns = 2

// Defaults.
const (
	DefaultThreshold  = 0.02
	DefaultConfidence = 0.95
)

// maxNeeded caps the estimate of repeats needed: beyond it the answer is
// "many", and more repeats are not the way to settle the question.
const maxNeeded = 1000

// Options say how to compare.
type Options struct {
	// Threshold is the noise threshold, a fraction (0.02 is 2%): smaller
	// differences count as the same. 0 means DefaultThreshold; use a tiny
	// positive value for "any difference".
	Threshold float64
	// Confidence of the interval, such as 0.95. 0 means DefaultConfidence.
	Confidence float64
	// LowerIsBetter is set for figures such as latency, where a ratio
	// below 1 is the better side.
	LowerIsBetter bool
}

func (o Options) norm() Options {
	if o.Threshold <= 0 {
		o.Threshold = DefaultThreshold
	}
	if o.Confidence <= 0 || o.Confidence >= 1 {
		o.Confidence = DefaultConfidence
	}
	return o
}

// Summary describes one side's samples.
type Summary struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// CV is the coefficient of variation (sample standard deviation over
	// the mean); 0 with fewer than two samples.
	CV float64 `json:"cv"`
}

// Summarize describes xs.
func Summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	sum := Summary{N: len(s), Min: s[0], Max: s[len(s)-1], Median: Median(s)}
	if len(s) > 1 {
		mean, sd := meanSD(s)
		if mean > 0 {
			sum.CV = sd / mean
		}
	}
	return sum
}

// Median is the median of xs, which need not be sorted; 0 when empty.
func Median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return 0
	}
	s := xs
	if !slices.IsSorted(xs) {
		s = slices.Clone(xs)
		slices.Sort(s)
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func meanSD(xs []float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	var v float64
	for _, x := range xs {
		v += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(v / float64(len(xs)-1))
}

// Comparison is a candidate's samples against the control's.
type Comparison struct {
	Control   Summary `json:"control"`
	Candidate Summary `json:"candidate"`
	// Ratio is the candidate's median over the control's; 0 when either
	// side has no samples or the control's median is not positive.
	Ratio float64 `json:"ratio"`
	// Low and High bound the interval of the ratio. Both are 0 when no
	// interval at the confidence asked exists (too few runs); then
	// Interval is false.
	Low      float64 `json:"low"`
	High     float64 `json:"high"`
	Interval bool    `json:"interval"`
	// Confidence is the interval's actual coverage, at least the one
	// asked (the exact interval moves in steps).
	Confidence float64 `json:"confidence"`
	// P is the two-sided Mann-Whitney p-value; 1 without a test.
	P     float64 `json:"p"`
	State State   `json:"state"`
	// Needed estimates how many runs per side would settle an
	// inconclusive comparison (0 when it is not inconclusive, or when no
	// number of repeats is likely to: the difference sits on the
	// threshold).
	Needed int `json:"needed"`
	// Threshold is the noise threshold used.
	Threshold float64 `json:"threshold"`
	// Reason, when set, says why the state is not what the interval alone
	// gives (a comparison with a baseline that knows the machine moved);
	// Note prints it after the state.
	Reason string `json:"reason,omitempty"`
}

// ReasonClientBound is the Reason of a comparison in which a run of
// either side was limited by its client (see ClientBound).
const ReasonClientBound = "client-bound"

// ClientBound is c made inconclusive because a run of either side was
// limited by the client that measured it: such a run measures the client
// as much as the server, so the comparison says nothing about the servers
// whatever its interval, and more runs of the same kind will not settle
// it.
func (c Comparison) ClientBound() Comparison {
	c.State, c.Needed, c.Reason = Inconclusive, 0, ReasonClientBound
	return c
}

// Note is the comparison in a few words for a table: "1 run: no verdict",
// "inconclusive (~9 runs)", "faster", "inconclusive: the machine changed
// (x0.711)", "inconclusive (client-bound)".
func (c Comparison) Note() string {
	if c.Reason == ReasonClientBound {
		return string(c.State) + " (" + c.Reason + ")"
	}
	if c.Reason != "" {
		return string(c.State) + ": " + c.Reason
	}
	switch c.State {
	case NoVerdict:
		n := min(c.Control.N, c.Candidate.N)
		if n == 1 {
			return "1 run: no verdict"
		}
		if n == 0 {
			return "no data"
		}
		return itoa(n) + " runs: no verdict"
	case Inconclusive:
		switch {
		case c.Needed > 0 && c.Needed < maxNeeded:
			return "inconclusive (~" + itoa(c.Needed) + " runs)"
		case c.Needed >= maxNeeded:
			return "inconclusive (many runs)"
		}
	}
	return string(c.State)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// Compare compares candidate samples against control samples.
func Compare(control, candidate []float64, o Options) Comparison {
	o = o.norm()
	c := Comparison{Control: Summarize(control), Candidate: Summarize(candidate), P: 1, State: NoVerdict, Threshold: o.Threshold}
	if c.Control.N == 0 || c.Candidate.N == 0 || c.Control.Median <= 0 {
		return c
	}
	c.Ratio = c.Candidate.Median / c.Control.Median
	if c.Control.N < MinRuns || c.Candidate.N < MinRuns || !allPositive(control) || !allPositive(candidate) {
		return c
	}
	lc, lx := logs(control), logs(candidate)
	c.P = MannWhitney(lc, lx)
	if lo, hi, conf, ok := shiftInterval(lc, lx, 1-o.Confidence); ok {
		c.Low, c.High, c.Interval, c.Confidence = math.Exp(lo), math.Exp(hi), true, conf
	}
	c.State = Inconclusive
	if c.Interval {
		c.State = StateOf(c.Low, c.High, o.Threshold)
		if o.LowerIsBetter {
			c.State = swap(c.State)
		}
	}
	if c.State == Inconclusive {
		c.Needed = needed(lc, lx, c.Ratio, o)
	}
	return c
}

// StateOf is the state of a ratio whose 95% interval is [low, high], a
// higher ratio being better: faster when the whole interval lies above
// 1+threshold, slower when below 1-threshold, the same when within both,
// and inconclusive otherwise.
func StateOf(low, high, threshold float64) State {
	switch {
	case low > 1+threshold:
		return Faster
	case high < 1-threshold:
		return Slower
	case low >= 1-threshold && high <= 1+threshold:
		return Same
	}
	return Inconclusive
}

// swap turns the state of a figure where higher is better into that of
// one where lower is.
func swap(s State) State {
	switch s {
	case Faster:
		return Slower
	case Slower:
		return Faster
	}
	return s
}

func allPositive(xs []float64) bool {
	for _, x := range xs {
		if !(x > 0) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

func logs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Log(x)
	}
	return out
}

// MinRunsFor95 is the smallest equal number of runs a side for which an
// exact 95% interval exists: with fewer, a comparison is inconclusive
// whatever the runs say.
const MinRunsFor95 = 4

// needed estimates the runs per side that would settle the comparison:
// under a normal model of the log samples with the spread seen so far, the
// interval's half-width shrinks as 1/sqrt(n); it must fall below the
// distance between the ratio and the threshold.
func needed(lc, lx []float64, ratio float64, o Options) int {
	_, sc := meanSD(lc)
	_, sx := meanSD(lx)
	s := math.Sqrt((sc*sc + sx*sx) / 2)
	d := math.Abs(math.Log(ratio))
	t := math.Log(1 + o.Threshold)
	gap := math.Abs(d - t)
	z := normalQuantile(1 - (1-o.Confidence)/2)
	floor := max(MinRunsFor95, max(len(lc), len(lx))+1)
	if s == 0 {
		return floor
	}
	if gap < 1e-9 {
		return maxNeeded
	}
	n := 2 * (z * s / gap) * (z * s / gap)
	if n >= maxNeeded {
		return maxNeeded
	}
	return max(floor, int(math.Ceil(n)))
}
