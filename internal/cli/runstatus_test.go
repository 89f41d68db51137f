package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/store"
)

// TestRunExitFollowsStatus: run's exit code is the status the run is
// stored with (result.StatusOf), whether or not --store keeps it. A run
// whose connections were lost and came back is stored as failed and exits
// 1, saying why; so is one in which nothing completed (its threads waited
// on a lock the whole run), never a silent 0. Before, both exited 0, the
// first stored as failed, the second as ok.
func TestRunExitFollowsStatus(t *testing.T) {
	tests := []struct {
		name     string
		db       string
		workload string
		// during is done to the server while the run runs, once its first
		// interval is out (or, with before, before it starts); it returns
		// what undoes it.
		before bool
		during func(t *testing.T, url, db string) func()
		why    string // in standard error and the stored reason
	}{
		{
			name: "connections lost and back", db: "exitlost", workload: "oltp_point_select",
			during: func(t *testing.T, url, db string) func() {
				if n := killConns(t, url, db); n == 0 {
					t.Fatalf("no connection to kill mid-run")
				}
				return func() {}
			},
			why: "the server was lost during the run",
		},
		{
			name: "nothing completed", db: "exitstuck", workload: "oltp_update_non_index", before: true,
			during: func(t *testing.T, url, db string) func() {
				// A lock no update gets past: every thread waits on it
				// for the whole run.
				ctx := context.Background()
				conn, err := adminDB(t, url).Conn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := conn.ExecContext(ctx, "LOCK TABLES "+db+".sbtest1 READ"); err != nil {
					t.Fatal(err)
				}
				return func() {
					conn.ExecContext(ctx, "UNLOCK TABLES")
					conn.Close()
				}
			},
			why: "nothing completed: 0 transactions (events) in",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url := freshDB(t, tc.db)
			dbPath := filepath.Join(t.TempDir(), "runs.db")
			undo := func() {}
			if tc.before {
				undo = tc.during(t, url, tc.db)
			}
			var out, errOut syncBuffer
			done := make(chan int, 1)
			go func() {
				done <- runCLIWith(context.Background(), &out, &errOut, "run", tc.workload, "--target="+url, "--tables=1", "--table-size=2000",
					"--threads=2", "--time=3", "--report-interval=1", "--monitor=off", "--store="+dbPath)
			}()
			if !tc.before {
				deadline := time.Now().Add(60 * time.Second)
				for !strings.Contains(out.String(), "[ 1s ]") {
					if time.Now().After(deadline) {
						t.Fatalf("no interval line within 60s:\n%s\n%s", out.String(), errOut.String())
					}
					time.Sleep(20 * time.Millisecond)
				}
				undo = tc.during(t, url, tc.db)
			}
			var code int
			select {
			case code = <-done:
			case <-time.After(2 * time.Minute):
				t.Fatal("the run did not end")
			}
			undo()
			st, err := store.Open(context.Background(), dbPath)
			if err != nil {
				t.Fatal(err)
			}
			runs, err := st.LooseRuns(context.Background(), nil)
			st.Close()
			if err != nil || len(runs) != 1 {
				t.Fatalf("got %d stored runs, %v; want 1\n%s\n%s", len(runs), err, out.String(), errOut.String())
			}
			if runs[0].Status != store.RunFailed || !strings.Contains(runs[0].Error, tc.why) {
				t.Errorf("stored: got status %q (%s), want failed: %s", runs[0].Status, runs[0].Error, tc.why)
			}
			if code != ExitFailure {
				t.Errorf("exit code: got %d, want %d (the run is stored as %s)\n%s\n%s", code, ExitFailure, runs[0].Status, out.String(), errOut.String())
			}
			if !strings.Contains(errOut.String(), "shakedown: run failed: "+tc.why) {
				t.Errorf("standard error: got\n%s\nwant it to say the run failed: %s", errOut.String(), tc.why)
			}
		})
	}
}
