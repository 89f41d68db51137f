package capacity

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/bench"
	"github.com/shakedown/shakedown/internal/histogram"
	"github.com/shakedown/shakedown/internal/sandbox/gmstest"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	_ "github.com/shakedown/shakedown/internal/workload/all"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// ceiling is a server with a known ceiling and how to search it.
type ceiling struct {
	args     []string
	slo      string
	step     time.Duration
	warm     int // seconds
	describe string
}

// sleepServer is a go-mysql-server, which runs one statement at a time,
// and the run line of a workload whose every event sleeps 10ms on the
// server: a ceiling of about 100 events per second, whatever the client's
// threads. With SHAKEDOWN_TEST_CAPACITY_SLEEP_URL set (the device script
// does), it is that server instead, with four connections whose every
// event sleeps 2ms: a ceiling near 2,000 events per second, in steps of a
// second with no warm-up (a step's connections are new, its backlog
// empty), so that the test fits the device's time. Four connections, not
// one, so that a step of a second near the ceiling holds some 1,800
// events: with one connection it held 400, and whether such a step held
// was a coin toss on a burst of a few events.
func sleepServer(t *testing.T) ceiling {
	t.Helper()
	file := filepath.Join(t.TempDir(), "sleep.sql")
	write := func(sleep string) {
		if err := os.WriteFile(file, []byte("SELECT SLEEP("+sleep+");\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if url := os.Getenv(sleepURLEnv); url != "" {
		write("0.002")
		return ceiling{args: []string{"sql", "--file=" + file, "--target=" + url, "--threads=4", "--rand-seed=7"},
			slo: "p95<=40ms", step: time.Second, describe: "four connections, 2ms a statement"}
	}
	srv := gmstest.Start(t)
	write("0.01")
	return ceiling{args: []string{"sql", "--file=" + file, "--target=" + srv.URL, "--threads=16", "--rand-seed=7"},
		slo: "p95<=200ms", step: 2 * time.Second, warm: 1, describe: "go-mysql-server, 10ms a statement"}
}

// sleepURLEnv names a server for TestSearchMatchesScan (see sleepServer).
const sleepURLEnv = "SHAKEDOWN_TEST_CAPACITY_SLEEP_URL"

// fullEnv runs the searches of done-when 1 against a brute-force scan:
// two minutes of steps, so not part of make test (make test-capacity).
const fullEnv = "SHAKEDOWN_TEST_CAPACITY_FULL"

// TestSearchMatchesScan: against a server with a known ceiling (one
// statement at a time, each sleeping 10ms: at most 100 events/s), the
// search finds a rate within 5% of the highest rate at which a scan in 2%
// steps holds (twice), and two searches agree within 5%.
func TestSearchMatchesScan(t *testing.T) {
	if os.Getenv(fullEnv) == "" && os.Getenv(sleepURLEnv) == "" {
		t.Skip("set " + fullEnv + "=1 (make test-capacity): two minutes of steps")
	}
	srv := sleepServer(t)
	t.Logf("server: %s, SLO %s", srv.describe, srv.slo)
	slo, err := ParseSLO([]string{srv.slo})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{SLO: slo, Repeats: 1, StepTime: srv.step, Warmup: time.Duration(srv.warm) * time.Second,
		Progress: func(p Progress) { t.Log(ProgressText("ceiling", p)) }}
	run, _, err := bench.ParseArgs("run", srv.args, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := &EngineStepper{Spec: run, Warmup: srv.warm}
	var found []float64
	var peak float64
	for run := range 2 {
		res, err := Search(t.Context(), "ceiling", st, o)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		(&Report{Workload: "sql", SLO: res.SLO, Bracket: 0.02, Control: "ceiling", Targets: []*Result{res}}).WriteText(&b)
		t.Logf("search %d:\n%s", run+1, b.String())
		if res.Outcome != Found {
			t.Fatalf("search %d: got outcome %q (%s), want %q", run+1, res.Outcome, res.Message, Found)
		}
		found = append(found, res.Capacity)
		peak = res.Peak
	}
	// The scan: every rate in 2% steps of the peak from 10% below the
	// lower answer to 10% above the higher. A rate counts when it holds
	// twice, as the search's answer must (its step and a repeat): one
	// lucky step near the ceiling is noise. The highest rate scanned
	// must fail, else the scan did not reach the ceiling.
	s := &search{st: st, o: o, res: &Result{}}
	best, lastHeld := 0.0, false
	for rate := 0.9 * min(found[0], found[1]); rate <= 1.1*max(found[0], found[1]); rate += 0.02 * peak {
		// A scan that would run past the test's time stops with what it
		// measured, rather than dying with the time limit's panic.
		if dl, ok := t.Deadline(); ok && time.Until(dl) < 15*time.Second {
			t.Fatalf("the scan ran out of the test's time at %.1f/s (highest rate held twice so far %.1f/s; searches %.1f/s and %.1f/s)",
				rate, best, found[0], found[1])
		}
		held := true
		for range 2 {
			st, err := s.step(t.Context(), "scan", rate)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("scan %.1f/s: achieved %.1f/s p95 %.1fms held %v %v", rate, st.Achieved, st.P95MS, st.Held, st.Why)
			if held = st.Held; !held {
				break
			}
		}
		if held {
			best = rate
		}
		lastHeld = held
	}
	if best == 0 {
		t.Fatalf("the scan found no rate that held from 90%% of the lower answer %.1f/s", min(found[0], found[1]))
	}
	if lastHeld {
		t.Fatalf("the scan's highest rate held: it did not reach the ceiling above %.1f/s", best)
	}
	t.Logf("scan: highest rate held twice %.1f/s; searches %.1f/s and %.1f/s", best, found[0], found[1])
	for i, c := range found {
		if d := math.Abs(c/best - 1); d > 0.05 {
			t.Errorf("search %d: got %.1f/s, want within 5%% of the scan's %.1f/s (off by %.1f%%)", i+1, c, best, 100*d)
		}
	}
	if d := math.Abs(found[1]/found[0] - 1); d > 0.05 {
		t.Errorf("two searches: got %.1f/s and %.1f/s, want them within 5%% (off by %.1f%%)", found[0], found[1], 100*d)
	}
}

// fickle is a target whose every rate up to 100/s holds the first time
// it is run and fails clearly after: no answer is ever confirmed.
type fickle struct{ calls map[float64]int }

func (f *fickle) Step(_ context.Context, rate float64, seconds int, _ func([]int64) bool) (Measure, error) {
	f.calls[rate]++
	m := Measure{Offered: rate, Achieved: rate, Due: rate, Events: 1000, Latency: flat(1000),
		Backlog: []int64{0, 0}, Span: time.Duration(seconds) * time.Second}
	switch {
	case rate == 0:
		m.Achieved, m.Offered, m.Due = 80, 0, 0
	case rate > 100 || f.calls[rate] > 1:
		m.Achieved, m.Backlog = 0.9*rate, []int64{0, int64(rate)}
	}
	return m, nil
}

// TestUnconfirmedSaysWhatHeld: a search that confirms no rate says at
// which rates the SLO held in single steps.
func TestUnconfirmedSaysWhatHeld(t *testing.T) {
	slo, err := ParseSLO([]string{"p95<=40ms"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Search(t.Context(), "fickle", &fickle{calls: map[float64]int{}}, Options{SLO: slo, Repeats: 1, StepTime: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	lo, hi, _ := heldRange(res.Steps)
	want := "the SLO held at " + rangeText(lo, hi) + " in single steps but not on every repeat"
	if res.Outcome != Unconfirmed || lo == 0 || !strings.Contains(res.Message, want) {
		t.Errorf("got %s (%s), want %s holding %q", res.Outcome, res.Message, Unconfirmed, want)
	}
}

// TestNoisy: steps at one rate whose verdicts disagree and whose
// percentile ranged over four times its lowest make a search
// inconclusive; the rise of latency across a bracket does not.
func TestNoisy(t *testing.T) {
	slo, err := ParseSLO([]string{"p99<=10ms"})
	if err != nil {
		t.Fatal(err)
	}
	at := func(phase string, rate, p99ms float64) Step {
		v := time.Duration(p99ms * float64(time.Millisecond))
		return Step{Phase: phase, Offered: rate, Held: v <= 10*time.Millisecond, Seen: []Seen{{Limit: slo.Latency[0], Value: v}}}
	}
	for _, tc := range []struct {
		name  string
		steps []Step
		want  string // "" not noisy
	}{
		{"stalls of a quiet 2-core VM", []Step{{Phase: "probe"}, at("search", 756, 60), at("search", 490, 2.65), at("search", 612, 30),
			at("confirm", 490, 4.17), at("confirm", 490, 14.53), at("search", 470.4, 3), at("search", 490, 9.41), at("confirm", 490, 47.9)},
			"p99 at 490.0/s ranged 2.65-47.9 ms over 5 steps (3 held)"},
		{"the bracket's two ends", []Step{at("search", 100, 3), at("search", 98.5, 2), at("search", 99.2, 40), at("confirm", 98.5, 2.5), at("confirm", 98.5, 2.2)}, ""},
		{"repeats that all held", []Step{at("search", 100, 1), at("confirm", 100, 8), at("confirm", 100, 9)}, ""},
		{"two steps only", []Step{at("search", 100, 1), at("confirm", 100, 40), at("again", 100, 30)}, ""},
		{"a narrow spread", []Step{at("search", 100, 8), at("confirm", 100, 11), at("confirm", 100, 9)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Noisy(tc.steps, slo, 0.02)
			if ok != (tc.want != "") || got != tc.want {
				t.Errorf("got %q (%v), want %q", got, ok, tc.want)
			}
		})
	}
}

// stalling is a target that holds every rate up to 100/s but whose host
// stalls on every third step at a rate: its p99 is then 48ms.
type stalling struct{ calls map[float64]int }

func (s *stalling) Step(_ context.Context, rate float64, seconds int, _ func([]int64) bool) (Measure, error) {
	s.calls[rate]++
	m := Measure{Offered: rate, Achieved: rate, Due: rate, Events: 1000, Latency: flat(1000),
		Backlog: []int64{0, 0}, Span: time.Duration(seconds) * time.Second}
	switch {
	case rate == 0:
		m.Achieved, m.Offered, m.Due = 80, 0, 0
	case rate > 100:
		m.Achieved, m.Backlog = 0.9*rate, []int64{0, int64(rate)}
	case s.calls[rate]%3 == 0:
		m.Latency = histogram.New()
		for range 1000 {
			m.Latency.Record(48 * time.Millisecond)
		}
	}
	return m, nil
}

// TestSearchInconclusive: a search whose steps at one rate disagree by
// the host's stalls answers inconclusive, with no capacity, an exit of
// the tool's (Unfinished) and not a difference (Shortfall).
func TestSearchInconclusive(t *testing.T) {
	slo, err := ParseSLO([]string{"p99<=20ms"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Search(t.Context(), "stalling", &stalling{calls: map[float64]int{}}, Options{SLO: slo, Repeats: 2, StepTime: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != Inconclusive || res.Capacity != 0 || !strings.Contains(res.Message, "inconclusive: p99 at ") ||
		!strings.Contains(res.Message, "ranged 1-48 ms over 3 steps (2 held)") {
		t.Fatalf("got %s %.1f/s (%s), want inconclusive, no capacity, p99 ranged 1-48 ms over 3 steps", res.Outcome, res.Capacity, res.Message)
	}
	r := &Report{Control: "stalling", Targets: []*Result{res}}
	if r.Unfinished() == nil || r.Shortfall() != "" {
		t.Errorf("got unfinished %v, shortfall %q, want unfinished (exit 1) and no shortfall (not exit 3)", r.Unfinished(), r.Shortfall())
	}
}
