package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// USL is the Universal Scalability Law fitted to a closed-loop sweep:
// X(N) = λN / (1 + σ(N-1) + κN(N-1)), where N is the number of threads and
// X the mean throughput. σ is the cost of contention (queueing for a shared
// resource), κ the cost of coherency (threads keeping each other's data
// consistent), λ the throughput of one thread. It models mean throughput
// in a closed system; it says nothing about tail latency.
type USL struct {
	Sigma, Kappa, Lambda float64
	// SigmaLow, SigmaHigh, KappaLow and KappaHigh are the 95% intervals
	// of σ and κ from the fit's Jacobian (asymptotic, Student's t on the
	// residual degrees of freedom), cut at 0, where the model lives.
	SigmaLow, SigmaHigh, KappaLow, KappaHigh float64
	// R2 is 1 - (residual sum of squares)/(total sum of squares) of the
	// throughput itself, over every point fitted.
	R2 float64
	// Points and Levels are how many observations and distinct thread
	// levels were fitted.
	Points, Levels int
}

// Throughput is the model's mean throughput at n threads.
func (u USL) Throughput(n float64) float64 {
	return u.Lambda * n / (1 + u.Sigma*(n-1) + u.Kappa*n*(n-1))
}

// PeakThreads is N* = sqrt((1-σ)/κ), where the modelled throughput is
// highest; +Inf when κ is 0 (the model then never turns down).
func (u USL) PeakThreads() float64 {
	if u.Kappa <= 0 || u.Sigma >= 1 {
		if u.Sigma >= 1 {
			return 1
		}
		return math.Inf(1)
	}
	return math.Sqrt((1 - u.Sigma) / u.Kappa)
}

// PeakThroughput is the modelled throughput at PeakThreads; with κ = 0 it
// is the ceiling λ/σ that throughput levels off towards, and +Inf when σ
// is 0 as well.
func (u USL) PeakThroughput() float64 {
	if n := u.PeakThreads(); !math.IsInf(n, 1) {
		return u.Throughput(n)
	}
	if u.Sigma > 0 {
		return u.Lambda / u.Sigma
	}
	return math.Inf(1)
}

// MinUSLLevels is the fewest distinct thread levels FitUSL fits: three
// parameters from fewer levels leave too little to judge the fit by.
const MinUSLLevels = 6

// ErrUSLRefused is wrapped by every refusal of FitUSL; the message says why.
var ErrUSLRefused = errors.New("no scalability fit")

// USLPoint is one observed throughput at one thread level.
type USLPoint struct {
	Threads    int
	Throughput float64
}

// FitUSL fits the USL to points (several points may share a level: one per
// repeat). It refuses, with an error wrapping ErrUSLRefused that says why,
// fewer than MinUSLLevels levels with positive throughput, and a sweep whose
// median throughput rises at every level while the fitted peak lies beyond
// the highest level measured: there is then no peak to locate, and κ and N*
// would be extrapolation.
//
// The fit is least squares on the logarithm of throughput (the relative
// error), not on throughput itself: run-to-run noise is proportional to
// throughput, and absolute errors would let the highest levels decide the
// fit and leave λ, which the lowest levels set, loose. It is
// Levenberg-Marquardt over (log λ, σ, κ) with σ and κ held at or above 0,
// started from the classic linearisation and from a small grid, keeping
// the best. Pure and deterministic.
func FitUSL(points []USLPoint) (USL, error) {
	var ns, xs []float64
	byLevel := map[int][]float64{}
	for _, p := range points {
		if p.Threads < 1 || !(p.Throughput > 0) || math.IsInf(p.Throughput, 0) {
			continue
		}
		ns = append(ns, float64(p.Threads))
		xs = append(xs, p.Throughput)
		byLevel[p.Threads] = append(byLevel[p.Threads], p.Throughput)
	}
	levels := make([]int, 0, len(byLevel))
	for n := range byLevel {
		levels = append(levels, n)
	}
	slices.Sort(levels)
	if len(levels) < MinUSLLevels {
		return USL{}, fmt.Errorf("%w: %d thread levels with throughput, need at least %d to fit three parameters", ErrUSLRefused, len(levels), MinUSLLevels)
	}
	med := make([]float64, len(levels))
	for i, n := range levels {
		med[i] = Median(byLevel[n])
	}

	best, bestCost := [3]float64{}, math.Inf(1)
	for _, start := range uslStarts(levels, med) {
		p, cost := uslLM(ns, xs, start)
		if cost < bestCost {
			best, bestCost = p, cost
		}
	}
	u := USL{Lambda: math.Exp(best[0]), Sigma: best[1], Kappa: best[2], Points: len(xs), Levels: len(levels)}
	u.R2 = uslR2(ns, xs, u)
	u.SigmaLow, u.SigmaHigh, u.KappaLow, u.KappaHigh = uslIntervals(ns, xs, best, bestCost)

	top := levels[len(levels)-1]
	rising := true
	for i := 1; i < len(med); i++ {
		if med[i] <= med[i-1] {
			rising = false
		}
	}
	if rising && u.PeakThreads() > float64(top) {
		// Near-linear scaling is the plainest case: name it as such.
		if med[len(med)-1]/med[0] >= 0.9*float64(top)/float64(levels[0]) {
			return u, fmt.Errorf("%w: throughput rises linearly through %d threads: no contention to fit, the peak lies beyond the levels measured", ErrUSLRefused, top)
		}
		return u, fmt.Errorf("%w: throughput rises at every level through %d threads: no sign of a peak, which lies beyond the levels measured; measure higher levels", ErrUSLRefused, top)
	}
	return u, nil
}

// uslStarts are the starting points (log λ, σ, κ): Gunther's linearisation
// (λ from the lowest level, then N/C(N) - 1 = σ(N-1) + κN(N-1) by least
// squares through the origin, with C(N) = X(N)/λ) and a small grid that
// covers a fit the linearisation misleads.
func uslStarts(levels []int, med []float64) [][3]float64 {
	lambda := med[0] / float64(levels[0])
	var a11, a12, a22, b1, b2 float64
	for i, n := range levels {
		fn := float64(n)
		y := fn/(med[i]/lambda) - 1
		u, v := fn-1, fn*(fn-1)
		a11 += u * u
		a12 += u * v
		a22 += v * v
		b1 += u * y
		b2 += v * y
	}
	var sigma, kappa float64
	if det := a11*a22 - a12*a12; det != 0 {
		sigma = (b1*a22 - b2*a12) / det
		kappa = (a11*b2 - a12*b1) / det
	}
	starts := [][3]float64{{math.Log(lambda), math.Max(sigma, 0), math.Max(kappa, 0)}}
	for _, s := range []float64{0, 0.01, 0.1, 0.5} {
		for _, k := range []float64{0, 1e-5, 1e-4, 1e-3, 1e-2} {
			starts = append(starts, [3]float64{math.Log(lambda), s, k})
		}
	}
	return starts
}

// uslResiduals are log X - log model at p = (log λ, σ, κ), and the rows of
// their Jacobian with respect to p.
func uslResiduals(ns, xs []float64, p [3]float64, r []float64, jac [][3]float64) {
	for i, n := range ns {
		d := 1 + p[1]*(n-1) + p[2]*n*(n-1)
		r[i] = math.Log(xs[i]) - (p[0] + math.Log(n) - math.Log(d))
		if jac != nil {
			jac[i] = [3]float64{-1, (n - 1) / d, n * (n - 1) / d}
		}
	}
}

func sumSq(r []float64) float64 {
	s := 0.0
	for _, v := range r {
		s += v * v
	}
	return s
}

// uslLM is Levenberg-Marquardt from start, projecting σ and κ onto >= 0
// after each step; it returns the parameters and the residual sum of
// squares.
func uslLM(ns, xs []float64, p [3]float64) ([3]float64, float64) {
	r := make([]float64, len(ns))
	jac := make([][3]float64, len(ns))
	trial := make([]float64, len(ns))
	uslResiduals(ns, xs, p, r, jac)
	cost := sumSq(r)
	mu := 1e-3
	for iter := 0; iter < 200; iter++ {
		var a [3][3]float64
		var g [3]float64
		for i := range ns {
			for j := 0; j < 3; j++ {
				g[j] += jac[i][j] * r[i]
				for k := 0; k < 3; k++ {
					a[j][k] += jac[i][j] * jac[i][k]
				}
			}
		}
		improved := false
		for tries := 0; tries < 30; tries++ {
			m := a
			for j := 0; j < 3; j++ {
				m[j][j] += mu * (a[j][j] + 1e-12)
			}
			// J is the Jacobian of the residuals themselves, so the
			// damped Gauss-Newton step is -(JᵀJ + μ·diag)⁻¹ Jᵀr.
			delta, ok := solve3(m, g)
			if !ok {
				mu *= 10
				continue
			}
			next := [3]float64{p[0] - delta[0], math.Max(p[1]-delta[1], 0), math.Max(p[2]-delta[2], 0)}
			uslResiduals(ns, xs, next, trial, nil)
			if c := sumSq(trial); c < cost {
				gain := cost - c
				p, cost = next, c
				uslResiduals(ns, xs, p, r, jac)
				mu = math.Max(mu/10, 1e-12)
				improved = true
				if gain <= 1e-15*(1+cost) {
					return p, cost
				}
				break
			}
			mu *= 10
		}
		if !improved {
			break
		}
	}
	return p, cost
}

// solve3 solves m·x = b by Cramer's rule; false when m is singular.
func solve3(m [3][3]float64, b [3]float64) ([3]float64, bool) {
	det := func(m [3][3]float64) float64 {
		return m[0][0]*(m[1][1]*m[2][2]-m[1][2]*m[2][1]) -
			m[0][1]*(m[1][0]*m[2][2]-m[1][2]*m[2][0]) +
			m[0][2]*(m[1][0]*m[2][1]-m[1][1]*m[2][0])
	}
	d := det(m)
	if d == 0 || math.IsNaN(d) {
		return [3]float64{}, false
	}
	var x [3]float64
	for c := 0; c < 3; c++ {
		mc := m
		for r := 0; r < 3; r++ {
			mc[r][c] = b[r]
		}
		x[c] = det(mc) / d
	}
	return x, true
}

func uslR2(ns, xs []float64, u USL) float64 {
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	var res, tot float64
	for i, n := range ns {
		e := xs[i] - u.Throughput(n)
		res += e * e
		tot += (xs[i] - mean) * (xs[i] - mean)
	}
	if tot == 0 {
		return 0
	}
	return 1 - res/tot
}

// uslIntervals are 95% intervals of σ and κ from the covariance s²(JᵀJ)⁻¹
// at the fit: cheap, and honest as far as the model's linear
// approximation near the fit goes. Cut at 0; NaN when the Jacobian is
// singular or no degrees of freedom are left.
func uslIntervals(ns, xs []float64, p [3]float64, cost float64) (sLo, sHi, kLo, kHi float64) {
	nan := math.NaN()
	df := len(ns) - 3
	if df < 1 {
		return nan, nan, nan, nan
	}
	r := make([]float64, len(ns))
	jac := make([][3]float64, len(ns))
	uslResiduals(ns, xs, p, r, jac)
	var a [3][3]float64
	for i := range ns {
		for j := 0; j < 3; j++ {
			for k := 0; k < 3; k++ {
				a[j][k] += jac[i][j] * jac[i][k]
			}
		}
	}
	var inv [3][3]float64
	for c := 0; c < 3; c++ {
		var e [3]float64
		e[c] = 1
		col, ok := solve3(a, e)
		if !ok {
			return nan, nan, nan, nan
		}
		for r := 0; r < 3; r++ {
			inv[r][c] = col[r]
		}
	}
	s2 := cost / float64(df)
	t := studentQuantile975(float64(df))
	se1, se2 := math.Sqrt(s2*inv[1][1]), math.Sqrt(s2*inv[2][2])
	return math.Max(p[1]-t*se1, 0), p[1] + t*se1, math.Max(p[2]-t*se2, 0), p[2] + t*se2
}

// studentQuantile975 is the 97.5th percentile of Student's t with df
// degrees of freedom, by bisection on its two-sided tail.
func studentQuantile975(df float64) float64 {
	lo, hi := 0.0, 1000.0
	for i := 0; i < 100; i++ {
		mid := (lo + hi) / 2
		if studentTwoSided(mid, df) > 0.05 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}
