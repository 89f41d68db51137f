package randgen

import (
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/pflag"
)

func seeded(typ string) Config {
	c := Defaults()
	c.Type = typ
	c.Seed = 42
	return c
}

func TestFlagsDefaults(t *testing.T) {
	var c Config
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	c.Flags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	want := Defaults()
	want.uniq = c.uniq
	if c != want {
		t.Errorf("got %+v, want %+v", c, want)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Config)
		want   string // substring of the error, "" for none
	}{
		{"defaults", func(*Config) {}, ""},
		{"every type", func(c *Config) { c.Type = Zipfian }, ""},
		{"bad type", func(c *Config) { c.Type = "normal" }, "--rand-type"},
		{"iter zero", func(c *Config) { c.SpecIter = 0 }, "--rand-spec-iter must be >= 1"},
		{"pct over 100", func(c *Config) { c.SpecPct = 101 }, "--rand-spec-pct"},
		{"res negative", func(c *Config) { c.SpecRes = -1 }, "--rand-spec-res"},
		{"pareto one", func(c *Config) { c.ParetoH = 1 }, "--rand-pareto-h"},
		{"pareto zero", func(c *Config) { c.ParetoH = 0 }, "--rand-pareto-h"},
		{"zipf negative", func(c *Config) { c.ZipfianExp = -0.5 }, "--rand-zipfian-exp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Defaults()
			tt.change(&c)
			err := c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("got %v, want no error", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestRangesRespected(t *testing.T) {
	ranges := [][2]int64{{1, 1}, {1, 2}, {0, 9}, {1, 10000}, {5000, 5100}, {-100, 100}, {1, 1 << 31}}
	for _, typ := range []string{Uniform, Gaussian, Special, Pareto, Zipfian} {
		t.Run(typ, func(t *testing.T) {
			r := seeded(typ).New(0)
			for _, ab := range ranges {
				a, b := ab[0], ab[1]
				for i := 0; i < 20000; i++ {
					if v := r.Default(a, b); v < a || v > b {
						t.Fatalf("Default(%d, %d) = %d, out of range", a, b, v)
					}
				}
			}
		})
	}
}

// frac returns the fraction of n draws from f that satisfy in.
func frac(n int, f func() int64, in func(int64) bool) float64 {
	c := 0
	for i := 0; i < n; i++ {
		if in(f()) {
			c++
		}
	}
	return float64(c) / float64(n)
}

func TestShapes(t *testing.T) {
	const n = 200000
	const a, b = 1, 10000
	tests := []struct {
		name     string
		typ      string
		in       func(int64) bool
		min, max float64
	}{
		// special: 75% in the band [t/2 - t/200 + (d+1)/4, t/2 + t/200 + 1),
		// about 0.75% of the range around the middle; the gaussian rest adds
		// a few percent there.
		{"special band", Special, func(v int64) bool { return v >= 4970 && v <= 5055 }, 0.75, 0.79},
		{"special middle 1%", Special, func(v int64) bool { return v >= 4950 && v <= 5050 }, 0.75, 0.79},
		// the gaussian part (25%) is the mean of 12 uniforms, sd = range/12:
		// 4.55% of it lies beyond 2 sd.
		{"special tails", Special, func(v int64) bool { return v < 3334 || v > 6667 }, 0.009, 0.013},
		{"uniform low half", Uniform, func(v int64) bool { return v <= 5000 }, 0.49, 0.51},
		{"uniform first 1%", Uniform, func(v int64) bool { return v <= 100 }, 0.009, 0.011},
		// within one sd (833) of the middle: 68%.
		{"gaussian 1 sd", Gaussian, func(v int64) bool { return v >= 4167 && v <= 5834 }, 0.66, 0.70},
		// pareto h=0.2: P(v-a < x*(range)) = x^(1/power), power = log(.2)/log(.8).
		{"pareto first 20%", Pareto, func(v int64) bool { return v <= 2000 }, 0.78, 0.82},
		// zipfian 0.8: sum(1/k^0.8, k<=100)/sum(1/k^0.8, k<=10000) = 0.30.
		{"zipfian first 1%", Zipfian, func(v int64) bool { return v <= 100 }, 0.29, 0.31},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := seeded(tt.typ).New(1)
			got := frac(n, func() int64 { return r.Default(a, b) }, tt.in)
			if got < tt.min || got > tt.max {
				t.Errorf("got %.4f, want between %.4f and %.4f", got, tt.min, tt.max)
			}
		})
	}
}

func TestParetoMatchesFormula(t *testing.T) {
	r := seeded(Pareto).New(0)
	power := math.Log(0.2) / math.Log(0.8)
	want := math.Pow(0.2, 1/power)
	got := frac(200000, func() int64 { return r.Default(0, 999999) }, func(v int64) bool { return v < 200000 })
	if math.Abs(got-want) > 0.01 {
		t.Errorf("got %.4f, want %.4f", got, want)
	}
}

func TestZipfianMonotone(t *testing.T) {
	r := seeded(Zipfian).New(0)
	var counts [10]int
	for i := 0; i < 200000; i++ {
		counts[r.Default(0, 9)]++
	}
	for i := 1; i < len(counts); i++ {
		if counts[i] >= counts[i-1] {
			t.Fatalf("got counts %v, want decreasing", counts)
		}
	}
	// P(1)/P(2) = 2^0.8
	if ratio := float64(counts[0]) / float64(counts[1]); math.Abs(ratio-math.Pow(2, 0.8)) > 0.05 {
		t.Errorf("got ratio %.3f, want %.3f", ratio, math.Pow(2, 0.8))
	}
}

func TestReproducible(t *testing.T) {
	c := seeded(Special)
	r1, r2, other := c.New(3), c.New(3), c.New(4)
	same := true
	for i := 0; i < 1000; i++ {
		v1, v2, v3 := r1.Default(1, 1000000), r2.Default(1, 1000000), other.Default(1, 1000000)
		if v1 != v2 {
			t.Fatalf("draw %d: got %d and %d from the same seed and thread", i, v1, v2)
		}
		same = same && v1 == v3
	}
	if same {
		t.Error("threads 3 and 4 got the same stream")
	}
	if s1, s2 := r1.String("###-@@@"), r2.String("###-@@@"); s1 != s2 {
		t.Errorf("got %q and %q from the same seed and thread", s1, s2)
	}
}

func TestTimeSeedDiffers(t *testing.T) {
	c := Defaults()
	a, b := c.New(0), c.New(0)
	a1, b1 := a.Uint64(), b.Uint64()
	a2, b2 := a.Uint64(), b.Uint64()
	if a1 == b1 && a2 == b2 {
		t.Error("two clock-seeded generators gave the same numbers")
	}
}

func TestString(t *testing.T) {
	r := seeded(Uniform).New(0)
	tmpl := "###########-###########-@@x"
	var counts [10]int
	for i := 0; i < 20000; i++ {
		s := r.String(tmpl)
		if len(s) != len(tmpl) {
			t.Fatalf("got length %d, want %d", len(s), len(tmpl))
		}
		for j := 0; j < len(tmpl); j++ {
			switch tmpl[j] {
			case '#':
				if s[j] < '0' || s[j] > '9' {
					t.Fatalf("got %q at %d of %q, want a digit", s[j], j, s)
				}
				counts[s[j]-'0']++
			case '@':
				if s[j] < 'a' || s[j] > 'z' {
					t.Fatalf("got %q at %d of %q, want a letter", s[j], j, s)
				}
			default:
				if s[j] != tmpl[j] {
					t.Fatalf("got %q at %d of %q, want %q", s[j], j, s, tmpl[j])
				}
			}
		}
	}
	total := 0
	for _, c := range counts {
		total += c
	}
	for d, c := range counts {
		if f := float64(c) / float64(total); math.Abs(f-0.1) > 0.003 {
			t.Errorf("digit %d: got frequency %.4f, want 0.1", d, f)
		}
	}
}

func TestUniqueAcrossThreads(t *testing.T) {
	c := seeded(Uniform)
	const threads, per = 4, 50000
	out := make([][]uint32, threads)
	var wg sync.WaitGroup
	for i := 0; i < threads; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := c.New(i)
			for j := 0; j < per; j++ {
				out[i] = append(out[i], r.Unique())
			}
		}(i)
	}
	wg.Wait()
	seen := make(map[uint32]bool, threads*per)
	for _, vs := range out {
		for _, v := range vs {
			if seen[v] {
				t.Fatalf("got %d twice", v)
			}
			seen[v] = true
		}
	}
}

func TestPermuteIsBijective(t *testing.T) {
	// Spot check around the edges of the prime, where the mapping changes.
	seen := map[uint32]uint32{}
	for _, base := range []uint32{0, uniquePrime/2 - 1000, uniquePrime - 1000, math.MaxUint32 - 10} {
		for x := base; x < base+1000 && x >= base; x++ {
			y := permute(x)
			if prev, dup := seen[y]; dup && prev != x {
				t.Fatalf("permute(%d) = permute(%d) = %d", x, prev, y)
			}
			seen[y] = x
		}
	}
}

func TestNoAllocs(t *testing.T) {
	r := seeded(Special).New(0)
	buf := make([]byte, 119)
	tmpl := strings.Repeat("###########-", 9) + "###########"
	allocs := testing.AllocsPerRun(1000, func() {
		r.Default(1, 10000)
		r.Uniform(1, 10)
		r.FillString(buf, tmpl)
		r.Unique()
	})
	if allocs != 0 {
		t.Errorf("got %v allocations per run, want 0", allocs)
	}
}

func BenchmarkDefaultSpecial(b *testing.B) {
	r := seeded(Special).New(0)
	for i := 0; i < b.N; i++ {
		r.Default(1, 10000)
	}
}

func BenchmarkFillStringC(b *testing.B) {
	r := seeded(Special).New(0)
	buf := make([]byte, 119)
	tmpl := strings.Repeat("###########-", 9) + "###########"
	for i := 0; i < b.N; i++ {
		r.FillString(buf, tmpl)
	}
}

func TestLiteralConfigGetsDefaults(t *testing.T) {
	lit := Config{Seed: 5}
	def := Defaults()
	def.Seed = 5
	a, b := lit.New(0), def.New(0)
	for i := 0; i < 1000; i++ {
		if x, y := a.Default(1, 10000), b.Default(1, 10000); x != y {
			t.Fatalf("draw %d: got %d from a literal Config, %d from Defaults", i, x, y)
		}
	}
}
