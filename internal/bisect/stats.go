package bisect

import (
	"github.com/shakedown/shakedown/internal/stats"
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
	Ratio float64     `json:"ratio"`
	Lo    float64     `json:"lo"`
	Hi    float64     `json:"hi"`
	State stats.State `json:"state"`
}

// Differs reports whether the comparison shows a difference beyond the
// threshold.
func (c Comparison) Differs() bool { return c.State == stats.Faster || c.State == stats.Slower }

// compare decides whether two sets of throughput samples differ, by what
// ratio and with what interval, with the project's verdict statistics
// (stats.Compare: ratio of medians, exact distribution-free interval).
// threshold is relative: 0.1 means a ratio beyond 1.1 or below 0.9.
func compare(a, b []float64, threshold float64) Comparison {
	c := stats.Compare(a, b, stats.Options{Threshold: threshold, Confidence: confidence})
	out := Comparison{Ratio: c.Ratio, Lo: c.Low, Hi: c.High, State: c.State}
	if !c.Interval {
		out.Lo, out.Hi = c.Ratio, c.Ratio
	}
	return out
}
