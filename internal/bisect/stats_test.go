package bisect

import (
	"testing"

	"github.com/shakedown/shakedown/internal/stats"
)

func TestCompare(t *testing.T) {
	tests := []struct {
		name      string
		a, b      []float64
		threshold float64
		state     stats.State
		ratio     float64
	}{
		{name: "twice as fast", a: []float64{100, 104, 97, 99}, b: []float64{201, 195, 206, 199}, threshold: 0.1, state: stats.Faster, ratio: 2.01},
		{name: "half as fast", a: []float64{100, 104, 97, 101}, b: []float64{50, 49, 52, 51}, threshold: 0.1, state: stats.Slower, ratio: 0.5},
		{name: "same within the threshold", a: []float64{100, 102, 99, 101}, b: []float64{101, 99, 100, 100}, threshold: 0.1, state: stats.Same, ratio: 1},
		{name: "wide spread", a: []float64{100, 60, 140, 90}, b: []float64{120, 70, 150, 110}, threshold: 0.1, state: stats.Inconclusive, ratio: 1.2105},
		{name: "three runs a side: no 95% interval", a: []float64{100, 104, 97}, b: []float64{201, 195, 206}, threshold: 0.1, state: stats.Inconclusive, ratio: 2.01},
		{name: "one run a side", a: []float64{100}, b: []float64{200}, threshold: 0.1, state: stats.NoVerdict, ratio: 2},
		{name: "no runs", a: nil, b: []float64{200, 210}, threshold: 0.1, state: stats.NoVerdict, ratio: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := compare(tt.a, tt.b, tt.threshold)
			if c.State != tt.state {
				t.Errorf("state: got %s (%+v), want %s", c.State, c, tt.state)
			}
			if d := c.Ratio - tt.ratio; d > 0.005 || d < -0.005 {
				t.Errorf("ratio: got %.4f, want %.4f", c.Ratio, tt.ratio)
			}
			if c.Lo > c.Ratio || c.Hi < c.Ratio {
				t.Errorf("interval: got [%.3f, %.3f] around %.3f, want it to hold the ratio", c.Lo, c.Hi, c.Ratio)
			}
		})
	}
}

func TestComparePaired(t *testing.T) {
	tests := []struct {
		name      string
		ctl, cand []float64
		threshold float64
		state     stats.State
		ratio     float64
	}{
		{name: "twice as fast", ctl: []float64{100, 104, 97, 99, 101, 98}, cand: []float64{201, 195, 206, 199, 203, 196}, threshold: 0.1, state: stats.Faster, ratio: 2.0},
		{name: "same within the threshold", ctl: []float64{100, 102, 99, 101, 100, 98}, cand: []float64{101, 99, 100, 100, 103, 97}, threshold: 0.1, state: stats.Same, ratio: 1},
		// The machine got twice as busy half way: each side halves, each
		// pair keeps its ratio.
		{name: "a shift of load part way", ctl: []float64{100, 102, 99, 50, 51, 49}, cand: []float64{150, 152, 149, 76, 75, 74}, threshold: 0.1, state: stats.Faster, ratio: 1.5},
		{name: "five pairs: no 95% interval", ctl: []float64{100, 104, 97, 99, 101}, cand: []float64{201, 195, 206, 199, 203}, threshold: 0.1, state: stats.Inconclusive, ratio: 2.0},
		{name: "wide spread", ctl: []float64{100, 100, 100, 100, 100, 100}, cand: []float64{80, 130, 95, 140, 110, 90}, threshold: 0.1, state: stats.Inconclusive, ratio: 1.06},
		{name: "one pair", ctl: []float64{100}, cand: []float64{200}, threshold: 0.1, state: stats.NoVerdict, ratio: 2},
		{name: "no pairs", ctl: nil, cand: nil, threshold: 0.1, state: stats.NoVerdict, ratio: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := comparePaired(tt.ctl, tt.cand, tt.threshold)
			if c.State != tt.state {
				t.Errorf("state: got %s (%+v), want %s", c.State, c, tt.state)
			}
			if d := c.Ratio - tt.ratio; d > 0.02 || d < -0.02 {
				t.Errorf("ratio: got %.4f, want %.4f", c.Ratio, tt.ratio)
			}
			if c.Lo > c.Ratio || c.Hi < c.Ratio {
				t.Errorf("interval: got [%.3f, %.3f] around %.3f, want it to hold the ratio", c.Lo, c.Hi, c.Ratio)
			}
		})
	}
}

func TestSignedRankK(t *testing.T) {
	// From the exact distribution of the signed-rank statistic at 95%.
	for n, want := range map[int]int{5: 0, 6: 1, 7: 3, 8: 4, 10: 9, 12: 14} {
		if got := signedRankK(n, 0.05); got != want {
			t.Errorf("n=%d: got k=%d, want %d", n, got, want)
		}
	}
}
