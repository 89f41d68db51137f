package bisect

import (
	"github.com/shakedown/shakedown/internal/stats"
)

// States of a comparison, as internal/stats names them.
const (
	Faster       = string(stats.Faster)       // the whole interval lies above 1+threshold
	Slower       = string(stats.Slower)       // the whole interval lies below 1/(1+threshold)
	Same         = string(stats.Same)         // the whole interval lies within both
	Inconclusive = string(stats.Inconclusive) // anything else
	NoVerdict    = string(stats.NoVerdict)    // too few samples on a side
)

// confidence is that of every interval bisect gives.
const confidence = stats.DefaultConfidence

// MinRepeats is the fewest runs per measurement: with fewer, no 95%
// interval exists and no comparison can come out faster, slower or same.
const MinRepeats = stats.MinRunsFor95

// Comparison is what the measurements of b say against those of a.
type Comparison struct {
	// Ratio is median(b) / median(a); Lo and Hi bound it (95%); both are
	// the ratio itself when too few runs give no interval, and the state
	// then is never a verdict.
	Ratio float64 `json:"ratio"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	State string  `json:"state"`
}

// Differs reports whether the comparison shows a difference beyond the
// threshold.
func (c Comparison) Differs() bool { return c.State == Faster || c.State == Slower }

// compare decides whether two sets of throughput samples differ, by what
// ratio and with what interval. The ratio and its interval are the
// project's verdict statistics (stats.Compare: ratio of medians, exact
// distribution-free interval). The state is judged on a log scale, as
// bisect's thresholds are a share of the whole difference on a log scale:
// threshold 0.1 means a ratio beyond 1.1 or below 1/1.1, so that a group
// that slows the control is held to the same bar as one that speeds it up.
func compare(a, b []float64, threshold float64) Comparison {
	c := stats.Compare(a, b, stats.Options{Threshold: threshold, Confidence: confidence})
	out := Comparison{Ratio: c.Ratio, Lo: c.Low, Hi: c.High, State: string(c.State)}
	if !c.Interval {
		// Too few runs: stats says inconclusive or no verdict.
		out.Lo, out.Hi = c.Ratio, c.Ratio
		return out
	}
	out.State = logState(out.Lo, out.Hi, threshold, threshold)
	return out
}

// logState is the state of an interval [lo, hi] of a ratio: beyond
// 1+matter or below 1/(1+matter) is a difference; within 1+clear and
// 1/(1+clear) the same; anything else inconclusive.
func logState(lo, hi, matter, clear float64) string {
	switch {
	case lo > 1+matter:
		return Faster
	case hi < 1/(1+matter):
		return Slower
	case lo >= 1/(1+clear) && hi <= 1+clear:
		return Same
	}
	return Inconclusive
}

// median is the median of xs.
func median(xs []float64) float64 { return stats.Median(xs) }
