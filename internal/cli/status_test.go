package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/bench"
	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/runner"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/sweep"
)

// killConns kills every connection to database db but the caller's and
// returns how many it killed. A connection that ends between the look and
// the KILL is not counted.
func killConns(t *testing.T, url, db string) int {
	t.Helper()
	admin := adminDB(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := admin.QueryContext(ctx, "SELECT id FROM information_schema.processlist WHERE db = ? AND id <> CONNECTION_ID()", db)
	if err != nil {
		t.Errorf("processlist: %v", err)
		return 0
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Errorf("processlist: %v", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	killed := 0
	for _, id := range ids {
		if _, err := admin.ExecContext(ctx, fmt.Sprintf("KILL CONNECTION %d", id)); err == nil {
			killed++
		}
	}
	return killed
}

// TestLostConnectionsSameStatus: a run whose connections are killed
// mid-run, and which reconnects and runs its course, is stored with the
// same status whether run --store or a sweep ran it: failed, with the
// reason, its figures kept. Before, run --store stored it as ok (and
// reports counted it) while a sweep stored it as failed (and reports left
// it out), and a sweep's verdict hung on which error number the kill
// gave.
func TestLostConnectionsSameStatus(t *testing.T) {
	const name = "lostconn"
	url := freshDB(t, name)
	opts := []string{"--tables=1", "--table-size=2000", "--threads=2"}

	// run --store, connections killed once the first interval is out.
	dbPath := filepath.Join(t.TempDir(), "run.db")
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- runCLIWith(context.Background(), &out, &errOut, append([]string{"run", "oltp_point_select", "--target=" + url,
			"--time=3", "--report-interval=1", "--monitor=off", "--store=" + dbPath}, opts...)...)
	}()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(out.String(), "[ 1s ]") {
		if time.Now().After(deadline) {
			t.Fatalf("run: no interval line within 60s:\n%s\n%s", out.String(), errOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := killConns(t, url, name); n == 0 {
		t.Fatalf("run: no connection to kill mid-run")
	}
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("run: did not end")
	}
	st, err := store.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.LooseRuns(context.Background(), nil)
	st.Close()
	if err != nil || len(runs) != 1 {
		t.Fatalf("run --store: got %d runs, %v; want 1\n%s\n%s", len(runs), err, out.String(), errOut.String())
	}
	alone := runs[0]
	if !strings.Contains(out.String(), "as failed: the server was lost during the run") {
		t.Errorf("run --store: got\n%s\nwant it to say the result is stored as failed, and why", out.String())
	}

	// The same run as a sweep's one step, connections killed at its
	// first interval.
	path := writePlan(t, fmt.Sprintf(`targets:
  - {name: %s, url: "%s", role: control}
workloads:
  - name: oltp_point_select
    options: {tables: 1, table-size: 2000}
threads: [2]
time: 3
repeats: 1
prepare: false
`, name, url))
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
	st, err = store.Open(context.Background(), filepath.Join(t.TempDir(), "sweep.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var once sync.Once
	killed := 0
	sum, err := sweep.Run(context.Background(), p, envs, sweep.Options{Store: st, OnInterval: func(plan.Step, runner.Interval) {
		once.Do(func() { killed = killConns(t, url, name) })
	}})
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}
	if killed == 0 {
		t.Fatalf("sweep: no connection to kill mid-step")
	}
	d, err := st.Load(context.Background(), sum.SweepID)
	if err != nil || len(d.Runs) != 1 {
		t.Fatalf("sweep: got %d runs, %v; want 1", len(d.Runs), err)
	}
	swept := d.Runs[0]

	for _, r := range []struct {
		how string
		run store.Run
	}{{"run --store", alone}, {"sweep", swept}} {
		if r.run.Result == nil || r.run.Result.Reconnects < 1 || r.run.Result.Queries.Total == 0 {
			t.Errorf("%s: got result %+v, want one that reconnected and measured", r.how, r.run.Result)
			continue
		}
		t.Logf("%s: %d reconnects, errors by code %v", r.how, r.run.Result.Reconnects, r.run.Result.Errors.ByCode)
		if r.run.Status != store.RunFailed || !strings.Contains(r.run.Error, "the server was lost during the run") {
			t.Errorf("%s: got status %q (%s), want failed: the server was lost during the run", r.how, r.run.Status, r.run.Error)
		}
	}
	if alone.Status != swept.Status {
		t.Errorf("got %q under run --store and %q in a sweep, want the same", alone.Status, swept.Status)
	}
}
