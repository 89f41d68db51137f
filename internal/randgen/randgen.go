// Package randgen makes the random numbers and strings the sysbench workloads
// use, with sysbench 1.0.20's distributions and options.
//
// Every distribution follows the arithmetic of sysbench's own generator, so a
// given --rand-type shapes the keys a workload touches the way sysbench does:
// "special" (the 1.0.20 default) sends 75% of the values into a band of about
// 1% of the range around its middle and the rest through a narrow bell curve.
// The underlying generator is xoroshiro128+, seeded per thread.
//
// A Rand is owned by one goroutine and allocates nothing per number.
package randgen

import (
	"fmt"
	"math"
	"time"

	"github.com/spf13/pflag"
)

// Distribution names accepted by --rand-type.
const (
	Uniform  = "uniform"
	Gaussian = "gaussian"
	Special  = "special"
	Pareto   = "pareto"
	Zipfian  = "zipfian"
)

// Config holds the random-number options shared by every workload. Flags and
// Defaults set sysbench's defaults; a Config built as a literal with only Type
// and Seed (SpecIter and ParetoH left 0) gets the defaults for the rest in New.
type Config struct {
	Type       string  // --rand-type: special (default), uniform, gaussian, pareto, zipfian
	Seed       int64   // --rand-seed: 0 means seed from the clock
	SpecIter   int     // --rand-spec-iter: uniform draws summed per gaussian value
	SpecPct    int     // --rand-spec-pct: width of the special band, percent of the range
	SpecRes    int     // --rand-spec-res: percent of values that fall in the special band
	ParetoH    float64 // --rand-pareto-h: shape of the pareto distribution
	ZipfianExp float64 // --rand-zipfian-exp: exponent of the zipfian distribution

	// uniq is the process-wide unique sequence behind Rand.Unique, shared by
	// every copy of this Config (copies share the pointer).
	uniq *uniqueSeq
}

// Defaults returns the options at sysbench 1.0.20's defaults.
func Defaults() Config {
	return Config{
		Type:       Special,
		SpecIter:   12,
		SpecPct:    1,
		SpecRes:    75,
		ParetoH:    0.2,
		ZipfianExp: 0.8,
		uniq:       &uniqueSeq{},
	}
}

// Flags binds --rand-type and friends to c, with sysbench 1.0.20's defaults.
// --rand-zipfian-exp and the zipfian type come from later sysbench releases.
func (c *Config) Flags(fs *pflag.FlagSet) {
	if c.uniq == nil {
		c.uniq = &uniqueSeq{}
	}
	fs.StringVar(&c.Type, "rand-type", Special, "random numbers distribution {uniform, gaussian, special, pareto, zipfian}")
	fs.Int64Var(&c.Seed, "rand-seed", 0, "seed for random number generator. When 0, the current time is used as a RNG seed.")
	fs.IntVar(&c.SpecIter, "rand-spec-iter", 12, "number of iterations used for numbers generation")
	fs.IntVar(&c.SpecPct, "rand-spec-pct", 1, "percentage of values to be treated as 'special' (for special distribution)")
	fs.IntVar(&c.SpecRes, "rand-spec-res", 75, "percentage of 'special' values to use (for special distribution)")
	fs.Float64Var(&c.ParetoH, "rand-pareto-h", 0.2, "parameter h for pareto distribution")
	fs.Float64Var(&c.ZipfianExp, "rand-zipfian-exp", 0.8, "shape parameter (exponent, theta) for the Zipfian distribution")
}

// Validate checks the options; errors name the flag.
func (c Config) Validate() error {
	switch c.Type {
	case Uniform, Gaussian, Special, Pareto, Zipfian:
	default:
		return fmt.Errorf("--rand-type must be one of uniform, gaussian, special, pareto, zipfian (got %q)", c.Type)
	}
	if c.SpecIter < 1 {
		return fmt.Errorf("--rand-spec-iter must be >= 1")
	}
	if c.SpecPct < 0 || c.SpecPct > 100 {
		return fmt.Errorf("--rand-spec-pct must be between 0 and 100")
	}
	if c.SpecRes < 0 || c.SpecRes > 100 {
		return fmt.Errorf("--rand-spec-res must be between 0 and 100")
	}
	if !(c.ParetoH > 0 && c.ParetoH < 1) {
		return fmt.Errorf("--rand-pareto-h must be between 0 and 1, exclusive")
	}
	if !(c.ZipfianExp >= 0) {
		return fmt.Errorf("--rand-zipfian-exp must be >= 0")
	}
	return nil
}

type dist uint8

const (
	distUniform dist = iota
	distGaussian
	distSpecial
	distPareto
	distZipfian
)

// Rand is one thread's generator. Not safe for concurrent use.
type Rand struct {
	s0, s1 uint64 // xoroshiro128+ state

	dist dist

	iter     int
	iterMult float64 // 1/iter
	resMult  float64 // 100/(100-res): widens the range so res% land past it
	pctMult  float64 // pct/100: width of the special band
	pct2Mult float64 // pct/200: half of it, to centre the band

	paretoPower float64

	zipfExp, zipfS, zipfH1 float64
	zipfN                  int64   // range size the cached integral belongs to
	zipfHN                 float64 // hIntegral(zipfN + 0.5)

	uniq *uniqueSeq
}

// New returns the generator for thread id. With a fixed --rand-seed the
// stream of each thread id is the same on every run; with seed 0 it comes
// from the clock.
func (c Config) New(id int) *Rand {
	if c.SpecIter == 0 && c.ParetoH == 0 {
		d := Defaults()
		c.SpecIter, c.SpecPct, c.SpecRes, c.ParetoH, c.ZipfianExp = d.SpecIter, d.SpecPct, d.SpecRes, d.ParetoH, d.ZipfianExp
	}
	if c.Type == "" {
		c.Type = Special
	}
	if c.SpecIter < 1 {
		c.SpecIter = 1
	}
	r := &Rand{
		iter:     c.SpecIter,
		iterMult: 1 / float64(c.SpecIter),
		pctMult:  float64(c.SpecPct) / 100,
		pct2Mult: float64(c.SpecPct) / 200,
		resMult:  100 / (100 - float64(c.SpecRes)),
		uniq:     c.uniq,
	}
	switch c.Type {
	case Uniform:
		r.dist = distUniform
	case Gaussian:
		r.dist = distGaussian
	case Pareto:
		r.dist = distPareto
	case Zipfian:
		r.dist = distZipfian
	default:
		r.dist = distSpecial
	}
	r.paretoPower = math.Log(c.ParetoH) / math.Log(1-c.ParetoH)
	r.zipfExp = c.ZipfianExp
	r.zipfS = 2 - hIntegralInverse(hIntegral(2.5, r.zipfExp)-h(2, r.zipfExp), r.zipfExp)
	r.zipfH1 = hIntegral(1.5, r.zipfExp) - 1

	seed := uint64(c.Seed)
	if c.Seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	// splitmix64 spreads (seed, id) over the 128-bit state; xoroshiro must
	// not start from all zeroes, which splitmix64 never yields twice in a row.
	sm := seed ^ (uint64(id)+1)*0x9e3779b97f4a7c15
	r.s0 = splitmix64(&sm)
	r.s1 = splitmix64(&sm)
	if r.uniq == nil {
		r.uniq = &processUnique
	}
	r.uniq.seed(c.Seed)
	return r
}

func splitmix64(x *uint64) uint64 {
	*x += 0x9e3779b97f4a7c15
	z := *x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Uint64 returns 64 uniformly random bits.
func (r *Rand) Uint64() uint64 {
	s0, s1 := r.s0, r.s1
	result := s0 + s1
	s1 ^= s0
	r.s0 = (s0<<24 | s0>>40) ^ s1 ^ (s1 << 16)
	r.s1 = s1<<37 | s1>>27
	return result
}

// Float64 returns a number in [0, 1) with 53 random bits.
func (r *Rand) Float64() float64 {
	return float64(r.Uint64()>>11) * 0x1.0p-53
}

// Default returns a number in [a, b] with the configured distribution (a <= b).
func (r *Rand) Default(a, b int64) int64 {
	switch r.dist {
	case distSpecial:
		return r.Special(a, b)
	case distUniform:
		return r.Uniform(a, b)
	case distGaussian:
		return r.Gaussian(a, b)
	case distPareto:
		return r.Pareto(a, b)
	default:
		return r.Zipfian(a, b)
	}
}

// Uniform returns a number in [a, b], uniformly.
func (r *Rand) Uniform(a, b int64) int64 {
	return a + int64(r.Float64()*float64(b-a+1))
}

// Gaussian returns a number in [a, b] from the mean of --rand-spec-iter
// uniform draws: a bell curve around the middle of the range.
func (r *Rand) Gaussian(a, b int64) int64 {
	t := float64(b - a + 1)
	sum := 0.0
	for i := 0; i < r.iter; i++ {
		sum += r.Float64() * t
	}
	return a + int64(sum*r.iterMult)
}

// Special returns a number in [a, b] from sysbench's "special" distribution:
// --rand-spec-res percent of the values fall uniformly in a band of
// --rand-spec-pct percent of the range near its middle, the rest follow the
// gaussian curve over the whole range.
func (r *Rand) Special(a, b int64) int64 {
	t := float64(b - a)
	rnd := r.Float64()
	// Stretch the range so that the draws past its end (res percent of
	// them) become the special ones.
	if rnd*t*r.resMult < t {
		sum := 0.0
		for i := 0; i < r.iter; i++ {
			sum += r.Float64()
		}
		return a + int64(sum*t*r.iterMult)
	}
	// Reuse rnd, which is now in [1-res/100, 1), to place the value in the
	// band, and shift the band to the middle of the range.
	d := t * r.pctMult
	v := rnd*(d+1) + t/2 - t*r.pct2Mult
	return a + int64(v)
}

// Pareto returns a number in [a, b] skewed towards a, with shape
// --rand-pareto-h.
func (r *Rand) Pareto(a, b int64) int64 {
	return a + int64(float64(b-a+1)*math.Pow(r.Float64(), r.paretoPower))
}

// Zipfian returns a number in [a, b] where a is the most frequent value and
// a+k-1 has a frequency proportional to 1/k^--rand-zipfian-exp. It samples by
// rejection-inversion (Hörmann and Derflinger, 1996).
func (r *Rand) Zipfian(a, b int64) int64 {
	n := b - a + 1
	if n != r.zipfN {
		r.zipfN = n
		r.zipfHN = hIntegral(float64(n)+0.5, r.zipfExp)
	}
	e := r.zipfExp
	for {
		u := r.zipfHN + r.Float64()*(r.zipfH1-r.zipfHN)
		x := hIntegralInverse(u, e)
		k := int64(x + 0.5)
		if k < 1 {
			k = 1
		} else if k > n {
			k = n
		}
		if float64(k)-x <= r.zipfS || u >= hIntegral(float64(k)+0.5, e)-h(float64(k), e) {
			return a + k - 1
		}
	}
}

// hIntegral is the integral of h: (x^(1-e) - 1)/(1-e), or log(x) when e is 1.
func hIntegral(x, e float64) float64 {
	lx := math.Log(x)
	return expm1Over((1-e)*lx) * lx
}

// h is the unnormalised zipfian density 1/x^e.
func h(x, e float64) float64 { return math.Exp(-e * math.Log(x)) }

// hIntegralInverse inverts hIntegral.
func hIntegralInverse(x, e float64) float64 {
	t := x * (1 - e)
	if t < -1 {
		t = -1 // rounding can push it below the domain
	}
	return math.Exp(log1pOver(t) * x)
}

// log1pOver is log(1+x)/x, continuous at 0.
func log1pOver(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(1.0/3-0.25*x))
}

// expm1Over is (exp(x)-1)/x, continuous at 0.
func expm1Over(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*0.5*(1+x*(1.0/3)*(1+0.25*x))
}
