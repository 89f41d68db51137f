package capacity

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox/gmstest"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	_ "github.com/shakedown/shakedown/internal/workload/all"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// sleepServer is a go-mysql-server, which runs one statement at a time,
// and the run line of a workload whose every event sleeps sleep seconds on
// the server: a ceiling of about 1/sleep events per second, whatever the
// client's threads.
func sleepServer(t *testing.T, sleep string) []string {
	t.Helper()
	srv := gmstest.Start(t)
	file := filepath.Join(t.TempDir(), "sleep.sql")
	if err := os.WriteFile(file, []byte("SELECT SLEEP("+sleep+");\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"sql", "--file=" + file, "--target=" + srv.URL, "--threads=16", "--rand-seed=7"}
}

// fullEnv runs the searches of done-when 1 against a brute-force scan:
// two minutes of steps, so not part of make test (make test-capacity).
const fullEnv = "SHAKEDOWN_TEST_CAPACITY_FULL"

// TestSearchMatchesScan: against a server with a known ceiling (one
// statement at a time, each sleeping 10ms: at most 100 events/s), the
// search finds a rate within 5% of the highest rate at which a scan in 2%
// steps holds (twice), and two searches agree within 5%.
func TestSearchMatchesScan(t *testing.T) {
	if os.Getenv(fullEnv) == "" {
		t.Skip("set " + fullEnv + "=1 (make test-capacity): two minutes of steps")
	}
	args := sleepServer(t, "0.01")
	slo, err := ParseSLO([]string{"p95<=200ms"})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{SLO: slo, Repeats: 1, StepTime: 2 * time.Second, Warmup: time.Second}
	st := &EngineStepper{Args: args, Warmup: 1}
	var found []float64
	var peak float64
	for run := range 2 {
		res, err := Search(t.Context(), "gms", st, o)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		(&Report{Workload: "sql", SLO: res.SLO, Bracket: 0.02, Control: "gms", Targets: []*Result{res}}).WriteText(&b)
		t.Logf("search %d:\n%s", run+1, b.String())
		if res.Outcome != Found {
			t.Fatalf("search %d: got outcome %q (%s), want %q", run+1, res.Outcome, res.Message, Found)
		}
		found = append(found, res.Capacity)
		peak = res.Peak
	}
	// The scan: every rate from 84% to 110% of the peak in 2% steps. A
	// rate counts when it holds twice, as the search's answer must (its
	// step and a repeat): one lucky step near the ceiling is noise.
	s := &search{st: st, o: o, res: &Result{}}
	best := 0.0
	for share := 0.84; share <= 1.10; share += 0.02 {
		rate := peak * share
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
	}
	if best == 0 {
		t.Fatalf("the scan found no rate that held from 80%% of the peak %.1f/s", peak)
	}
	for i, c := range found {
		if d := math.Abs(c/best - 1); d > 0.05 {
			t.Errorf("search %d: got %.1f/s, want within 5%% of the scan's %.1f/s (off by %.1f%%)", i+1, c, best, 100*d)
		}
	}
	if d := math.Abs(found[1]/found[0] - 1); d > 0.05 {
		t.Errorf("two searches: got %.1f/s and %.1f/s, want them within 5%% (off by %.1f%%)", found[0], found[1], 100*d)
	}
}
