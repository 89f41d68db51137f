package runner

import (
	"runtime/metrics"
	"testing"
	"time"
)

func TestClientLoadBound(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name string
		c    ClientLoad
		want bool
	}{
		{"idle client", ClientLoad{CPU: s / 10, Wall: s, Cores: 2}, false},
		{"busy but with CPU to spare", ClientLoad{CPU: 3 * s / 2, Waited: s / 5, Wall: s, Cores: 2}, false},
		{"own CPU at 90% of its cores", ClientLoad{CPU: 18 * s / 10, Wall: s, Cores: 2}, true},
		{"one core, all of it", ClientLoad{CPU: s, Wall: s, Cores: 1}, true},
		{"CPU and waiting three times its cores", ClientLoad{CPU: s / 4, Waited: 11 * s / 4, Wall: s, Cores: 1}, true},
		{"CPU and waiting just below three times its cores", ClientLoad{CPU: s / 2, Waited: 24 * s / 10, Wall: s, Cores: 1}, false},
		{"once seen on a busy host, not the limit", ClientLoad{CPU: 12 * s / 10, Waited: 272 * s / 100, Wall: s, Cores: 2}, false},
		{"a busy shared host", ClientLoad{CPU: 6 * s / 10, Waited: 33 * s / 10, Wall: s, Cores: 2}, false},
		{"a long lag alone is a figure", ClientLoad{CPU: s / 10, Wall: s, Cores: 4, Lag: 50 * time.Millisecond, QueryLatency: 60 * time.Millisecond}, false},
		{"a long queue alone is a figure", ClientLoad{CPU: s / 10, Wall: s, Cores: 4, QueueLag: 10 * s}, false},
		{"nothing measured", ClientLoad{CPU: s}, false},
		{"too short to judge", ClientLoad{CPU: s / 5, Wall: s / 5, Cores: 1}, false},
		{"just long enough", ClientLoad{CPU: s / 4, Wall: s / 4, Cores: 1}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.Bound(); got != tc.want {
				t.Errorf("Bound() of %+v (CPU share %.2f, demand %.2f): got %v, want %v", tc.c, tc.c.CPUShare(), tc.c.DemandShare(), got, tc.want)
			}
		})
	}
}

func TestHistQuantile(t *testing.T) {
	buckets := []float64{-1, 0, 1e-6, 1e-3, 1}
	hist := func(counts ...uint64) *metrics.Float64Histogram {
		return &metrics.Float64Histogram{Counts: counts, Buckets: buckets}
	}
	before := hist(0, 5, 1, 1)
	for _, tc := range []struct {
		name  string
		after *metrics.Float64Histogram
		q     float64
		want  time.Duration
	}{
		{"nothing new", hist(0, 5, 1, 1), 0.5, 0},
		{"only zero waits", hist(0, 500, 1, 1), 0.5, 0},
		{"zero waits are left out of the median", hist(0, 500, 4, 2), 0.5, time.Millisecond},
		{"p99 in the top bucket", hist(0, 5, 100, 3), 0.99, time.Second},
		{"mismatched readings", hist(1, 2), 0.5, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := histQuantile(before, tc.after, tc.q); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestProbeSumsSpans: a probe's load is its spans together: the CPU burnt
// inside them counts, what is burnt between them does not, and the wall
// time is theirs alone.
func TestProbeSumsSpans(t *testing.T) {
	burn := func(d time.Duration) {
		for start := time.Now(); time.Since(start) < d; {
		}
	}
	var p Probe
	p.End() // without a Start: nothing
	for range 2 {
		p.Start()
		burn(30 * time.Millisecond)
		p.End()
		burn(100 * time.Millisecond) // between spans
	}
	c := p.Load(time.Millisecond)
	if c.Wall < 60*time.Millisecond || c.Wall > 120*time.Millisecond {
		t.Errorf("wall %v, want the two 30 ms spans only", c.Wall)
	}
	// The CPU a span burns is its wall time at most, give or take the
	// clock's grain (getrusage counts in ticks on some kernels).
	if c.CPU > c.Wall+20*time.Millisecond {
		t.Errorf("CPU %v over %v of spans: the time between them was counted", c.CPU, c.Wall)
	}
	if c.Cores < 1 || c.QueryLatency != time.Millisecond {
		t.Errorf("cores %d, query latency %v: want at least 1 and the one given", c.Cores, c.QueryLatency)
	}
}
