package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/bench"
	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/report"
	"github.com/shakedown/shakedown/internal/runner"
	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/sweep"
	"github.com/shakedown/shakedown/internal/target"
)

// suggested is the shakedown command line a message suggests, as
// arguments after "shakedown".
func suggested(t *testing.T, msg string) []string {
	t.Helper()
	i := strings.Index(msg, "shakedown sweep ")
	if i < 0 {
		t.Fatalf("no suggested command in %q", msg)
	}
	line := msg[i+len("shakedown "):]
	if j := strings.IndexAny(line, ";)\n"); j >= 0 {
		line = line[:j]
	}
	return strings.Fields(line)
}

// TestSweepSuggestionsRun runs, as printed, the commands a sweep suggests
// when it is interrupted (--resume ID, with a space) and when steps
// failed: each parses and does what it says.
func TestSweepSuggestionsRun(t *testing.T) {
	url := sandboxtest.URL(t)
	mustExec(t, adminDB(t, url), "DROP DATABASE IF EXISTS suggest_cli", "CREATE DATABASE suggest_cli")
	url = strings.TrimSuffix(url, "/sbtest") + "/suggest_cli"
	path := writePlan(t, fmt.Sprintf(`targets:
  - {name: a, url: "%s", role: control}
workloads: [ping]
threads: [1, 2]
time: 2
`, url))
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Parse(path, src, func(string) string { return "" }, bench.Grammar{})
	if err != nil {
		t.Fatal(err)
	}
	envs, err := sweep.Check(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "s.db")
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sum, runErr := sweep.Run(ctx, p, envs, sweep.Options{Store: st, OnInterval: func(s plan.Step, _ runner.Interval) {
		if s.Index == 2 {
			cancel()
		}
	}})
	if !errors.Is(runErr, sweep.ErrInterrupted) {
		t.Fatalf("first part: got %v, want interrupted", runErr)
	}
	var out bytes.Buffer
	msg := finishSweep(context.Background(), &Env{Stdout: &out, Stderr: &out}, st, sum, runErr, nil)
	args := suggested(t, msg.Error())
	if want := []string{"sweep", "--resume", strconv.FormatInt(sum.SweepID, 10), "--store", db}; strings.Join(args, " ") != strings.Join(want, " ") {
		t.Fatalf("interrupted: suggests %q, want %q", args, want)
	}
	code, stdout, stderr := runEnv(context.Background(), nil, args...)
	if code != ExitOK || !strings.Contains(stdout, "sweep 1: 2 of 2 steps ok") {
		t.Fatalf("%q: exit %d\nstdout %s\nstderr %s", args, code, stdout, stderr)
	}
	// The report it suggests, written where the test may write.
	_, line, ok := strings.Cut(stdout, "full report: shakedown ")
	line, _, _ = strings.Cut(line, "\n")
	html := filepath.Join(t.TempDir(), "report.html")
	report := strings.Fields(strings.Replace(line, "-o report.html", "-o "+html, 1))
	if code, _, stderr := runEnv(context.Background(), nil, report...); !ok || code != ExitOK {
		t.Errorf("%q: exit %d, %s", report, code, stderr)
	}
	if fi, err := os.Stat(html); err != nil || fi.Size() == 0 {
		t.Errorf("%q wrote no report: %v", report, err)
	}

	// A sweep that ended with a failed step: its suggestion runs the
	// step again.
	run := store.Run{SweepID: sum.SweepID, Step: 2, Target: "a", Role: "control", Workload: "ping", Threads: 2, Repeat: 1,
		Status: store.RunFailed, Error: "the server was lost", StartedAt: time.Now()}
	if _, err := st.AddRun(context.Background(), &run); err != nil {
		t.Fatal(err)
	}
	msg = finishSweep(context.Background(), &Env{Stdout: &out, Stderr: &out}, st, &sweep.Summary{SweepID: sum.SweepID, Steps: 2, OK: 1, Failed: 1}, nil, nil)
	args = suggested(t, msg.Error())
	for _, form := range [][]string{args, {"sweep", "--resume=" + args[2], "--store", db}} {
		if _, err := st.AddRun(context.Background(), &run); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr = runEnv(context.Background(), nil, form...)
		if code != ExitOK || !strings.Contains(stdout, "ended with 1 failed steps: running them again") || !strings.Contains(stdout, "sweep 1: 2 of 2 steps ok") {
			t.Errorf("%q: exit %d\nstdout %s\nstderr %s", form, code, stdout, stderr)
		}
	}
	code, _, stderr = runEnv(context.Background(), nil, "sweep", "--resume", "1", "--store", db)
	if code != ExitUsage || !strings.Contains(stderr, "sweep 1 is done and no step of it failed") {
		t.Errorf("nothing to resume: got exit %d, %q; want 2", code, stderr)
	}
	code, _, stderr = runEnv(context.Background(), nil, "sweep", "--resume", "plan.yaml", "--store", db)
	if code != ExitUsage || !strings.Contains(stderr, "leave out plan.yaml") {
		t.Errorf("--resume PLAN: got exit %d, %q; want 2 naming the plan", code, stderr)
	}
}

// TestDemoPlanResumedTwice sweeps the demo's plan (tiny tables, one thread
// level, two-second steps), interrupts it twice and resumes it twice. The
// first resume keeps the data, as nothing changed it. Before the second the
// control's table is dropped: the resume makes it again and runs the thread
// level it had begun again from its first repeat. The step counters count
// the whole sweep, and the report counts each step once and states every
// preparation, the data kept and the level restarted.
func TestDemoPlanResumedTwice(t *testing.T) {
	url := sandboxtest.URL(t)
	admin := adminDB(t, url)
	mustExec(t, admin, "DROP DATABASE IF EXISTS demo_durable", "CREATE DATABASE demo_durable",
		"DROP DATABASE IF EXISTS demo_relaxed", "CREATE DATABASE demo_relaxed")
	tg, err := target.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	port := tg.Endpoints()[0].Port
	var insts []*sandbox.Instance
	for _, n := range []string{"durable", "relaxed"} {
		insts = append(insts, &sandbox.Instance{Name: n, User: tg.User, Port: port, Database: "demo_" + n})
	}
	src := string((&demoCmd{threads: []int{1}, timeS: 2, maxRepeats: 3}).planText(insts))
	// Tiny tables, and no warm-up: what is tested is the resume, not the
	// figures.
	for old, small := range map[string]string{"options: {tables: 4, table-size: 10000}": "options: {tables: 1, table-size: 100}", "warmup: 1": "warmup: 0"} {
		if !strings.Contains(src, old) {
			t.Fatalf("the demo plan has no %q:\n%s", old, src)
		}
		src = strings.Replace(src, old, small, 1)
	}
	path := writePlan(t, src)
	p, err := plan.Parse(path, []byte(src), func(string) string { return "" }, bench.Grammar{})
	if err != nil {
		t.Fatal(err)
	}
	envs, err := sweep.Check(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Steps, counterbalanced: 1-6 oltp_point_select (durable, relaxed,
	// relaxed, durable, durable, relaxed), 7-12 oltp_write_only (relaxed,
	// durable, durable, relaxed, relaxed, durable).
	part := func(resume int64, stopAt int) (*sweep.Summary, string, error) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var progress bytes.Buffer
		sum, err := sweep.Run(ctx, p, envs, sweep.Options{Store: st, Progress: &progress, Resume: resume,
			OnInterval: func(s plan.Step, _ runner.Interval) {
				if s.Index == stopAt {
					cancel()
				}
			}})
		return sum, progress.String(), err
	}
	sum, out1, err := part(0, 3)
	if !errors.Is(err, sweep.ErrInterrupted) || sum.OK != 2 {
		t.Fatalf("first part: got %v, %+v; want interrupted after 2 steps\n%s", err, sum, out1)
	}
	_, out2, err := part(sum.SweepID, 9)
	if !errors.Is(err, sweep.ErrInterrupted) {
		t.Fatalf("first resume: got %v, want interrupted at step 9\n%s", err, out2)
	}
	mustExec(t, admin, "DROP TABLE demo_durable.sbtest1")
	sum3, out3, err := part(sum.SweepID, 0)
	if err != nil || sum3.OK != 12 || sum3.Failed != 0 || sum3.Steps != 12 {
		t.Fatalf("second resume: got %v, %+v; want 12 of 12 ok\n%s", err, sum3, out3)
	}
	outs := []string{out1, out2, out3}
	counter := regexp.MustCompile(`step (\d+)/(\d+)`)
	for i, out := range outs {
		for _, m := range counter.FindAllStringSubmatch(out, -1) {
			if n, _ := strconv.Atoi(m[1]); m[2] != "12" || n < 1 || n > 12 {
				t.Errorf("part %d: counter %q, want step i/12 with i <= 12", i+1, m[0])
			}
		}
	}
	tests := []struct {
		name string
		out  int // which part's progress
		line string
		want bool
	}{
		{"made at first", 0, "prepared oltp_point_select data on durable (created sbtest1)", true},
		{"first resume keeps durable", 1, "resuming: keeping oltp_point_select data on durable as the interrupted sweep left it", true},
		{"first resume keeps relaxed", 1, "resuming: keeping oltp_point_select data on relaxed as the interrupted sweep left it", true},
		{"first resume prepares nothing", 1, "prepared", false},
		{"first resume counts", 1, "resuming sweep 1: 2 of 12 steps stored as ok\n", true},
		{"first resume runs", 1, "resuming sweep 1: 10 steps to run (failed, interrupted or not run)\n", true},
		{"second resume restarts the level", 2, "resuming: the 1-thread level of oltp_write_only on durable was begun on data that is made again", true},
		{"second resume makes durable's data", 2, "prepared oltp_write_only data on durable (created sbtest1)", true},
		{"second resume keeps relaxed", 2, "resuming: keeping oltp_write_only data on relaxed as the interrupted sweep left it", true},
		{"relaxed not made again", 2, "prepared oltp_write_only data on relaxed", false},
		{"second resume counts", 2, "resuming sweep 1: 8 of 12 steps stored as ok\n", true},
		{"second resume counts the restart", 2, "resuming sweep 1: 5 steps to run (failed, interrupted or not run, and 1 stored as ok of levels started again on fresh data)", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Contains(outs[tc.out], tc.line); got != tc.want {
				t.Errorf("part %d has %q: got %v, want %v\n%s", tc.out+1, tc.line, got, tc.want, outs[tc.out])
			}
		})
	}
	d, err := st.Load(context.Background(), sum.SweepID)
	if err != nil {
		t.Fatal(err)
	}
	r := report.Build(d)
	var text bytes.Buffer
	if err := report.WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	// Runs again: steps 3 and 9 (interrupted) and 8 (restarted).
	for _, want := range []string{
		"12 of 12 steps ok; 3 earlier runs of steps run again left out",
		"before step 1: prepared oltp_point_select data on durable (created sbtest1)",
		"before step 3: resumed: 2 of 12 steps stored as ok (0 of them to run again on fresh data), 10 to run",
		"before step 8: resumed: 8 of 12 steps stored as ok (1 of them to run again on fresh data), 5 to run",
		"the 1-thread level of oltp_write_only on durable was begun on data that is made again",
		"repeats 1, stored, are run again on the fresh data",
	} {
		if !strings.Contains(strings.Join(strings.Fields(text.String()), " "), want) {
			t.Errorf("report: no %q:\n%s", want, text.String())
		}
	}
	for _, w := range r.Workloads {
		for _, row := range w.Rows {
			if row.QPS.N != 3 || row.Interrupted != 0 || row.Failed != 0 {
				t.Errorf("%s %s: got %d runs, %d interrupted, %d failed; want 3 ok", w.Name, row.Target, row.QPS.N, row.Interrupted, row.Failed)
			}
		}
	}
}
