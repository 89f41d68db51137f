package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestSignIntervalExact(t *testing.T) {
	// n = 10: P(B <= 1) = 11/1024 <= 0.025 < P(B <= 2) = 56/1024.
	k, conf, ok := signInterval(10, 0.05)
	if !ok || k != 2 || math.Abs(conf-(1-22.0/1024)) > 1e-12 {
		t.Fatalf("signInterval(10, 0.05) = %d, %v, %v; want 2, %v, true", k, conf, ok, 1-22.0/1024)
	}
	// n = 5: even k = 1 covers only 1 - 2/32 = 0.9375 < 0.95.
	if k, _, ok := signInterval(5, 0.05); ok {
		t.Fatalf("signInterval(5, 0.05) = %d, true; want no interval", k)
	}
	if _, conf, ok := signInterval(6, 0.05); !ok || math.Abs(conf-(1-2.0/64)) > 1e-12 {
		t.Fatalf("signInterval(6, 0.05) coverage %v, %v; want %v", conf, ok, 1-2.0/64)
	}
}

func TestComparePairedRatioInItsInterval(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 300 {
		n := 10 + rng.IntN(400)
		ctl, cand := make([]float64, n), make([]float64, n)
		for i := range n {
			base := math.Exp(rng.NormFloat64() * 1.5) // skewed, wide
			ctl[i] = base * (1 + rng.Float64())
			cand[i] = base * (0.5 + 2*rng.Float64()*rng.Float64())
		}
		c := ComparePaired(ctl, cand, Options{Threshold: 0.1, LowerIsBetter: true})
		if !c.Interval {
			t.Fatalf("trial %d: n=%d gave no interval", trial, n)
		}
		if c.Ratio < c.Low || c.Ratio > c.High {
			t.Fatalf("trial %d: ratio %v outside its interval [%v, %v]", trial, c.Ratio, c.Low, c.High)
		}
	}
}

func TestComparePairedStates(t *testing.T) {
	n := 200
	ctl, same, slow := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		ctl[i] = 1 + float64(i%17)/10
		same[i] = ctl[i] * (1 + 0.01*float64(i%5-2))
		slow[i] = ctl[i] * (1.5 + 0.01*float64(i%5))
	}
	o := Options{Threshold: 0.1, LowerIsBetter: true}
	if c := ComparePaired(ctl, same, o); c.State != Same {
		t.Errorf("equal pairs: state %v (ratio %v [%v, %v]); want same", c.State, c.Ratio, c.Low, c.High)
	}
	c := ComparePaired(ctl, slow, o)
	if c.State != Slower || c.Ratio < 1.5 || c.Ratio > 1.55 || c.P > 1e-6 {
		t.Errorf("1.5x pairs: state %v ratio %v p %v; want slower, 1.50-1.54, p tiny", c.State, c.Ratio, c.P)
	}
	// Each pair's ratio is 1/r of the swapped pair's.
	if r := ComparePaired(slow, ctl, o); r.State != Faster || math.Abs(r.Ratio*c.Ratio-1) > 1e-9 {
		t.Errorf("swapped: state %v ratio %v; want faster, %v", r.State, r.Ratio, 1/c.Ratio)
	}
	if c := ComparePaired(ctl[:1], slow[:1], o); c.State != NoVerdict || c.Interval {
		t.Errorf("one pair: state %v interval %v; want no verdict", c.State, c.Interval)
	}
	if c := ComparePaired([]float64{0, -1}, []float64{1, 2}, o); c.State != NoVerdict || c.Ratio != 0 {
		t.Errorf("no positive pair: %+v; want no verdict, ratio 0", c)
	}
}
