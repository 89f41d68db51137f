package sweep

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/bench"
	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/runner"
	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/store"
)

// TestResumeLaterRounds: a sweep with repeats: auto interrupted in a later
// round runs that round's unfinished steps again on resume, and a level
// restarted on fresh data runs all its repeats again, the later rounds'
// too. Nothing here connects.
func TestResumeLaterRounds(t *testing.T) {
	src := `targets:
  - {name: a, url: "mysql://u@127.0.0.1:1/db", role: control}
workloads:
  - name: oltp_point_select
    options: {tables: 1, table-size: 10}
threads: [1]
time: 1
repeats: auto
max_repeats: 6
prepare: true
`
	p, err := plan.Parse("p.yaml", []byte(src), func(string) string { return "" }, bench.Grammar{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	s := &sweeper{p: p, pr: newProgress(&out, false, false, time.Now, 5, time.Second), homes: homes(p, nil), said: map[string]bool{}}
	d := &store.SweepData{}
	done := map[string]bool{}
	for r := 1; r <= 5; r++ {
		status := store.RunOK
		if r == 5 {
			status = store.RunInterrupted
		} else {
			done[stepKey("a", "oltp_point_select", 1, r)] = true
		}
		d.Runs = append(d.Runs, store.Run{ID: int64(r), Step: r, Target: "a", Workload: "oltp_point_select", Threads: 1, Repeat: r, Status: status})
	}
	steps := func(ss []plan.Step) string {
		var parts []string
		for _, st := range ss {
			parts = append(parts, fmt.Sprintf("%d:#%d", st.Index, st.Repeat))
		}
		return strings.Join(parts, " ")
	}
	if got, want := steps(s.later(d, 3, done)), "5:#5"; got != want {
		t.Errorf("later steps: got %q, want %q", got, want)
	}
	top := map[string]int{stepKey("a", "oltp_point_select", 1, 0): 5}
	first := p.Steps()[0]
	s.restart(first, s.dataKey(first.Workload), "gone", done, top)
	if len(done) != 0 {
		t.Errorf("after the restart: got %v done, want none", done)
	}
	if got, want := steps(s.later(d, 3, done)), "4:#4 5:#5"; got != want {
		t.Errorf("later steps after the restart: got %q, want %q", got, want)
	}
	if want := "repeats 1, 2, 3, 4, stored, are run again"; !strings.Contains(out.String(), want) {
		t.Errorf("progress has no %q:\n%s", want, out.String())
	}
}

// TestKilledTarget kills the candidate's server during one of its steps:
// that step fails, the target is waited for a bounded time and then
// skipped (said once), the control's steps all complete, and the sweep
// finishes with failures. A resume while the target is still down skips
// it again, said once; once it is back, a resume runs the failed steps
// again and the sweep is whole.
func TestKilledTarget(t *testing.T) {
	control := database(t, sandboxtest.URL(t), "killed_a")
	inst := sandboxtest.Start(t)
	p := planFor(t, control, inst.URL(), "threads: [1, 2, 3]\ntime: 2\n")
	envs := check(t, p)
	st := openStore(t)
	var once sync.Once
	killErr := make(chan error, 1)
	var progress bytes.Buffer
	const wait = 2 * time.Second
	sum, err := Run(context.Background(), p, envs, Options{Store: st, Version: "test", Progress: &progress, DownWait: wait,
		OnInterval: func(s plan.Step, _ runner.Interval) {
			if s.Target.Name == "b" && s.Threads == 2 {
				once.Do(func() {
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					killErr <- sandbox.Kill(ctx, inst.Home, inst.Name)
				})
			}
		}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := <-killErr; err != nil {
		t.Fatalf("kill: %v", err)
	}
	d, err := st.Load(context.Background(), sum.SweepID)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := statuses(d.Runs), "1:a/1:ok 2:b/1:ok 3:b/2:failed 4:a/2:ok 5:a/3:ok 6:b/3:failed"; got != want {
		t.Errorf("runs: got %s, want %s", got, want)
	}
	for _, r := range d.Runs {
		if r.Status == store.RunFailed && r.Error == "" {
			t.Errorf("step %d failed without an error", r.Step)
		}
	}
	if r := d.Runs[len(d.Runs)-1]; !strings.HasPrefix(r.Error, "skipped: target b did not answer") {
		t.Errorf("step 6: got error %q, want it skipped", r.Error)
	}
	out := progress.String()
	if got := strings.Count(out, "target b did not answer for 2s: its remaining steps are skipped, stored as failed; once it is back, shakedown sweep --resume 1 --store "+st.Path()+" runs them"); got != 1 {
		t.Errorf("the skip is said %d times, want once:\n%s", got, out)
	}
	if strings.Contains(out, "step 6/6") {
		t.Errorf("the skipped step is said step by step:\n%s", out)
	}
	if sum.Failed != 2 || sum.OK != 4 || d.Sweep.Status != store.SweepDone {
		t.Errorf("got %+v and status %s, want 2 failed, 4 ok, done", sum, d.Sweep.Status)
	}
	if n, err := st.FailedSteps(context.Background(), sum.SweepID); err != nil || n != 2 {
		t.Errorf("failed steps: got %d, %v; want 2", n, err)
	}

	// Resumed with b still down: it is waited for, then skipped, once.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var waited bytes.Buffer
	envs, err = CheckWait(ctx, p, wait, &waited)
	if err != nil || envs[1].Down == "" || envs[0].Down != "" {
		t.Fatalf("CheckWait: got %v, %+v; want b down, a up", err, envs)
	}
	progress.Reset()
	sum2, err := Run(ctx, p, envs, Options{Store: st, Version: "test", Progress: &progress, Resume: sum.SweepID, DownWait: wait})
	if err != nil || sum2.OK != 4 || sum2.Failed != 2 {
		t.Fatalf("resume with b down: got %v, %+v; want 4 ok, 2 failed\n%s", err, sum2, progress.String())
	}
	if got := strings.Count(progress.String(), "target b does not answer"); got != 1 {
		t.Errorf("resume with b down: the skip is said %d times, want once:\n%s", got, progress.String())
	}

	// Back again: the failed steps run again, and only they.
	if _, err := sandbox.Start(ctx, inst.Home, inst.Name); err != nil {
		t.Fatalf("start b again: %v", err)
	}
	progress.Reset()
	sum3, err := Run(ctx, p, check(t, p), Options{Store: st, Version: "test", Progress: &progress, Resume: sum.SweepID, DownWait: wait})
	if err != nil || sum3.OK != 6 || sum3.Failed != 0 {
		t.Fatalf("resume with b back: got %v, %+v; want 6 ok\n%s", err, sum3, progress.String())
	}
	d, err = st.Load(context.Background(), sum.SweepID)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := statuses(store.Latest(d.Runs)), "1:a/1:ok 2:b/1:ok 3:b/2:ok 4:a/2:ok 5:a/3:ok 6:b/3:ok"; got != want {
		t.Errorf("runs that stand: got %s, want %s", got, want)
	}
	if n, _ := st.FailedSteps(context.Background(), sum.SweepID); n != 0 || d.Sweep.Status != store.SweepDone {
		t.Errorf("after the resume: %d failed steps, status %s; want none, done", n, d.Sweep.Status)
	}
}

func TestQuote(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain path", "/tmp/s-1/shakedown.db", "/tmp/s-1/shakedown.db"},
		{"store URL", "mysql://u@127.0.0.1:3306/results", "mysql://u@127.0.0.1:3306/results"},
		{"space", "/tmp/my dir/s.db", "'/tmp/my dir/s.db'"},
		{"quote", "it's.db", `'it'\''s.db'`},
		{"dollar", "$HOME/s.db", "'$HOME/s.db'"},
		{"empty", "", "''"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Quote(tc.in); got != tc.want {
				t.Errorf("Quote(%q): got %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}
