package capacity

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/bench"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/stats"
)

// Where the full tests find servers of their own: the bundle's device
// script (scripts/device-capacity.sh) starts them, pinned, and names them
// here; without these the tests start sandboxes.
const (
	durableURLEnv = "SHAKEDOWN_TEST_CAPACITY_DURABLE_URL"
	relaxedURLEnv = "SHAKEDOWN_TEST_CAPACITY_RELAXED_URL"
	// rowsEnv sets the rows of each of the four tables (default 10000).
	rowsEnv = "SHAKEDOWN_TEST_CAPACITY_ROWS"
)

// The two servers differ in durability alone. Both write a binary log and
// run the thread pool, as the vars bisect test's do, so that the cost of
// syncing the redo and binary logs at every commit shows at 16 threads on
// a small machine.
var (
	durableCommon = []string{"log_bin=ON", "thread_handling=pool-of-threads"}
	durableSet    = []string{"innodb_flush_log_at_trx_commit=1", "sync_binlog=1"}
	relaxedSet    = []string{"innodb_flush_log_at_trx_commit=0", "sync_binlog=0"}
)

// TestDurableAgainstRelaxed: the relaxed server's capacity for
// oltp_write_only is "faster" than the durable one's, with a 95% interval
// of the ratio that leaves out 1, from four searches a side taken in turn.
func TestDurableAgainstRelaxed(t *testing.T) {
	durable, relaxed := os.Getenv(durableURLEnv), os.Getenv(relaxedURLEnv)
	if durable == "" || relaxed == "" {
		if os.Getenv(fullEnv) == "" {
			t.Skip("set " + fullEnv + "=1 (make test-capacity): eight searches")
		}
		insts := sandboxtest.StartAll(t, append(append([]string{}, durableCommon...), durableSet...),
			append(append([]string{}, durableCommon...), relaxedSet...))
		durable, relaxed = insts[0].URL(), insts[1].URL()
	}
	rows := 10000
	if s := os.Getenv(rowsEnv); s != "" {
		var err error
		if rows, err = strconv.Atoi(s); err != nil || rows < 1 {
			t.Fatalf("%s=%q: want a number of rows >= 1", rowsEnv, s)
		}
	}
	data := []string{"--tables=4", "--table-size=" + strconv.Itoa(rows)}
	for _, url := range []string{durable, relaxed} {
		job, err := bench.Parse("prepare", append([]string{"oltp_write_only", "--target=" + url, "--threads=4"}, data...), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := job.Prepare(t.Context(), bench.PrepareOptions{}); err != nil {
			t.Fatalf("prepare on %s: %v", url, err)
		}
	}
	// Deadlocks among 16 threads on four tables are errors of the
	// workload, not of the server's capacity: a few are allowed.
	slo, err := ParseSLO([]string{"p95<=100ms", "errors<=1%"})
	if err != nil {
		t.Fatal(err)
	}
	// A 10% bracket and no repeats: the comparison rests on the spread
	// of four searches a side, not on how finely each placed its rate.
	// No warm-up: every step starts from fresh connections and no backlog,
	// and the tables sit in the buffer pool after the first.
	cfg := Config{Args: append([]string{"oltp_write_only", "--threads=16", "--rand-seed=7"}, data...),
		Targets: []string{"durable=" + durable, "relaxed=" + relaxed}, Warmup: 0, Time: 1, Searches: stats.MinRunsFor95,
		Options: Options{SLO: slo, Bracket: 0.10}}
	targets, err := Plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(t.Context(), cfg, targets, func(target string, p Progress) { t.Log(ProgressText(target, p)) })
	var b strings.Builder
	if rep != nil {
		rep.WriteText(&b)
	}
	t.Logf("report:\n%s", b.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Targets {
		if r.Outcome != Found {
			t.Fatalf("%s, search %d: got outcome %q (%s), want %q", r.Target, r.Search, r.Outcome, r.Message, Found)
		}
	}
	if len(rep.Versus) != 1 {
		t.Fatalf("comparisons: got %d, want 1", len(rep.Versus))
	}
	v := rep.Versus[0]
	if v.State != stats.Faster || !v.Compare.Interval || v.Low <= 1 {
		t.Errorf("relaxed against durable: got %s (%s), want faster with an interval above 1", v.Text(), v.State)
	}
}
