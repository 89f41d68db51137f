package sweep

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/store"
)

// TestAutoLeavesClientBound: repeats: auto adds no repeat to a cell in
// which the client limited a run, since more runs of that client will not
// settle it, and says so; a cell as unsettled but not client-bound gets
// one. The runs are stored directly.
func TestAutoLeavesClientBound(t *testing.T) {
	for _, tc := range []struct {
		name      string
		bound     bool
		wantSteps int
		wantSay   string
	}{
		{"client-bound", true, 0, "left inconclusive (client-bound)"},
		{"not client-bound", false, 2, "one more repeat of each"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			p := planFor(t, "mysql://u@127.0.0.1:1/a", "mysql://u@127.0.0.1:2/b", "threads: [4]\ntime: 1\nrepeats: auto\nmax_repeats: 6\n")
			st := openStore(t)
			id, err := st.CreateSweep(ctx, &store.Sweep{Name: "t", StartedAt: time.Now(), Status: store.SweepRunning},
				[]store.Target{{Name: "a", Role: "control"}, {Name: "b", Role: "candidate"}})
			if err != nil {
				t.Fatal(err)
			}
			// Two repeats each: too few for an interval, so auto would
			// ask for more.
			step := 0
			for rep := 1; rep <= 2; rep++ {
				for _, tg := range []string{"a", "b"} {
					step++
					res := &result.Result{SchemaVersion: result.SchemaVersion, Workload: "oltp_point_select", Threads: 4, TimeS: 1,
						QPS: 1000 + float64(10*step), Errors: result.Errors{ByCode: map[string]int64{}}}
					if tg == "b" && rep == 1 {
						res.Client = &result.Client{Bound: tc.bound, CPUPct: 12.8, Cores: 1, WaitPct: 457.2}
					}
					run := &store.Run{SweepID: id, Step: step, Target: tg, Role: map[string]string{"a": "control", "b": "candidate"}[tg],
						Workload: "oltp_point_select", Threads: 4, Repeat: rep, Status: store.RunOK, StartedAt: time.Now(), Result: res}
					if _, err := st.AddRun(ctx, run); err != nil {
						t.Fatal(err)
					}
				}
			}
			var out bytes.Buffer
			s := &sweeper{p: p, pr: newProgress(&out, false, false, time.Now, 4, time.Second), told: map[string]bool{}}
			last := step
			steps, err := s.moreRepeats(ctx, st, id, &last)
			if err != nil {
				t.Fatal(err)
			}
			if len(steps) != tc.wantSteps {
				t.Errorf("got %d more steps, want %d", len(steps), tc.wantSteps)
			}
			if !strings.Contains(out.String(), tc.wantSay) {
				t.Errorf("progress lacks %q:\n%s", tc.wantSay, out.String())
			}
		})
	}
}
