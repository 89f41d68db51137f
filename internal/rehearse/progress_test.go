package rehearse

import (
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/plan"
)

// The chain's line says the step running and estimates the time left:
// the sweep from its plan, every other step from the mean of the steps
// this run finished, or defaultStepEstimate before any. The clock is a
// fake one.
func TestChainLine(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	p := &plan.Rehearsal{Sweep: &plan.Plan{TimeS: 9, Threads: []int{1}, Targets: []*plan.Target{{Name: "a", Role: plan.Control}, {Name: "b"}},
		Workloads: []*plan.Workload{{Name: "oltp_point_select"}}, Repeats: 1, Order: plan.Sequential}}
	steps := []Step{checkStep{}, verifyStep{}, sweepStep{}, readinessStep{}}
	var b strings.Builder
	cl := newLine(Options{Now: clock, Progress: &b, Live: true}, steps, p, now)

	cases := []struct {
		name string
		at   func()
		want string
	}{
		// 2 load steps of 9 s and a second each: 20 s; 3 others of 5 s.
		{"start", func() { cl.mu.Lock(); cl.cur, cl.curStart = 0, now; cl.mu.Unlock() },
			"rehearse: step 1 of 4: check · 0:00 so far · about 0:35 left"},
		// check took 10 s: the steps nothing foretells now take 10 s each.
		{"after check", func() {
			now = now.Add(10 * time.Second)
			cl.done(0, 10)
			cl.mu.Lock()
			cl.cur, cl.curStart = 1, now
			cl.mu.Unlock()
		},
			"rehearse: step 2 of 4: verify · 0:10 so far · about 0:40 left"},
		{"in verify", func() { now = now.Add(4 * time.Second) },
			"rehearse: step 2 of 4: verify · 0:14 so far · about 0:36 left"},
		{"late verify", func() { now = now.Add(20 * time.Second) },
			"rehearse: step 2 of 4: verify · 0:34 so far · about 0:30 left"},
	}
	for _, c := range cases {
		c.at()
		if got := cl.text(); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
	stop := cl.running(2)
	stop()
	if !strings.Contains(b.String(), "\r\033[Krehearse: step 3 of 4: sweep") {
		t.Errorf("live line: got %q, want the sweep step drawn in place", b.String())
	}
}
