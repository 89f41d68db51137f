package monitor

import (
	"github.com/shakedown/shakedown/internal/result"
	"math"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func reading(at time.Duration, kv ...any) *Reading {
	r := &Reading{At: t0.Add(at), Values: map[string]float64{}}
	for i := 0; i+1 < len(kv); i += 2 {
		var v float64
		switch x := kv[i+1].(type) {
		case int:
			v = float64(x)
		case float64:
			v = x
		}
		r.Values[kv[i].(string)] = v
	}
	return r
}

func TestCompute(t *testing.T) {
	cases := []struct {
		name      string
		prev, cur *Reading
		lim       Limits
		want      map[string]float64
		absent    []string
		attention []string
	}{
		{
			name: "rates over the real elapsed time",
			prev: reading(0, "Questions", 1000, "Com_select", 500, "Uptime", 10),
			cur:  reading(1500*time.Millisecond, "Questions", 4000, "Com_select", 2000, "Uptime", 11),
			want: map[string]float64{"qps": 2000, "sel": 1000},
		},
		{
			name: "the sampler's own statements are left out",
			prev: reading(0, "Questions", 100, "own.statements", 3),
			cur:  reading(time.Second, "Questions", 110, "own.statements", 5),
			want: map[string]float64{"qps": 8},
		},
		{
			name: "a counter that goes back shows 0",
			prev: reading(0, "Questions", 5000, "Com_select", 4000, "Com_insert", 10),
			cur:  reading(time.Second, "Questions", 20, "Com_select", 4100, "Com_insert", 5),
			want: map[string]float64{"qps": 0, "sel": 100, "ins": 0},
		},
		{
			name: "a restart (uptime back) zeroes every status rate",
			prev: reading(0, "Uptime", 100, "Com_select", 10, "Threads_running", 3),
			cur:  reading(time.Second, "Uptime", 1, "Com_select", 900, "Threads_running", 2),
			want: map[string]float64{"sel": 0, "threads_running": 2},
		},
		{
			name:      "a cgroup quota biting: throttled periods and time",
			prev:      reading(0, "cgroup.cpu.nr_periods", 1000, "cgroup.cpu.nr_throttled", 100, "cgroup.cpu.throttled_usec", 5_000_000),
			cur:       reading(2*time.Second, "cgroup.cpu.nr_periods", 1020, "cgroup.cpu.nr_throttled", 115, "cgroup.cpu.throttled_usec", 5_600_000),
			want:      map[string]float64{"throttled_pct": 75, "throttled_ms": 300},
			attention: []string{"throttled_pct"},
		},
		{
			name: "tps from commits, else from writes",
			prev: reading(0, "Com_commit", 0, "Com_rollback", 0, "Com_insert", 0, "Com_update", 0, "Com_delete", 0),
			cur:  reading(time.Second, "Com_commit", 0, "Com_rollback", 0, "Com_insert", 5, "Com_update", 3, "Com_delete", 2),
			want: map[string]float64{"tps": 10},
		},
		{
			name: "tps from commit and rollback",
			prev: reading(0, "Com_commit", 10, "Com_rollback", 1, "Com_insert", 0),
			cur:  reading(time.Second, "Com_commit", 40, "Com_rollback", 3, "Com_insert", 100),
			want: map[string]float64{"tps": 32},
		},
		{
			name:      "hit ratio below 99% under load is marked",
			prev:      reading(0, "Innodb_buffer_pool_read_requests", 0, "Innodb_buffer_pool_reads", 0),
			cur:       reading(time.Second, "Innodb_buffer_pool_read_requests", 1000, "Innodb_buffer_pool_reads", 20),
			want:      map[string]float64{"bp_hit": 98, "bp_read_requests": 1000, "bp_reads": 20},
			attention: []string{"bp_hit"},
		},
		{
			name: "hit ratio at a trickle is not judged",
			prev: reading(0, "Innodb_buffer_pool_read_requests", 0, "Innodb_buffer_pool_reads", 0),
			cur:  reading(time.Second, "Innodb_buffer_pool_read_requests", 10, "Innodb_buffer_pool_reads", 5),
			want: map[string]float64{"bp_hit": 50},
		},
		{
			name:   "no read requests: no hit ratio",
			prev:   reading(0, "Innodb_buffer_pool_read_requests", 7, "Innodb_buffer_pool_reads", 1),
			cur:    reading(time.Second, "Innodb_buffer_pool_read_requests", 7, "Innodb_buffer_pool_reads", 1),
			absent: []string{"bp_hit"},
		},
		{
			name:      "threads running above the cores",
			prev:      reading(0, "Threads_running", 1),
			cur:       reading(time.Second, "Threads_running", 9),
			lim:       Limits{Cores: 8},
			want:      map[string]float64{"threads_running": 9},
			attention: []string{"threads_running"},
		},
		{
			name: "threads running not judged without a core count",
			prev: reading(0, "Threads_running", 1),
			cur:  reading(time.Second, "Threads_running", 900),
			want: map[string]float64{"threads_running": 900},
		},
		{
			name: "MariaDB row counters stand in for InnoDB's",
			prev: reading(0, "Rows_read", 100, "Handler_write", 5),
			cur:  reading(time.Second, "Rows_read", 300, "Handler_write", 9),
			want: map[string]float64{"rows_read": 200, "rows_inserted": 4},
		},
		{
			name: "InnoDB figures from the engine status",
			prev: reading(0),
			cur:  reading(time.Second, "innodb.history_list_length", 1234, "innodb.checkpoint_age", 4096, "innodb.checkpoint_max_age", 5000),
			want: map[string]float64{"history_list_length": 1234, "checkpoint_age": 4096}, attention: []string{"checkpoint_age"},
		},
		{
			name: "host cpu shares",
			prev: reading(0, "host.cpu.user", 100, "host.cpu.nice", 0, "host.cpu.system", 50, "host.cpu.idle", 1000, "host.cpu.iowait", 0, "host.cpu.irq", 0, "host.cpu.softirq", 0, "host.cpu.steal", 0),
			cur:  reading(time.Second, "host.cpu.user", 150, "host.cpu.nice", 10, "host.cpu.system", 70, "host.cpu.idle", 1100, "host.cpu.iowait", 10, "host.cpu.irq", 5, "host.cpu.softirq", 5, "host.cpu.steal", 0),
			want: map[string]float64{"cpu_user": 30, "cpu_sys": 15, "cpu_iowait": 5, "cpu_steal": 0, "cpu_idle": 50},
		},
		{
			name: "process cpu as a share of one core",
			prev: reading(0, "proc.server.cpu_s", 10, "proc.client.cpu_s", 1),
			cur:  reading(2*time.Second, "proc.server.cpu_s", 13, "proc.client.cpu_s", 1.5),
			want: map[string]float64{"server_cpu": 150, "client_cpu": 25},
		},
		{
			name:   "a column the server lacks is absent",
			prev:   reading(0, "Questions", 1),
			cur:    reading(time.Second, "Questions", 2),
			absent: []string{"sel", "history_list_length", "cpu_user", "server_cpu"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := compute(tc.prev, tc.cur, tc.lim)
			for k, want := range tc.want {
				got, ok := s.Values[k]
				if !ok {
					t.Errorf("%s: missing, want %g", k, want)
					continue
				}
				if math.Abs(got-want) > 1e-6 {
					t.Errorf("%s: got %g, want %g", k, got, want)
				}
			}
			for _, k := range tc.absent {
				if v, ok := s.Values[k]; ok {
					t.Errorf("%s: got %g, want it absent", k, v)
				}
			}
			marked := map[string]bool{}
			for _, k := range tc.attention {
				marked[k] = true
				if s.Attention[k] == "" {
					t.Errorf("%s: not marked, want a reason", k)
				}
			}
			for k, why := range s.Attention {
				if !marked[k] {
					t.Errorf("%s: marked %q, want no mark", k, why)
				}
			}
		})
	}
}

func TestColumnsAreConsistent(t *testing.T) {
	seen := map[string]bool{}
	proms := map[string]bool{}
	for _, c := range Columns() {
		if seen[c.Key] {
			t.Errorf("key %s: got it twice, want unique keys", c.Key)
		}
		if proms[c.Prom] {
			t.Errorf("metric %s: got it twice, want unique names", c.Prom)
		}
		seen[c.Key], proms[c.Prom] = true, true
		if c.Head == "" || c.Group == "" || c.Help == "" || c.calc == nil {
			t.Errorf("column %s: got an empty head, group, help or calc", c.Key)
		}
		if len(c.Head) > cellWidth {
			t.Errorf("column %s: head %q wider than %d", c.Key, c.Head, cellWidth)
		}
	}
	for _, k := range append(append(append([]string(nil), TableKeys...), TableHostKeys...), Timelines...) {
		if !seen[k] {
			t.Errorf("table key %s: got no such column", k)
		}
	}
}

func TestSeriesMeanAndPoints(t *testing.T) {
	s := &result.Series{Samples: []result.Sample{
		{AtS: 1, ElapsedS: 1, Values: map[string]float64{"qps": 100}},
		{AtS: 2, ElapsedS: 1, Values: map[string]float64{"qps": 300}},
		{AtS: 3, ElapsedS: 1, Values: map[string]float64{}},
	}}
	if got := s.Points("qps"); len(got) != 2 || got[1] != (result.Point{T: 2, V: 300}) {
		t.Errorf("Points: got %v, want two points ending at {2 300}", got)
	}
	cases := []struct {
		from, to, want, covered float64
	}{
		{0, 2, 200, 2},
		{0.5, 1.5, 200, 1},
		{1.5, 2, 300, 0.5},
	}
	for _, tc := range cases {
		got, cov, ok := s.Mean("qps", tc.from, tc.to)
		if !ok || math.Abs(got-tc.want) > 1e-9 || math.Abs(cov-tc.covered) > 1e-9 {
			t.Errorf("Mean(%g, %g): got %g over %g (%v), want %g over %g", tc.from, tc.to, got, cov, ok, tc.want, tc.covered)
		}
	}
	if _, _, ok := s.Mean("qps", 5, 6); ok {
		t.Errorf("Mean outside the samples: got ok, want not ok")
	}
}
