package runner

import (
	"fmt"
	"runtime/metrics"
	"testing"
	"testing/fstest"
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
		// A cgroup quota of a tenth of one CPU, GOMAXPROCS 2: its threads
		// ran 10% of the time and were held off the other 90%.
		{"starved by a cgroup quota", ClientLoad{CPU: s / 10, Waited: 18 * s / 10, Wall: s, Cores: 2,
			Periods: 10, ThrottledPeriods: 10, Throttled: 17 * s / 10}, true},
		{"a quota that ran out now and then", ClientLoad{CPU: 12 * s / 10, Wall: s, Cores: 2,
			Periods: 10, ThrottledPeriods: 3, Throttled: 4 * s / 10}, false},
		{"a quota that ran out in each period, briefly", ClientLoad{CPU: 15 * s / 10, Wall: s, Cores: 2,
			Periods: 10, ThrottledPeriods: 10, Throttled: s / 10}, false},
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

// TestCgroupThrottles reads the throttling of a CPU quota from cpu.stat of
// the process's cgroup or of an ancestor, in cgroup v2 and v1.
func TestCgroupThrottles(t *testing.T) {
	stat := func(periods, throttled int64, key string, v int64) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte(fmt.Sprintf("usage_usec 100\nnr_periods %d\nnr_throttled %d\n%s %d\n", periods, throttled, key, v))}
	}
	for _, tc := range []struct {
		name          string
		before, after fstest.MapFS
		want          time.Duration
		periods, thr  int64
	}{
		{"v2, the quota on the container above the process",
			fstest.MapFS{"proc/self/cgroup": {Data: []byte("0::/box/app\n")},
				"sys/fs/cgroup/box/cpu.stat":     stat(100, 10, "throttled_usec", 50000),
				"sys/fs/cgroup/box/app/cpu.stat": stat(0, 0, "throttled_usec", 0)},
			fstest.MapFS{"proc/self/cgroup": {Data: []byte("0::/box/app\n")},
				"sys/fs/cgroup/box/cpu.stat":     stat(110, 20, "throttled_usec", 950000),
				"sys/fs/cgroup/box/app/cpu.stat": stat(0, 0, "throttled_usec", 0)},
			900 * time.Millisecond, 10, 10},
		{"v1, throttled_time in nanoseconds",
			fstest.MapFS{"proc/self/cgroup": {Data: []byte("4:memory:/x\n2:cpu,cpuacct:/job\n")},
				"sys/fs/cgroup/cpu,cpuacct/job/cpu.stat": stat(5, 1, "throttled_time", 1e6)},
			fstest.MapFS{"proc/self/cgroup": {Data: []byte("4:memory:/x\n2:cpu,cpuacct:/job\n")},
				"sys/fs/cgroup/cpu,cpuacct/job/cpu.stat": stat(15, 9, "throttled_time", 801e6)},
			800 * time.Millisecond, 10, 8},
		{"no cgroup file", fstest.MapFS{}, fstest.MapFS{}, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, periods, thr := throttledSince(cgroupThrottles(tc.before), cgroupThrottles(tc.after))
			if got != tc.want || periods != tc.periods || thr != tc.thr {
				t.Errorf("got %v over %d periods, %d throttled, want %v over %d, %d", got, periods, thr, tc.want, tc.periods, tc.thr)
			}
		})
	}
}
