package stats

import (
	"math/rand/v2"
	"testing"
)

// history makes n points around base with relative noise, stepping by step
// (a fraction) from index at on; at < 0 means no step.
func history(seed uint64, n int, base, noise, step float64, at int) []float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	xs := make([]float64, n)
	for i := range xs {
		v := base * (1 + noise*rng.NormFloat64())
		if at >= 0 && i >= at {
			v *= 1 + step
		}
		xs[i] = v
	}
	return xs
}

func TestChangePoints(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		want []int // indexes of the first point after each change
	}{
		{"a 10% step after the 6th of 12", history(1, 12, 1000, 0.01, 0.10, 6), []int{6}},
		{"a 10% drop after the 6th of 12, 3% noise", history(2, 12, 1000, 0.03, -0.10, 6), []int{6}},
		{"two steps in 40", append(history(3, 20, 1000, 0.02, 0.2, -1), history(4, 20, 1200, 0.02, -0.25, 10)...), []int{20, 30}},
		{"flat, 3% noise", history(5, 12, 1000, 0.03, 0, -1), nil},
		{"a 3% step is below the 5% minimum", history(6, 20, 1000, 0.005, 0.03, 10), nil},
		{"too short", []float64{1, 2, 3}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cps := ChangePoints(tc.xs, ChangeOptions{})
			var got []int
			for _, cp := range cps {
				got = append(got, cp.Index)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got change points at %v (%+v), want %v", got, cps, tc.want)
			}
			for i := range got {
				if d := got[i] - tc.want[i]; d < -1 || d > 1 {
					t.Errorf("change %d: got index %d, want %d (within one)", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// TestChangePointsFlatHistories runs many flat histories with 3% noise:
// almost none may show a change point.
func TestChangePointsFlatHistories(t *testing.T) {
	falsePos := 0
	const runs = 100
	for seed := range uint64(runs) {
		if cps := ChangePoints(history(100+seed, 12, 1000, 0.03, 0, -1), ChangeOptions{}); len(cps) > 0 {
			falsePos++
		}
	}
	if falsePos > runs/20 {
		t.Errorf("flat histories: got a change point in %d of %d, want at most 5%%", falsePos, runs)
	}
	found := 0
	for seed := range uint64(runs) {
		cps := ChangePoints(history(300+seed, 12, 1000, 0.03, 0.10, 6), ChangeOptions{})
		if len(cps) == 1 && cps[0].Index >= 5 && cps[0].Index <= 7 {
			found++
		}
	}
	if found < runs*8/10 {
		t.Errorf("10%% steps after the 6th: found %d of %d, want at least 80%%", found, runs)
	}
}

func TestChangePointsReproducible(t *testing.T) {
	xs := history(9, 30, 1000, 0.03, 0.1, 15)
	a, b := ChangePoints(xs, ChangeOptions{}), ChangePoints(xs, ChangeOptions{})
	if len(a) != len(b) || (len(a) > 0 && a[0] != b[0]) {
		t.Errorf("got %+v, then %+v", a, b)
	}
}
