package bisect

import (
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/stats"
)

// confidence is that of every interval bisect gives.
const confidence = stats.DefaultConfidence

// compare decides whether two sets of throughput samples b and a differ:
// the ratio median(b) / median(a), bounded by Lo and Hi (95%; both the
// ratio itself when too few runs give no interval, and the state then is
// never a verdict), with the project's verdict statistics
// (stats.Compare: ratio of medians, exact distribution-free interval).
// threshold is relative: 0.1 means a ratio beyond 1.1 or below 0.9.
func compare(a, b []float64, threshold float64) result.Effect {
	c := stats.Compare(a, b, stats.Options{Threshold: threshold, Confidence: confidence})
	out := result.Effect{Ratio: c.Ratio, Lo: c.Low, Hi: c.High, State: c.State}
	if !c.Interval {
		out.Lo, out.Hi = c.Ratio, c.Ratio
	}
	return out
}
