package report

import (
	"fmt"
	"math"
	"time"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/stats"
	"github.com/shakedown/shakedown/internal/store"
)

// fixture is a stored sweep made up for the formatter tests: a control and
// two candidates, two workloads, three thread levels, repeats, one failed
// step and one interrupted step. Figures are deterministic.
func fixture(repeats int) *store.SweepData {
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	targets := []store.Target{
		{Name: "durable", Role: "control", URL: "mysql://shakedown@127.0.0.1:3307/sbtest", Version: "10.11.6-MariaDB-0+deb12u1", Flavour: "mariadb",
			Variables: map[string]string{"innodb_flush_log_at_trx_commit": "1", "sync_binlog": "1", "log_bin": "ON", "port": "3307",
				"version_comment": "Debian 12 https://mariadb.org/"}},
		{Name: "relaxed", Role: "candidate", URL: "mysql://shakedown@127.0.0.1:3308/sbtest", Version: "10.11.6-MariaDB-0+deb12u1", Flavour: "mariadb",
			Variables: map[string]string{"innodb_flush_log_at_trx_commit": "0", "sync_binlog": "0", "log_bin": "ON", "port": "3308",
				"version_comment": "Debian 12 https://mariadb.org/"}},
		{Name: "tuned", Role: "candidate", URL: "mysql://bench@10.0.0.9:3306/sbtest", Version: "8.0.36", Flavour: "mysql",
			Variables: map[string]string{"innodb_flush_log_at_trx_commit": "1", "sync_binlog": "1", "log_bin": "ON", "port": "3306"}},
	}
	workloads := []string{"oltp_write_only", "oltp_point_select"}
	threads := []int{1, 4, 16}
	sw := store.Sweep{ID: 7, Name: "durability", PlanPath: "plans/durability.yaml",
		Plan:      "targets: []  # see the plan file\n",
		StartedAt: start, FinishedAt: start.Add(9*time.Minute + 30*time.Second), Status: store.SweepDone,
		Steps: len(targets) * len(workloads) * len(threads) * repeats, ClientHost: "bench-01", Tool: "shakedown v1.2.3",
		Settings: store.Settings{TimeS: 5, WarmupS: 1, Repeats: repeats, CooldownS: 1, Order: "interleave", Threads: threads, Workloads: workloads}}
	// factor is each target's speed against the control per workload.
	factor := map[string]map[string]float64{
		"oltp_write_only":   {"durable": 1, "relaxed": 2.4, "tuned": 0.985},
		"oltp_point_select": {"durable": 1, "relaxed": 1.01, "tuned": 0.8},
	}
	base := map[string]float64{"oltp_write_only": 900, "oltp_point_select": 14000}
	var runs []store.Run
	step := 0
	for _, wl := range workloads {
		for _, th := range threads {
			for rep := 1; rep <= repeats; rep++ {
				for _, t := range targets {
					step++
					run := store.Run{ID: int64(step), SweepID: sw.ID, Step: step, Target: t.Name, Role: t.Role, Workload: wl,
						Threads: th, Repeat: rep, Command: fmt.Sprintf("%s --threads=%d --time=5", wl, th), Status: store.RunOK,
						StartedAt: start.Add(time.Duration(step) * 7 * time.Second), WallS: 6.8}
					if t.Name == "tuned" && wl == "oltp_point_select" && th == 16 && rep == 1 {
						run.Status, run.Error = store.RunFailed, "run stopped: connect to 10.0.0.9:3306: connection refused: is the server running and listening there?"
						runs = append(runs, run)
						continue
					}
					jitter := 1 + 0.01*float64((step*7)%5-2)
					qps := base[wl] * math.Sqrt(float64(th)) * factor[wl][t.Name] * jitter
					lat := float64(th) / qps * 1000 * 20
					res := &result.Result{SchemaVersion: result.SchemaVersion, Workload: wl, Threads: th, TimeS: 5,
						QPS: stats.Round(qps, 2), TPS: stats.Round(qps/20, 2),
						LatencyMS: result.Latency{Avg: stats.Round(lat, 3), P95: stats.Round(lat*1.8, 3), P99: stats.Round(lat*2.5, 3), Max: stats.Round(lat*9, 3)},
						Errors:    result.Errors{ByCode: map[string]int64{}},
						Target:    result.Target{Name: t.Name, URL: t.URL, Version: t.Version, Flavour: t.Flavour}}
					if t.Name == "relaxed" && th == 16 && wl == "oltp_write_only" {
						res.Errors = result.Errors{Total: 3, ByCode: map[string]int64{"1213": 3}}
					}
					for s := 1; s <= 5; s++ {
						wave := 1 + 0.06*math.Sin(float64(s*(step+1)))
						res.Intervals = append(res.Intervals, result.Interval{AtS: float64(s), Threads: th, QPS: stats.Round(qps*wave, 2), TPS: stats.Round(qps*wave/20, 2)})
					}
					run.Result = res
					runs = append(runs, run)
				}
			}
		}
	}
	// The last step was interrupted part way: kept, but not counted.
	last := &runs[len(runs)-1]
	last.Status, last.Error = store.RunInterrupted, "interrupted"
	return &store.SweepData{Sweep: sw, Targets: targets, Runs: runs}
}

// scalingFixture is a sweep of one workload over 7 thread levels, 3
// repeats, with QPS drawn from the Universal Scalability Law: durable
// peaks at about 22 threads, relaxed at about 48, and tuned scales
// linearly (no contention to fit). A deterministic jitter of up to 2%
// stands for the run-to-run noise.
func scalingFixture() *store.SweepData {
	d := fixture(1)
	threads := []int{1, 2, 4, 8, 16, 32, 64}
	const wl = "oltp_read_write"
	d.Sweep.Settings.Threads, d.Sweep.Settings.Workloads, d.Sweep.Settings.Repeats = threads, []string{wl}, 3
	model := map[string][3]float64{ // σ, κ, λ
		"durable": {0.1, 0.0018, 400},
		"relaxed": {0.03, 0.00042, 520},
		"tuned":   {0, 0, 380},
	}
	start := d.Sweep.StartedAt
	var runs []store.Run
	step := 0
	for _, th := range threads {
		for rep := 1; rep <= 3; rep++ {
			for _, t := range d.Targets {
				step++
				m := model[t.Name]
				n := float64(th)
				jitter := 1 + 0.01*float64((step*7)%5-2)
				qps := m[2] * n / (1 + m[0]*(n-1) + m[1]*n*(n-1)) * jitter
				lat := n / qps * 1000 * 18
				res := &result.Result{SchemaVersion: result.SchemaVersion, Workload: wl, Threads: th, TimeS: 5,
					QPS: stats.Round(qps, 2), TPS: stats.Round(qps/18, 2),
					LatencyMS: result.Latency{Avg: stats.Round(lat, 3), P95: stats.Round(lat*1.8, 3), P99: stats.Round(lat*2.5, 3), Max: stats.Round(lat*9, 3)},
					Errors:    result.Errors{ByCode: map[string]int64{}},
					Target:    result.Target{Name: t.Name, URL: t.URL, Version: t.Version, Flavour: t.Flavour}}
				runs = append(runs, store.Run{ID: int64(step), SweepID: d.Sweep.ID, Step: step, Target: t.Name, Role: t.Role, Workload: wl,
					Threads: th, Repeat: rep, Command: fmt.Sprintf("%s --threads=%d --time=5", wl, th), Status: store.RunOK,
					StartedAt: start.Add(time.Duration(step) * 7 * time.Second), WallS: 6.8, Result: res})
			}
		}
	}
	d.Sweep.Steps, d.Runs = len(runs), runs
	return d
}
