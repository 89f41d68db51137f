package stats

import (
	"math"
	"slices"
)

// Steadiness says whether one run kept a steady pace: its per-second
// figures (QPS) in the first half against the second, and their spread.
type Steadiness struct {
	// Halves is the mean of the second half over the mean of the first;
	// 0 with fewer than MinSeconds values.
	Halves float64 `json:"halves"`
	// P is Welch's t-test p-value of the two halves.
	P float64 `json:"p"`
	// CV is the coefficient of variation of the per-second values.
	CV float64 `json:"cv"`
	// Unsteady is set when the halves differ beyond the noise threshold
	// (and the difference is significant, p < 0.01), or when CV exceeds
	// HighCV. Why says which, in words.
	Unsteady bool   `json:"unsteady"`
	Why      string `json:"why,omitempty"`
}

// MinSeconds is the fewest per-second values a run needs to be judged
// steady or not.
const MinSeconds = 4

// HighCV is the spread of per-second values above which a run is unsteady
// whatever its halves: flush storms and stalls.
const HighCV = 0.15

// Steady judges a run's per-second series against the noise threshold (a
// fraction; 0 means DefaultThreshold).
func Steady(perSecond []float64, threshold float64) Steadiness {
	if threshold <= 0 {
		threshold = DefaultThreshold
	}
	n := len(perSecond)
	if n < MinSeconds {
		return Steadiness{P: 1}
	}
	first, second := perSecond[:n/2], perSecond[n-n/2:]
	m1, _ := meanSD(first)
	m2, _ := meanSD(second)
	mean, sd := meanSD(perSecond)
	s := Steadiness{P: WelchT(first, second)}
	if m1 > 0 {
		s.Halves = m2 / m1
	}
	if mean > 0 {
		s.CV = sd / mean
	}
	switch {
	case s.Halves > 0 && math.Abs(s.Halves-1) > threshold && s.P < 0.01:
		s.Unsteady = true
		s.Why = "second half " + signedPct(s.Halves-1) + " against the first"
	case s.CV > HighCV:
		s.Unsteady = true
		s.Why = "per-second CV " + pct1(s.CV)
	}
	return s
}

func signedPct(x float64) string {
	s := pct1(math.Abs(x))
	if x < 0 {
		return "-" + s
	}
	return "+" + s
}

func pct1(x float64) string {
	v := math.Round(x * 1000)
	return itoa(int(v)/10) + "." + itoa(int(v)%10) + "%"
}

// Trend is how a set of series moves with time.
type Trend struct {
	// Change is the typical relative change from the first point of a
	// series to its last (Sen's slope over the series' median, times its
	// length less one, the median over the series).
	Change float64 `json:"change"`
	// P is the two-sided p-value of the stratified Mann-Kendall test:
	// the S statistics of the series summed, against their summed
	// variance. 1 when there is too little to test.
	P float64 `json:"p"`
	// N is the number of points tested.
	N int `json:"n"`
}

// Drifting reports whether t is a real drift: significant at p < 0.05 and
// larger than the noise threshold.
func (t Trend) Drifting(threshold float64) bool {
	if threshold <= 0 {
		threshold = DefaultThreshold
	}
	return t.P < 0.05 && math.Abs(t.Change) > threshold
}

// Drift tests whether the series, each in time order (the control's
// repeats of each workload and thread level, say), trend the same way.
// Series of fewer than 2 points are skipped.
func Drift(series [][]float64) Trend {
	var s, v float64
	var changes []float64
	n := 0
	for _, xs := range series {
		k := len(xs)
		if k < 2 {
			continue
		}
		n += k
		for i := 0; i < k; i++ {
			for j := i + 1; j < k; j++ {
				switch {
				case xs[j] > xs[i]:
					s++
				case xs[j] < xs[i]:
					s--
				}
			}
		}
		kf := float64(k)
		v += kf * (kf - 1) * (2*kf + 5) / 18
		if med := Median(xs); med > 0 {
			changes = append(changes, senSlope(xs)*(kf-1)/med)
		}
	}
	t := Trend{P: 1, N: n, Change: Median(changes)}
	if v <= 0 {
		return t
	}
	z := (math.Abs(s) - 1) / math.Sqrt(v)
	if z > 0 {
		t.P = math.Min(1, 2*(1-normalCDF(z)))
	}
	return t
}

// senSlope is the median of the slopes between every two points.
func senSlope(xs []float64) float64 {
	var slopes []float64
	for i := range xs {
		for j := i + 1; j < len(xs); j++ {
			slopes = append(slopes, (xs[j]-xs[i])/float64(j-i))
		}
	}
	slices.Sort(slopes)
	return Median(slopes)
}

// WelchT is the two-sided p-value of Welch's t-test of the means of x and
// y; 1 when either has fewer than two values or neither varies.
func WelchT(x, y []float64) float64 {
	if len(x) < 2 || len(y) < 2 {
		return 1
	}
	mx, sx := meanSD(x)
	my, sy := meanSD(y)
	nx, ny := float64(len(x)), float64(len(y))
	vx, vy := sx*sx/nx, sy*sy/ny
	se := vx + vy
	if se <= 0 {
		if mx == my {
			return 1
		}
		return 0
	}
	t := math.Abs(mx-my) / math.Sqrt(se)
	df := se * se / (vx*vx/(nx-1) + vy*vy/(ny-1))
	return studentTwoSided(t, df)
}

// studentTwoSided is P(|T| >= t) for Student's t with df degrees of
// freedom: the regularised incomplete beta I_{df/(df+t^2)}(df/2, 1/2).
func studentTwoSided(t, df float64) float64 {
	if math.IsNaN(df) || df <= 0 {
		return 1
	}
	return incBeta(df/2, 0.5, df/(df+t*t))
}

// incBeta is the regularised incomplete beta function I_x(a, b), by its
// continued fraction (Lentz's method).
func incBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log(1-x))
	if x > (a+1)/(a+b+2) {
		return 1 - front*betaCF(b, a, 1-x)/b
	}
	return front * betaCF(a, b, x) / a
}

func betaCF(a, b, x float64) float64 {
	const eps = 1e-14
	c, d := 1.0, 1/awayFromZero(1-(a+b)*x/(a+1))
	h := d
	for m := 1; m <= 300; m++ {
		mf := float64(m)
		h *= lentzStep(mf*(b-mf)*x/((a+2*mf-1)*(a+2*mf)), &c, &d)
		del := lentzStep(-(a+mf)*(a+b+mf)*x/((a+2*mf)*(a+2*mf+1)), &c, &d)
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}

// lentzStep takes the continued fraction one term num further by the
// modified Lentz method and returns the factor the value changes by.
func lentzStep(num float64, c, d *float64) float64 {
	*d = 1 / awayFromZero(1+num**d)
	*c = awayFromZero(1 + num / *c)
	return *d * *c
}

// awayFromZero keeps Lentz's terms off zero, where they would divide by it.
func awayFromZero(v float64) float64 {
	const tiny = 1e-300
	if math.Abs(v) < tiny {
		return tiny
	}
	return v
}
