package mirror

import (
	"testing"

	"github.com/shakedown/shakedown/internal/stats"
)

// A class's latency ratio lies within its own interval, also where the
// control's and the candidate's latencies differ in shape (a candidate
// that is quick for most statements and slow for some): the ratio of the
// medians of such sides can fall outside an interval for the shift.
func TestClassLatencyRatioWithinItsInterval(t *testing.T) {
	var ctl, cand []float64
	for i := range 300 {
		c := 0.2 + 0.001*float64(i%50)
		ctl = append(ctl, c)
		switch {
		case i%3 == 0:
			cand = append(cand, c*4)
		default:
			cand = append(cand, c*0.8)
		}
	}
	var c ClassCandidate
	c.setLatency(ctl, cand)
	if c.State == stats.NoData || c.State == stats.NoVerdict || c.Low == 0 {
		t.Fatalf("no verdict from 300 pairs: %+v", c)
	}
	if c.Ratio < c.Low || c.Ratio > c.High {
		t.Fatalf("ratio %v outside its interval [%v, %v]", c.Ratio, c.Low, c.High)
	}
	// Two of three statements are 0.8x: the typical statement is faster.
	if c.Ratio != 0.8 || c.State != stats.Faster {
		t.Fatalf("ratio %v state %v; want 0.8, faster", c.Ratio, c.State)
	}
}
