package rehearse

import (
	"os"
	"path/filepath"
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

// TestOpeningLine: the rehearsal's first line says what its sweep runs and
// about how long it takes, and, when its repeats can never reach a
// verdict, says so and which setting to change.
func TestOpeningLine(t *testing.T) {
	base := "name: app\nsource: {name: old, url: \"mysql://u@127.0.0.1:1/app\"}\ncandidates: [{name: new, url: \"mysql://u@127.0.0.1:2/app\"}]\ndata: present\n"
	sweepOf := func(extra string) string {
		return "sweep:\n  workloads: [oltp_point_select]\n  threads: [1, 4]\n  time: 2\n" + extra
	}
	tests := []struct {
		name, plan, want string
	}{
		{"the default repeats", base + sweepOf(""),
			"rehearsal app: old against new; its sweep: 12 load steps (2 targets x 1 workloads x 2 thread levels x 3 repeats, auto: more where inconclusive, up to 10), about 0m24s for the first round, 1m20s at most"},
		{"one repeat", base + sweepOf("  repeats: 1\n"),
			"rehearsal app: old against new; its sweep: 4 load steps (2 targets x 1 workloads x 2 thread levels x 1 repeats), about 0m08s; " +
				"with 1 run a side it cannot reach a verdict (that needs 4 runs a side), so the page can say at best ready with warnings: set repeats: auto, or 4 or more, under sweep:"},
		{"auto up to 3", base + sweepOf("  repeats: auto\n  max_repeats: 3\n"),
			"rehearsal app: old against new; its sweep: 12 load steps (2 targets x 1 workloads x 2 thread levels x 3 repeats, auto: more where inconclusive, up to 3), about 0m24s for the first round, 0m24s at most; " +
				"with 3 runs a side it cannot reach a verdict (that needs 4 runs a side), so the page can say at best ready with warnings: set max_repeats: 4 or more under sweep:"},
		{"no sweep", base, "rehearsal app: old against new; no sweep: section, so the page weighs no speed"},
		{"sweep skipped", base + sweepOf("") + "steps:\n  sweep: {skip: true}\n", "rehearsal app: old against new; its sweep is skipped (skip: true), so the page weighs no speed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "app.yaml")
			if err := os.WriteFile(path, []byte(tc.plan), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := openingLine(parse(t, path)); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestChainLineAutoRepeats: with repeats: auto the sweep may run up to
// max_repeats of every level, so the line says how long that may take
// beside the first round's estimate, and the estimate grows as the sweep
// adds repeats. The clock is a fake one.
func TestChainLineAutoRepeats(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	// 2 targets x 1 level x 3 repeats of 9 s and a second to connect:
	// 60 s for the first round, 200 s at 10 repeats.
	p := &plan.Rehearsal{Sweep: &plan.Plan{TimeS: 9, Threads: []int{1}, Targets: []*plan.Target{{Name: "a", Role: plan.Control}, {Name: "b"}},
		Workloads: []*plan.Workload{{Name: "oltp_point_select"}}, Repeats: plan.MinAutoRepeats, AutoRepeats: true, MaxRepeats: 10, Order: plan.Sequential}}
	steps := []Step{checkStep{}, sweepStep{}, readinessStep{}}
	cl := newLine(Options{Now: clock}, steps, p, now)
	at := func(i int) { cl.mu.Lock(); cl.cur, cl.curStart = i, now; cl.mu.Unlock() }

	cases := []struct {
		name string
		at   func()
		want string
	}{
		// check and readiness 5 s each, the sweep 60 s, up to 200 s.
		{"start", func() { at(0) },
			"rehearse: step 1 of 3: check · 0:00 so far · about 1:10 left (up to 3:30 with repeats: auto)"},
		{"sweep", func() { now = now.Add(5 * time.Second); cl.done(0, 5); at(1) },
			"rehearse: step 2 of 3: sweep · 0:05 so far · about 1:05 left (up to 3:25 with repeats: auto)"},
		// The first round done, auto adds a repeat of the level: 2 steps.
		{"one more repeat", func() { now = now.Add(60 * time.Second); cl.moreSweepSteps(2) },
			"rehearse: step 2 of 3: sweep · 1:05 so far · about 0:25 left (up to 2:25 with repeats: auto)"},
		// Repeats up to max_repeats: the estimate reaches the most.
		{"at max_repeats", func() { now = now.Add(20 * time.Second); cl.moreSweepSteps(12) },
			"rehearse: step 2 of 3: sweep · 1:25 so far · about 2:05 left"},
	}
	for _, c := range cases {
		c.at()
		if got := cl.text(); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
