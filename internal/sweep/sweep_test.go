package sweep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/bench"
	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/report"
	"github.com/shakedown/shakedown/internal/runner"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/target"
	_ "github.com/shakedown/shakedown/internal/workload/all"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// database makes a fresh database on the server at url and returns a URL
// that names it, so that two targets can share one server.
func database(t *testing.T, url, name string) string {
	t.Helper()
	tg, err := target.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	db, err := tg.OpenNoDB(tg.Endpoints()[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, q := range []string{"DROP DATABASE IF EXISTS " + name, "CREATE DATABASE " + name} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return strings.TrimSuffix(url, "/"+tg.DB) + "/" + name
}

func tables(t *testing.T, url string) []string {
	t.Helper()
	tg, err := target.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	db, err := tg.Open(tg.Endpoints()[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SHOW TABLES")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// planFor writes a plan with two targets (a control and a candidate) and
// parses it.
func planFor(t *testing.T, control, candidate, extra string) *plan.Plan {
	t.Helper()
	src := fmt.Sprintf(`name: test
targets:
  - name: a
    url: %s
    role: control
  - name: b
    url: %s
workloads:
  - name: oltp_point_select
    options: {tables: 1, table-size: 200}
prepare: true
prepare_threads: 1
%s`, control, candidate, extra)
	path := filepath.Join(t.TempDir(), "plan.yaml")
	p, err := plan.Parse(path, []byte(src), func(string) string { return "" }, bench.Grammar{})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	return p
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "shakedown.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func check(t *testing.T, p *plan.Plan) []Env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	envs, err := Check(ctx, p)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	return envs
}

func statuses(runs []store.Run) string {
	var parts []string
	for _, r := range runs {
		parts = append(parts, fmt.Sprintf("%d:%s/%d:%s", r.Step, r.Target, r.Threads, r.Status))
	}
	return strings.Join(parts, " ")
}

func TestSweep(t *testing.T) {
	url := sandboxtest.URL(t)
	a, b := database(t, url, "sweep_a"), database(t, url, "sweep_b")
	p := planFor(t, a, b, "threads: [1, 2]\ntime: 1\ncleanup: true\n")
	envs := check(t, p)
	if envs[0].Server.Version == "" || envs[0].Variables["innodb_flush_log_at_trx_commit"] == "" {
		t.Errorf("environment: got %+v, want the version and variables", envs[0].Server)
	}
	st := openStore(t)
	var progress bytes.Buffer
	sum, err := Run(context.Background(), p, envs, Options{Store: st, Progress: &progress, Host: "testhost", Version: "test"})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, progress.String())
	}
	if sum.OK != 4 || sum.Failed != 0 || sum.Interrupted {
		t.Errorf("summary: got %+v, want 4 ok", sum)
	}
	d, err := st.Load(context.Background(), sum.SweepID)
	if err != nil {
		t.Fatal(err)
	}
	// Counterbalanced: b opens the second level.
	if got, want := statuses(d.Runs), "1:a/1:ok 2:b/1:ok 3:b/2:ok 4:a/2:ok"; got != want {
		t.Errorf("runs: got %s, want %s", got, want)
	}
	for _, r := range d.Runs {
		if r.Result == nil || r.Result.QPS <= 0 || len(r.Result.Intervals) == 0 {
			t.Errorf("step %d: got result %+v, want QPS and intervals", r.Step, r.Result)
			continue
		}
		if want := fmt.Sprintf("oltp_point_select --threads=%d --time=1 --tables=1 --table-size=200", r.Threads); r.Command != want {
			t.Errorf("step %d command: got %q, want %q", r.Step, r.Command, want)
		}
	}
	if d.Sweep.Status != store.SweepDone || d.Sweep.ClientHost != "testhost" || !strings.Contains(d.Sweep.Plan, "oltp_point_select") {
		t.Errorf("sweep: got %+v", d.Sweep)
	}
	if len(d.Targets) != 2 || d.Targets[1].Role != "candidate" || len(d.Targets[0].Variables) < 50 {
		t.Errorf("targets: got %d, want 2 with their variables", len(d.Targets))
	}
	// Data was made once per target, and cleanup dropped it.
	if got := strings.Count(progress.String(), "prepared oltp_point_select data on a"); got != 1 {
		t.Errorf("prepared on a %d times, want once:\n%s", got, progress.String())
	}
	if got := tables(t, a); len(got) != 0 {
		t.Errorf("after cleanup: got tables %v, want none", got)
	}
}

// TestInterrupt cancels the sweep during its second step: the first stays
// stored as ok, the second as interrupted, nothing after it runs.
func TestInterrupt(t *testing.T) {
	url := sandboxtest.URL(t)
	a, b := database(t, url, "intr_a"), database(t, url, "intr_b")
	p := planFor(t, a, b, "threads: [1, 2]\ntime: 3\ncleanup: true\n")
	envs := check(t, p)
	st := openStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sum, err := Run(ctx, p, envs, Options{Store: st, Version: "test",
		OnInterval: func(s plan.Step, _ runner.Interval) {
			if s.Index == 2 {
				cancel()
			}
		}})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("Run: got %v, want ErrInterrupted", err)
	}
	if !sum.Interrupted || sum.OK != 1 {
		t.Errorf("summary: got %+v, want interrupted with 1 ok", sum)
	}
	d, err := st.Load(context.Background(), sum.SweepID)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := statuses(d.Runs), "1:a/1:ok 2:b/1:interrupted"; got != want {
		t.Errorf("runs: got %s, want %s", got, want)
	}
	if d.Sweep.Status != store.SweepInterrupted || d.Sweep.FinishedAt.IsZero() {
		t.Errorf("sweep: got status %s, finished %v, want interrupted with an end", d.Sweep.Status, d.Sweep.FinishedAt)
	}
	// Cleanup is skipped on an interrupt: the data stays for a rerun.
	if got := tables(t, a); len(got) != 1 {
		t.Errorf("tables after an interrupt: got %v, want sbtest1 kept", got)
	}
}

func TestCheckUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	src := fmt.Sprintf(`targets:
  - name: up
    url: %s
    role: control
  - name: down
    url: mysql://shakedown@127.0.0.1:%d/sbtest
workloads: [oltp_point_select]
threads: [1]
`, sandboxtest.URL(t), port)
	p, err := plan.Parse("p.yaml", []byte(src), func(string) string { return "" }, bench.Grammar{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = Check(ctx, p)
	var ce *CheckError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want a *CheckError", err)
	}
	want := fmt.Sprintf("p.yaml:5: target down (mysql://shakedown@127.0.0.1:%d/sbtest): connect to 127.0.0.1:%d: connection refused", port, port)
	if len(ce.Lines) != 1 || !strings.HasPrefix(ce.Lines[0], want) {
		t.Errorf("got %q, want one line starting %q", ce.Lines, want)
	}
}

// TestLabels runs one workload twice with different options under two
// labels: the runs are stored, and reported, apart.
func TestLabels(t *testing.T) {
	url := sandboxtest.URL(t)
	src := fmt.Sprintf(`targets:
  - {name: a, url: %s, role: control}
workloads:
  - name: ping
    options: {ping-mode: com}
  - name: ping
    label: ping-select
    options: {ping-mode: select}
threads: [1]
time: 1
`, url)
	p, err := plan.Parse(filepath.Join(t.TempDir(), "plan.yaml"), []byte(src), func(string) string { return "" }, bench.Grammar{})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	st := openStore(t)
	var progress bytes.Buffer
	sum, err := Run(context.Background(), p, check(t, p), Options{Store: st, Progress: &progress})
	if err != nil || sum.OK != 2 {
		t.Fatalf("Run: %v, %+v\n%s", err, sum, progress.String())
	}
	d, err := st.Load(context.Background(), sum.SweepID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range d.Runs {
		got = append(got, r.Workload+": "+r.Command)
	}
	want := []string{"ping: ping --threads=1 --time=1 --ping-mode=com", "ping-select: ping --threads=1 --time=1 --ping-mode=select"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("runs: got %q, want %q", got, want)
	}
	if !strings.Contains(progress.String(), "ping-select") {
		t.Errorf("progress does not name the label:\n%s", progress.String())
	}
	var names []string
	for _, w := range report.Build(d).Workloads {
		names = append(names, w.Name)
	}
	if strings.Join(names, ",") != "ping,ping-select" {
		t.Errorf("report workloads: got %v, want ping and ping-select", names)
	}
}

// TestAA sweeps one database as both control and candidate (an A/A pair),
// a small version of the calibration run: the data is prepared once and
// shared, repeats: auto adds a fourth repeat to the cells still
// inconclusive after three, the report calls the pair A/A, and at most one
// of its cells comes out faster or slower.
func TestAA(t *testing.T) {
	url := database(t, sandboxtest.URL(t), "aa")
	p := planFor(t, url, url, "threads: [1, 2]\ntime: 1\nrepeats: auto\nmax_repeats: 4\n")
	envs := check(t, p)
	if lines := SameServers(envs); len(lines) != 1 || !strings.Contains(lines[0], "a and b are the same server") {
		t.Errorf("same servers: got %q, want a and b", lines)
	}
	st := openStore(t)
	var progress bytes.Buffer
	sum, err := Run(context.Background(), p, envs, Options{Store: st, Progress: &progress, Version: "test"})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, progress.String())
	}
	if got := strings.Count(progress.String(), "prepared oltp_point_select data on"); got != 1 {
		t.Errorf("prepared %d times, want once for both:\n%s", got, progress.String())
	}
	if !strings.Contains(progress.String(), "shared with b (the same server and database)") {
		t.Errorf("progress does not say the data is shared:\n%s", progress.String())
	}
	if !strings.Contains(progress.String(), "repeats: auto: 2 of 2 workload and thread levels still inconclusive; one more repeat of each (4 steps)") {
		t.Errorf("progress does not say what auto does:\n%s", progress.String())
	}
	if sum.Steps != 16 || sum.OK != 16 {
		t.Errorf("summary: got %+v, want 16 steps ok (12, then 4 more)", sum)
	}
	d, err := st.Load(context.Background(), sum.SweepID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Sweep.Steps != 16 || !d.Sweep.Settings.AutoRepeats {
		t.Errorf("stored sweep: got %d steps, settings %+v", d.Sweep.Steps, d.Sweep.Settings)
	}
	rep := report.Build(d)
	if _, ok := rep.AAPairs["b"]; !ok {
		t.Errorf("report: b is not called A/A (%v)", rep.AAPairs)
	}
	called := 0
	for _, w := range rep.Workloads {
		for _, c := range w.Comparisons() {
			t.Logf("%d threads: %.3f [%.3f, %.3f] %s", c.Threads, c.Ratio, c.QPS.Low, c.QPS.High, c.QPS.Note())
			if c.QPS.Candidate.N != 4 || c.QPS.Control.N != 4 {
				t.Errorf("%d threads: got %d and %d runs, want 4 a side", c.Threads, c.QPS.Control.N, c.QPS.Candidate.N)
			}
			if c.Verdict == "faster" || c.Verdict == "slower" {
				called++
			}
		}
	}
	if called > 1 {
		t.Errorf("A/A: %d of 2 cells called faster or slower, want at most 1", called)
	}
}

// TestPrepareKeepsData: prepare: true refuses a database whose tables hold
// rows, before anything runs; prepare: replace allows it.
func TestPrepareKeepsData(t *testing.T) {
	url := sandboxtest.URL(t)
	a := database(t, url, "keep_a")
	b := database(t, url, "keep_b")
	tg, err := target.Parse(a)
	if err != nil {
		t.Fatal(err)
	}
	db, err := tg.Open(tg.Endpoints()[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{"CREATE TABLE sbtest1 (id INT PRIMARY KEY)", "INSERT INTO sbtest1 VALUES (1)", "CREATE TABLE empty_one (id INT)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	p := planFor(t, a, b, "threads: [1]\n")
	err = CheckData(context.Background(), p, check(t, p))
	if err == nil || !strings.Contains(err.Error(), ":3: target a: database keep_a already holds tables with rows (sbtest1)") ||
		!strings.Contains(err.Error(), "prepare: replace") || strings.Contains(err.Error(), "target b") {
		t.Errorf("prepare: true: got %v, want target a refused, naming sbtest1 and prepare: replace", err)
	}
	p = planFor(t, a, b, "threads: [1]\n")
	p.PrepareReplace = true
	if err := CheckData(context.Background(), p, check(t, p)); err != nil {
		t.Errorf("prepare: replace: got %v, want no objection", err)
	}
}

// TestResume interrupts a sweep, then continues it in the same store: the
// steps already stored are not run again, the interrupted one is.
func TestResume(t *testing.T) {
	url := sandboxtest.URL(t)
	a, b := database(t, url, "resume_a"), database(t, url, "resume_b")
	// Two seconds a step: a one-second step may end before its first
	// whole interval, and OnInterval would not see it.
	p := planFor(t, a, b, "threads: [1, 2]\ntime: 2\n")
	envs := check(t, p)
	st := openStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sum, err := Run(ctx, p, envs, Options{Store: st, Version: "test",
		OnInterval: func(s plan.Step, _ runner.Interval) {
			if s.Index == 3 {
				cancel()
			}
		}})
	if !errors.Is(err, ErrInterrupted) || sum.OK != 2 {
		t.Fatalf("first part: got %v, %+v; want interrupted after 2 steps", err, sum)
	}
	p.PrepareReplace = true
	var progress bytes.Buffer
	sum2, err := Run(context.Background(), p, envs, Options{Store: st, Version: "test", Resume: sum.SweepID, Progress: &progress})
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, progress.String())
	}
	if sum2.SweepID != sum.SweepID || sum2.OK != 4 {
		t.Errorf("resume: got %+v, want sweep %d with 4 ok", sum2, sum.SweepID)
	}
	d, err := st.Load(context.Background(), sum.SweepID)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := statuses(d.Runs), "1:a/1:ok 2:b/1:ok 3:b/2:interrupted 3:b/2:ok 4:a/2:ok"; got != want {
		t.Errorf("runs: got %s, want %s", got, want)
	}
	if d.Sweep.Status != store.SweepDone {
		t.Errorf("status: got %s, want done", d.Sweep.Status)
	}
	// prepare: replace on resume does not make the data again under the
	// levels begun: it is there and whole, and kept.
	out := progress.String()
	for _, want := range []string{"resuming sweep", "resuming: keeping oltp_point_select data on a as the interrupted sweep left it",
		"resuming: keeping oltp_point_select data on b as the interrupted sweep left it", "step 3/4", "step 4/4"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress has no %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "prepared") || strings.Contains(out, "dropping") {
		t.Errorf("the resume made data again:\n%s", out)
	}
}
