package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestUCounts(t *testing.T) {
	tests := []struct {
		name  string
		m, n  int
		total float64
		first float64 // arrangements with U = 0
	}{
		{"3 and 3", 3, 3, 20, 1},
		{"4 and 4", 4, 4, 70, 1},
		{"5 and 5", 5, 5, 252, 1},
		{"2 and 7", 2, 7, 36, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := uCounts(tc.m, tc.n)
			var sum float64
			for _, v := range c {
				sum += v
			}
			if sum != tc.total || c[0] != tc.first || len(c) != tc.m*tc.n+1 {
				t.Errorf("got total %g, c[0] %g, len %d; want %g, %g, %d", sum, c[0], len(c), tc.total, tc.first, tc.m*tc.n+1)
			}
			for k := range c {
				if c[k] != c[len(c)-1-k] {
					t.Errorf("not symmetric at %d: got %g and %g", k, c[k], c[len(c)-1-k])
				}
			}
		})
	}
}

func TestMannWhitney(t *testing.T) {
	tests := []struct {
		name string
		x, y []float64
		want float64
	}{
		{"3 and 3 apart: the best 3 a side can do", []float64{1, 2, 3}, []float64{4, 5, 6}, 0.1},
		{"4 and 4 apart", []float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, 2.0 / 70},
		{"5 and 5 apart", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 2.0 / 252},
		{"interleaved", []float64{1, 3, 5, 7}, []float64{2, 4, 6, 8}, 0.6857142857},
		{"one side empty", nil, []float64{1}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := MannWhitney(tc.x, tc.y); !near(got, tc.want, 1e-6) {
				t.Errorf("got %.6f, want %.6f", got, tc.want)
			}
		})
	}
	// Ties: the normal approximation, still sensible.
	if p := MannWhitney([]float64{1, 1, 2, 2, 3}, []float64{4, 4, 5, 5, 6}); p > 0.02 || p < 0.005 {
		t.Errorf("tied samples apart: got p %.4f, want about 0.01", p)
	}
}

func TestWelchT(t *testing.T) {
	// scipy.stats.ttest_ind(x, y, equal_var=False): p = 0.1075.
	if got := WelchT([]float64{1, 2, 3, 4, 5}, []float64{2, 4, 6, 8, 10}); !near(got, 0.1075, 0.001) {
		t.Errorf("got %.4f, want 0.1075", got)
	}
	if got := WelchT([]float64{1}, []float64{2, 3}); got != 1 {
		t.Errorf("too few: got %g, want 1", got)
	}
}

func TestCompare(t *testing.T) {
	ctl5 := []float64{1000, 1010, 990, 1005, 995}
	tests := []struct {
		name      string
		ctl, cand []float64
		opt       Options
		state     State
		note      string
		ratio     float64
		interval  bool
	}{
		{"one run a side", []float64{1000}, []float64{1300}, Options{}, NoVerdict, "1 run: no verdict", 1.3, false},
		{"one run on the candidate's side", ctl5, []float64{1300}, Options{}, NoVerdict, "1 run: no verdict", 1.3, false},
		{"3 a side, far apart: no 95% interval yet", []float64{1000, 1010, 990}, []float64{1400, 1410, 1390}, Options{}, Inconclusive, "inconclusive (~4 runs)", 1.4, false},
		{"5 a side, 40% faster", ctl5, []float64{1400, 1410, 1390, 1405, 1395}, Options{}, Faster, "faster", 1.4, true},
		{"5 a side, 20% slower", ctl5, []float64{800, 810, 790, 805, 795}, Options{}, Slower, "slower", 0.8, true},
		{"5 a side, the same within 0.5%", ctl5, []float64{1001, 1009, 991, 1004, 996}, Options{}, Same, "same", 1.0, true},
		{"5 a side, 1.5% faster but inside the threshold", ctl5, []float64{1016, 1024, 1006, 1021, 1011}, Options{}, Inconclusive, "", 1.016, true},
		{"5 a side, noisy", []float64{1000, 1250, 800, 1100, 950}, []float64{1050, 900, 1300, 980, 1150}, Options{}, Inconclusive, "", 1.05, true},
		{"latency 30% lower is faster", ctl5, []float64{700, 707, 693, 703, 697}, Options{LowerIsBetter: true}, Faster, "faster", 0.7, true},
		{"latency 30% higher is slower", ctl5, []float64{1300, 1313, 1287, 1306, 1294}, Options{LowerIsBetter: true}, Slower, "slower", 1.3, true},
		{"a 10% threshold calls 5% the same", ctl5, []float64{1050, 1060, 1040, 1055, 1045}, Options{Threshold: 0.10}, Same, "same", 1.05, true},
		{"no control data", nil, []float64{1}, Options{}, NoVerdict, "no data", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Compare(tc.ctl, tc.cand, tc.opt)
			if c.State != tc.state {
				t.Errorf("state: got %s, want %s (%+v)", c.State, tc.state, c)
			}
			if tc.note != "" && c.Note() != tc.note {
				t.Errorf("note: got %q, want %q", c.Note(), tc.note)
			}
			if !near(c.Ratio, tc.ratio, 0.002) {
				t.Errorf("ratio: got %.4f, want %.4f", c.Ratio, tc.ratio)
			}
			if c.Interval != tc.interval {
				t.Errorf("interval: got %v, want %v", c.Interval, tc.interval)
			}
			if c.Interval && (c.Low > c.Ratio || c.High < c.Ratio || c.Confidence < 0.95) {
				t.Errorf("interval: got [%.4f, %.4f] at %.3f around %.4f, want it to hold the ratio at >= 95%%", c.Low, c.High, c.Confidence, c.Ratio)
			}
			if c.State == Inconclusive && c.Needed == 0 {
				t.Errorf("inconclusive without an estimate of the runs needed")
			}
			if c.State != Inconclusive && c.Needed != 0 {
				t.Errorf("needed: got %d for %s, want 0", c.Needed, c.State)
			}
			if again := Compare(tc.ctl, tc.cand, tc.opt); again != c {
				t.Errorf("not reproducible: got %+v, then %+v", c, again)
			}
		})
	}
}

// TestCompareCalibration compares a server with itself many times over
// (log-normal noise of 10%, 5 runs a side): at most 5% of the comparisons
// may come out faster or slower, and "same" must not be claimed for a
// noise that wide.
func TestCompareCalibration(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func() []float64 {
		xs := make([]float64, 5)
		for i := range xs {
			xs[i] = 1000 * math.Exp(0.10*rng.NormFloat64())
		}
		return xs
	}
	const trials = 2000
	counts := map[State]int{}
	for range trials {
		counts[Compare(draw(), draw(), Options{}).State]++
	}
	if wrong := counts[Faster] + counts[Slower]; wrong > trials*5/100 {
		t.Errorf("A/A: got %d of %d faster or slower, want at most 5%%", wrong, trials)
	}
	if counts[Same] > 0 {
		t.Errorf("A/A with 10%% noise: got %d 'same', want none (the noise is wider than the threshold)", counts[Same])
	}
	t.Logf("A/A outcomes: %v", counts)

	// A real 30% difference under the same noise is found most of the time.
	found := 0
	for range trials {
		a, b := draw(), draw()
		for i := range b {
			b[i] *= 1.3
		}
		if Compare(a, b, Options{}).State == Faster {
			found++
		}
	}
	if found < trials/2 {
		t.Errorf("A/B 1.3x: got %d of %d faster, want most", found, trials)
	}
	t.Logf("A/B 1.3x: %d of %d faster", found, trials)
}

func TestSteady(t *testing.T) {
	tests := []struct {
		name     string
		xs       []float64
		unsteady bool
	}{
		{"steady", []float64{1000, 1010, 995, 1005, 998, 1002, 1001, 999}, false},
		{"warming up", []float64{600, 650, 700, 800, 950, 1000, 1010, 1005}, true},
		{"a flush storm", []float64{1000, 1000, 200, 1000, 1000, 150, 1000, 1000}, true},
		{"too short to judge", []float64{100, 1000}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Steady(tc.xs, 0.02)
			if s.Unsteady != tc.unsteady {
				t.Errorf("got unsteady %v (%+v), want %v", s.Unsteady, s, tc.unsteady)
			}
			if s.Unsteady && s.Why == "" {
				t.Errorf("unsteady without a reason")
			}
		})
	}
}

func TestDrift(t *testing.T) {
	rising := [][]float64{{100, 104, 108, 112}, {200, 207, 215, 224}, {50, 52, 54, 57}, {80, 83, 86, 90}}
	if tr := Drift(rising); !tr.Drifting(0.02) || tr.Change < 0.05 {
		t.Errorf("rising repeats: got %+v, want a drift of about +12%%", tr)
	}
	flat := [][]float64{{100, 102, 99, 101}, {200, 198, 203, 199}, {50, 51, 49, 50}, {80, 79, 81, 80}}
	if tr := Drift(flat); tr.Drifting(0.02) {
		t.Errorf("flat repeats: got %+v, want no drift", tr)
	}
	if tr := Drift([][]float64{{1}}); tr.P != 1 {
		t.Errorf("nothing to test: got %+v, want p 1", tr)
	}
}

// TestKthDiff checks the bisection against the m*n differences sorted,
// with ties, negative values and samples of unequal sizes.
func TestKthDiff(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name string
		m, n int
		val  func() float64
	}{
		{"continuous", 7, 12, func() float64 { return rng.NormFloat64() }},
		{"ties", 15, 9, func() float64 { return float64(rng.IntN(4)) }},
		{"latencies", 40, 33, func() float64 { return math.Log(0.1 + rng.ExpFloat64()) }},
		{"one each", 1, 1, func() float64 { return rng.Float64() - 0.5 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, y := make([]float64, tc.m), make([]float64, tc.n)
			for i := range x {
				x[i] = tc.val()
			}
			for i := range y {
				y[i] = tc.val()
			}
			var d []float64
			for _, a := range x {
				for _, b := range y {
					d = append(d, b-a)
				}
			}
			slices.Sort(d)
			slices.Sort(x)
			slices.Sort(y)
			for k := 1; k <= len(d); k++ {
				if got := kthDiff(x, y, k); got != d[k-1] {
					t.Fatalf("k=%d: got %v, want %v", k, got, d[k-1])
				}
			}
		})
	}
}

// TestNoteReason: a state set for a reason other than the interval says
// the reason after it.
func TestNoteReason(t *testing.T) {
	tests := []struct {
		name string
		c    Comparison
		want string
	}{
		{"no reason", Comparison{State: Inconclusive, Needed: 9}, "inconclusive (~9 runs)"},
		{"the machine changed", Comparison{State: Inconclusive, Reason: "the machine changed (x0.711)"}, "inconclusive: the machine changed (x0.711)"},
		{"the same runs", Comparison{State: Same, Reason: "the baseline's own runs"}, "same: the baseline's own runs"},
		{"client-bound", Comparison{State: Inconclusive, Reason: ReasonClientBound}, "inconclusive (client-bound)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.Note(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestClientBoundNeverSame: a comparison with a client-bound run is
// inconclusive whatever its interval says, and asks for no more runs.
func TestClientBoundNeverSame(t *testing.T) {
	same := []float64{100, 101, 99, 100, 100.5, 99.5, 100, 101}
	faster := []float64{150, 151, 149, 150, 150.5, 149.5, 150, 151}
	few := []float64{100, 120}
	for _, tc := range []struct {
		name            string
		control, cand   []float64
		wantBeforeState State
	}{
		{"same", same, same, Same},
		{"faster", same, faster, Faster},
		{"inconclusive", few, []float64{110, 90}, Inconclusive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Compare(tc.control, tc.cand, Options{Threshold: 0.05})
			if c.State != tc.wantBeforeState {
				t.Fatalf("before: got %s, want %s", c.State, tc.wantBeforeState)
			}
			b := c.ClientBound()
			if b.State != Inconclusive || b.Needed != 0 || b.Note() != "inconclusive (client-bound)" {
				t.Errorf("got %s, needed %d, note %q; want inconclusive, 0, \"inconclusive (client-bound)\"", b.State, b.Needed, b.Note())
			}
			if b.Ratio != c.Ratio || b.Low != c.Low || b.High != c.High {
				t.Errorf("figures: got ratio %v [%v, %v], want them kept: %v [%v, %v]", b.Ratio, b.Low, b.High, c.Ratio, c.Low, c.High)
			}
		})
	}
}
