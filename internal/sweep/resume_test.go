package sweep

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/plan"
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
	p, err := plan.Parse("p.yaml", []byte(src), func(string) string { return "" })
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
