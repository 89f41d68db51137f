package cli

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/store"
)

// synthSweep stores a sweep of one target, db (the control), running
// oltp_point_select at 1 and 4 threads, 5 repeats each, with QPS around
// base (relative noise from rng) and the given --tables.
func synthSweep(t *testing.T, st *store.Store, at time.Time, base, noise float64, rng *rand.Rand, tables string) int64 {
	t.Helper()
	ctx := context.Background()
	sw := &store.Sweep{Name: "nightly", StartedAt: at, FinishedAt: at.Add(time.Minute), Status: store.SweepDone, Steps: 10,
		ClientHost: "h", Tool: "shakedown test",
		Settings: store.Settings{TimeS: 5, Repeats: 5, Order: "counterbalanced", Threads: []int{1, 4}, Workloads: []string{"oltp_point_select"}}}
	id, err := st.CreateSweep(ctx, sw, []store.Target{{Name: "db", Role: "control", URL: "mysql://u@127.0.0.1:3306/sbtest"}})
	if err != nil {
		t.Fatal(err)
	}
	step := 0
	for _, th := range []int{1, 4} {
		for rep := 1; rep <= 5; rep++ {
			step++
			qps := base * float64(th) * (1 + noise*rng.NormFloat64())
			res := &result.Result{SchemaVersion: result.SchemaVersion, Workload: "oltp_point_select", Threads: th, TimeS: 5, QPS: qps, TPS: qps,
				LatencyMS: result.Latency{P95: 1000 / qps * float64(th), P99: 2000 / qps * float64(th)},
				Options:   map[string]string{"tables": tables, "time": "5", "threads": "x", "mysql-port": "3306"},
				Errors:    result.Errors{ByCode: map[string]int64{}}}
			for s := 1; s <= 5; s++ {
				res.Intervals = append(res.Intervals, result.Interval{AtS: float64(s), QPS: qps})
			}
			run := &store.Run{SweepID: id, Step: step, Target: "db", Role: "control", Workload: "oltp_point_select", Threads: th, Repeat: rep,
				Status: store.RunOK, StartedAt: at.Add(time.Duration(step) * 6 * time.Second), WallS: 6, Result: res}
			if _, err := st.AddRun(ctx, run); err != nil {
				t.Fatal(err)
			}
		}
	}
	return id
}

func tempStore(t *testing.T) (*store.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.db")
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, path
}

// TestBaseline saves a baseline from a stored sweep and compares later
// sweeps with it: a regression exits 3, a rerun exits 0, an unknown
// baseline and other options are bad input.
func TestBaseline(t *testing.T) {
	st, path := tempStore(t)
	rng := rand.New(rand.NewPCG(1, 1))
	at := time.Date(2026, 5, 1, 2, 0, 0, 0, time.UTC)
	synthSweep(t, st, at, 1000, 0.01, rng, "1")                    // 1: the baseline
	synthSweep(t, st, at.Add(24*time.Hour), 850, 0.01, rng, "1")   // 2: 15% slower
	synthSweep(t, st, at.Add(48*time.Hour), 1000, 0.01, rng, "1")  // 3: as before
	synthSweep(t, st, at.Add(72*time.Hour), 1000, 0.01, rng, "16") // 4: other options
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr []string
	}{
		{"save", []string{"baseline", "save", "nightly", "--sweep", "1"}, ExitOK, []string{"baseline nightly saved: 10 runs of db from sweep 1 (oltp_point_select)"}, nil},
		{"save again", []string{"baseline", "save", "nightly", "--sweep", "1"}, ExitUsage, nil, []string{"nightly already exists"}},
		{"list", []string{"baseline", "list"}, ExitOK, []string{"nightly", "sweep 1", "10"}, nil},
		{"a regression exits 3", []string{"report", "--baseline", "nightly", "--sweep", "2"}, ExitDifferences,
			[]string{"baseline nightly", "slower"}, []string{"slower than baseline nightly: oltp_point_select at 1 threads: QPS 0.8"}},
		{"a rerun passes", []string{"report", "--baseline", "nightly", "--sweep", "3"}, ExitOK, nil, []string{"nothing is slower than baseline nightly"}},
		{"unknown baseline", []string{"report", "--baseline", "weekly", "--sweep", "3"}, ExitUsage, nil, []string{`no baseline "weekly"`, "baselines: nightly"}},
		{"other options", []string{"report", "--baseline", "nightly", "--sweep", "4"}, ExitUsage, nil,
			[]string{"does not match the new results: oltp_point_select was run with other options: --tables 1 (baseline) against 16"}},
		{"delete", []string{"baseline", "delete", "nightly"}, ExitOK, []string{"baseline nightly deleted"}, nil},
		{"delete again", []string{"baseline", "delete", "nightly"}, ExitUsage, nil, []string{"there are none yet"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runEnv(context.Background(), nil, append(tc.args, "--store", path)...)
			if code != tc.code {
				t.Errorf("exit code: got %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout, stderr)
			}
			for _, w := range tc.stdout {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout: want %q in:\n%s", w, stdout)
				}
			}
			for _, w := range tc.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr: want %q in:\n%s", w, stderr)
				}
			}
		})
	}
}

// history runs report --history as JSON on a store of synthetic sweeps and
// returns the sweeps where its one series changes.
func historyChanges(t *testing.T, qps []float64) []int64 {
	t.Helper()
	st, path := tempStore(t)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, q := range qps {
		synthSweep(t, st, at.Add(time.Duration(i)*24*time.Hour), q, 0.002, rand.New(rand.NewPCG(uint64(i), 3)), "1")
	}
	code, stdout, stderr := runEnv(context.Background(), nil, "report", "--history", "--threads", "1", "--format", "json", "--store", path)
	if code != ExitOK {
		t.Fatalf("report --history: exit %d: %s", code, stderr)
	}
	var doc struct {
		Series []struct {
			Points  []json.RawMessage `json:"points"`
			Changes []struct {
				Sweep int64 `json:"sweep"`
			} `json:"change_points"`
		} `json:"series"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if len(doc.Series) != 1 || len(doc.Series[0].Points) != len(qps) {
		t.Fatalf("got %d series, want 1 of %d sweeps:\n%s", len(doc.Series), len(qps), stdout)
	}
	var out []int64
	for _, c := range doc.Series[0].Changes {
		out = append(out, c.Sweep)
	}
	return out
}

// TestHistoryChangePoints stores 12 sweeps with a 10% step after the 6th:
// the change is found at the 7th sweep, where the new level starts (within
// one); a flat history with 3% noise has none.
func TestHistoryChangePoints(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 42))
	noisy := func(base float64) float64 { return base * (1 + 0.03*rng.NormFloat64()) }
	var step, flat []float64
	for i := range 12 {
		base := 1000.0
		if i >= 6 {
			base = 1100
		}
		step = append(step, noisy(base))
		flat = append(flat, noisy(1000))
	}
	got := historyChanges(t, step)
	if len(got) != 1 || got[0] < 6 || got[0] > 8 {
		t.Errorf("a 10%% step after sweep 6: got change points at sweeps %v, want one at 7 (within one)", got)
	}
	if got := historyChanges(t, flat); len(got) != 0 {
		t.Errorf("flat history: got change points at sweeps %v, want none", got)
	}
}

// TestReportOnlyLooseRuns: a store with runs made one by one and no sweep
// points to --runs all.
func TestReportOnlyLooseRuns(t *testing.T) {
	st, path := tempStore(t)
	res := &result.Result{SchemaVersion: result.SchemaVersion, Workload: "ping", Threads: 1, QPS: 100, Errors: result.Errors{ByCode: map[string]int64{}}}
	if _, err := st.AddRun(context.Background(), &store.Run{Target: "a", Workload: "ping", Threads: 1, Status: store.RunOK, StartedAt: time.Now(), Result: res}); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runEnv(context.Background(), nil, "report", "--store", path)
	if code != ExitUsage || !strings.Contains(stderr, "--runs all") {
		t.Errorf("got exit %d, %q; want 2 and a pointer to --runs all", code, stderr)
	}
}

// synthPair stores a sweep of two targets, db (the control) and other,
// running oltp_point_select at 4 threads, 5 repeats each in the order A B
// B A, with QPS around base times each target's factor. Each repeat of the
// pair shares the machine's noise of the moment (machine, relative, drawn
// once a repeat) and each run has its own (noise).
func synthPair(t *testing.T, st *store.Store, at time.Time, base float64, factor map[string]float64, machine, noise float64, rng *rand.Rand) int64 {
	t.Helper()
	ctx := context.Background()
	sw := &store.Sweep{Name: "pair", StartedAt: at, FinishedAt: at.Add(time.Minute), Status: store.SweepDone, Steps: 10,
		ClientHost: "h", Tool: "shakedown test",
		Settings: store.Settings{TimeS: 5, Repeats: 5, Order: "counterbalanced", Threads: []int{4}, Workloads: []string{"oltp_point_select"}}}
	id, err := st.CreateSweep(ctx, sw, []store.Target{{Name: "db", Role: "control", URL: "mysql://u@127.0.0.1:3306/sbtest"},
		{Name: "other", Role: "candidate", URL: "mysql://u@127.0.0.1:3307/sbtest"}})
	if err != nil {
		t.Fatal(err)
	}
	step := 0
	for rep := 1; rep <= 5; rep++ {
		now := 1 + machine*rng.NormFloat64()
		order := []string{"db", "other"}
		if rep%2 == 0 {
			order = []string{"other", "db"}
		}
		for _, tg := range order {
			step++
			qps := base * factor[tg] * now * (1 + noise*rng.NormFloat64())
			res := &result.Result{SchemaVersion: result.SchemaVersion, Workload: "oltp_point_select", Threads: 4, TimeS: 5, QPS: qps, TPS: qps,
				LatencyMS: result.Latency{P95: 4000 / qps, P99: 8000 / qps},
				Options:   map[string]string{"tables": "1", "time": "5", "threads": "4"},
				Errors:    result.Errors{ByCode: map[string]int64{}}}
			for s := 1; s <= 5; s++ {
				res.Intervals = append(res.Intervals, result.Interval{AtS: float64(s), QPS: qps})
			}
			role := "candidate"
			if tg == "db" {
				role = "control"
			}
			run := &store.Run{SweepID: id, Step: step, Target: tg, Role: role, Workload: "oltp_point_select", Threads: 4, Repeat: rep,
				Status: store.RunOK, StartedAt: at.Add(time.Duration(step) * 6 * time.Second), WallS: 6, Result: res}
			if _, err := st.AddRun(ctx, run); err != nil {
				t.Fatal(err)
			}
		}
	}
	return id
}

var factorRE = regexp.MustCompile(`machine changed \(x([0-9.]+)\)`)

// TestBaselineMachineMoved: a baseline knows the machine from the server.
// Its own runs compared with it are the same, however they spread; a
// sweep in which every target fell by the same factor is inconclusive
// because the machine changed (exit 0), with the factor; one in which the
// baseline's target alone fell is still slower (exit 3); and a baseline of
// the candidate uses the control beside it the same way.
func TestBaselineMachineMoved(t *testing.T) {
	st, path := tempStore(t)
	rng := rand.New(rand.NewPCG(28, 5))
	at := time.Date(2026, 6, 1, 2, 0, 0, 0, time.UTC)
	alike := map[string]float64{"db": 1, "other": 1.3}
	synthPair(t, st, at, 1000, alike, 0.04, 0.03, rng)                                                          // 1: the baseline
	synthPair(t, st, at.Add(time.Hour), 711, alike, 0.04, 0.03, rng)                                            // 2: the machine slowed
	synthPair(t, st, at.Add(2*time.Hour), 1000, map[string]float64{"db": 0.711, "other": 1.3}, 0.04, 0.03, rng) // 3: db slowed
	for _, save := range [][]string{{"baseline", "save", "nightly", "--sweep", "1"}, {"baseline", "save", "other", "--sweep", "1", "--target", "other"}} {
		if code, _, stderr := runEnv(context.Background(), nil, append(save, "--store", path)...); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", save, code, stderr)
		}
	}
	tests := []struct {
		name     string
		args     []string
		code     int
		verdict  string // the QPS verdict in the JSON report
		stderr   []string
		noStderr string
	}{
		{"its own runs are the same", []string{"--baseline", "nightly", "--sweep", "1"}, ExitOK, "same: the baseline's own runs",
			[]string{"nothing is slower than baseline nightly"}, "the machine changed"},
		{"every target moved alike", []string{"--baseline", "nightly", "--sweep", "2"}, ExitOK, "inconclusive: the machine changed (x",
			[]string{"inconclusive against baseline nightly: the machine changed, not the server: oltp_point_select at 4 threads: QPS 0.",
				"and so did other 0.", "nothing is slower than baseline nightly"}, "slower than baseline nightly:"},
		{"only the baseline's target moved", []string{"--baseline", "nightly", "--sweep", "3"}, ExitDifferences, "slower",
			[]string{"slower than baseline nightly: oltp_point_select at 4 threads: QPS 0."}, "the machine changed"},
		{"a baseline of the candidate, every target moved alike", []string{"--baseline", "other", "--sweep", "2"}, ExitOK,
			"inconclusive: the machine changed (x", []string{"and so did db 0."}, "slower than baseline other:"},
		{"a baseline of the candidate, the control alone moved", []string{"--baseline", "other", "--sweep", "3"}, ExitOK, "",
			nil, "the machine changed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runEnv(context.Background(), nil, append([]string{"report", "--format", "json", "--store", path}, tc.args...)...)
			if code != tc.code {
				t.Errorf("exit code: got %d, want %d\nstderr: %s", code, tc.code, stderr)
			}
			var doc struct {
				Rows []struct {
					Role      string `json:"role"`
					VsControl map[string]struct {
						Note string `json:"note"`
					} `json:"vs_control"`
				} `json:"rows"`
			}
			if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
				t.Fatalf("%v: %s", err, stdout)
			}
			var notes []string
			for _, r := range doc.Rows {
				if r.Role != "control" {
					notes = append(notes, r.VsControl["qps"].Note)
				}
			}
			if len(notes) != 1 || tc.verdict != "" && !strings.HasPrefix(notes[0], tc.verdict) || strings.Contains(notes[0], "machine") && tc.verdict == "" {
				t.Errorf("QPS verdict: got %q, want one starting %q", notes, tc.verdict)
			}
			// The factor is how far the others moved: 0.711, less what the
			// noise of five runs a side makes of it.
			if m := factorRE.FindStringSubmatch(strings.Join(notes, "")); m != nil {
				if f, _ := strconv.ParseFloat(m[1], 64); f < 0.62 || f > 0.8 {
					t.Errorf("factor: got %s, want 0.711 within the noise (0.62 to 0.8)", m[1])
				}
			} else if strings.Contains(tc.verdict, "machine") {
				t.Errorf("QPS verdict: got %q, want the factor in it", notes)
			}
			for _, w := range tc.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr: want %q in:\n%s", w, stderr)
				}
			}
			if tc.noStderr != "" && strings.Contains(stderr, tc.noStderr) {
				t.Errorf("stderr: got %q, want no %q", stderr, tc.noStderr)
			}
		})
	}
}
