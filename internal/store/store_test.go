package store

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/result"
)

func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sub", "shakedown.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	if _, err := s.Latest(ctx); !errors.Is(err, ErrNoSweeps) {
		t.Fatalf("Latest on an empty store: got %v, want ErrNoSweeps", err)
	}
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	sw := &Sweep{
		Name: "durability", PlanPath: "plan.yaml", Plan: "threads: [1]\n", StartedAt: start, Steps: 2,
		ClientHost: "box", Tool: "shakedown test",
		Settings: Settings{TimeS: 5, WarmupS: 1, Repeats: 1, Order: "interleave", Threads: []int{1}, Workloads: []string{"oltp_point_select"}},
	}
	targets := []Target{
		{Name: "durable", Role: "control", URL: "mysql://shakedown@127.0.0.1:3307/sbtest", Version: "10.11.6-MariaDB", Flavour: "mariadb",
			Variables: map[string]string{"innodb_flush_log_at_trx_commit": "1"}},
		{Name: "relaxed", Role: "candidate", URL: "mysql://shakedown@127.0.0.1:3308/sbtest", Version: "10.11.6-MariaDB", Flavour: "mariadb",
			Variables: map[string]string{"innodb_flush_log_at_trx_commit": "0"}},
	}
	id, err := s.CreateSweep(ctx, sw, targets)
	if err != nil {
		t.Fatalf("CreateSweep: %v", err)
	}
	res := &result.Result{
		SchemaVersion: result.SchemaVersion, Workload: "oltp_point_select", Threads: 1, QPS: 1234.5, TPS: 1234.5,
		LatencyMS: result.Latency{Avg: 0.8, P95: 1.2, P99: 2, Max: 9},
		Errors:    result.Errors{Total: 3, ByCode: map[string]int64{"1213": 3}},
		Target:    result.Target{Name: "durable", URL: targets[0].URL},
		Intervals: []result.Interval{{AtS: 1, Threads: 1, QPS: 1200, TPS: 1200}, {AtS: 2, Threads: 1, QPS: 1269, TPS: 1269}},
	}
	ok := &Run{SweepID: id, Step: 1, Target: "durable", Role: "control", Workload: "oltp_point_select", Threads: 1, Repeat: 1,
		Command: "oltp_point_select --threads=1", Status: RunOK, StartedAt: start.Add(time.Second), WallS: 6.5, Result: res}
	if _, err := s.AddRun(ctx, ok); err != nil {
		t.Fatalf("AddRun: %v", err)
	}
	failed := &Run{SweepID: id, Step: 2, Target: "relaxed", Role: "candidate", Workload: "oltp_point_select", Threads: 1, Repeat: 1,
		Status: RunFailed, Error: "connect to 127.0.0.1:3308: connection refused", StartedAt: start.Add(8 * time.Second)}
	if _, err := s.AddRun(ctx, failed); err != nil {
		t.Fatalf("AddRun failed: %v", err)
	}
	if err := s.FinishSweep(ctx, id, SweepDone, start.Add(time.Minute)); err != nil {
		t.Fatalf("FinishSweep: %v", err)
	}
	s.Close()

	// Reopen: everything must come back from the file.
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s2.Close()
	latest, err := s2.Latest(ctx)
	if err != nil || latest != id {
		t.Fatalf("Latest: got %d, %v, want %d", latest, err, id)
	}
	d, err := s2.Load(ctx, id)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	sw.Status, sw.FinishedAt = SweepDone, start.Add(time.Minute)
	if !reflect.DeepEqual(d.Sweep, *sw) {
		t.Errorf("sweep: got %+v, want %+v", d.Sweep, *sw)
	}
	if !reflect.DeepEqual(d.Targets, targets) {
		t.Errorf("targets: got %+v, want %+v", d.Targets, targets)
	}
	if len(d.Runs) != 2 {
		t.Fatalf("runs: got %d, want 2", len(d.Runs))
	}
	if got := d.Runs[0]; got.Result == nil || got.Result.QPS != 1234.5 || got.Result.Errors.ByCode["1213"] != 3 || got.WallS != 6.5 ||
		got.Command != ok.Command || !got.StartedAt.Equal(ok.StartedAt) {
		t.Errorf("run 1: got %+v, want %+v", got, *ok)
	}
	if got := d.Runs[1]; got.Status != RunFailed || got.Error != failed.Error || got.Result != nil {
		t.Errorf("run 2: got %+v, want a failed run without result", got)
	}
	ivs, err := s2.Intervals(ctx, d.Runs[0].ID)
	if err != nil {
		t.Fatalf("Intervals: %v", err)
	}
	if len(ivs) != 2 || ivs[1].QPS != 1269 || ivs[1].AtS != 2 {
		t.Errorf("intervals: got %+v, want the two stored", ivs)
	}
	list, err := s2.Sweeps(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "durability" {
		t.Errorf("Sweeps: got %+v, %v", list, err)
	}
	if _, err := s2.Sweep(ctx, 99); !errors.Is(err, ErrNotFound) {
		t.Errorf("Sweep(99): got %v, want ErrNotFound", err)
	}
}

func TestRunOutsideSweep(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	r := &Run{Target: "x", Workload: "oltp_read_write", Threads: 4, Status: RunOK, StartedAt: time.Now()}
	if _, err := s.AddRun(ctx, r); err != nil {
		t.Fatalf("AddRun: %v", err)
	}
	if r.ID == 0 {
		t.Errorf("got ID 0, want the new run's ID")
	}
}

func TestDefaultPath(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"shakedown home", map[string]string{"SHAKEDOWN_HOME": "/sd", "HOME": "/h"}, "/sd/shakedown.db"},
		{"home", map[string]string{"HOME": "/h"}, "/h/.shakedown/shakedown.db"},
		{"nothing", nil, "shakedown.db"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := DefaultPath(func(k string) string { return tc.env[k] }); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// TestDisplay: a store is named for people without the password its URL
// may hold, and a SQLite file as given.
func TestDisplay(t *testing.T) {
	cases := []struct {
		name, where, want string
	}{
		{"sqlite file", "/tmp/results.db", "/tmp/results.db"},
		{"url without a password", "mysql://u@127.0.0.1:3306/results", "mysql://u@127.0.0.1:3306/results"},
		{"url with a password", "mysql://u:Secret-1@127.0.0.1:3306/results", "mysql://u@127.0.0.1:3306/results"},
		{"encoded password", "mysql://u:Se%2Fcret%231@db.example:3307/r?tls=skip-verify", "mysql://u@db.example:3307/r"},
		{"url that does not parse", "mysql://u:Secret-1@127.0.0.1:notaport/results", "mysql://(a URL that does not parse)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Display(c.where); got != c.want {
				t.Errorf("Display(%q): got %q, want %q", c.where, got, c.want)
			}
		})
	}
}
