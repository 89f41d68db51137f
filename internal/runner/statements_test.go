package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/client/fakeconn"
	"github.com/shakedown/shakedown/internal/clock"
	"github.com/shakedown/shakedown/internal/runner"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/workload"
	_ "github.com/shakedown/shakedown/internal/workload/sqlfile"
)

// sqlWorkload is the sql workload on a statement file holding src.
func sqlWorkload(t *testing.T, src string) workload.Opser {
	t.Helper()
	path := filepath.Join(t.TempDir(), "load.sql")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	meta, ok := workload.Lookup("sql")
	if !ok {
		t.Fatal("the sql workload is not registered")
	}
	g := meta.New()
	if err := g.(workload.Flagser).Flags().Parse([]string{"--file=" + path}); err != nil {
		t.Fatal(err)
	}
	if err := g.(workload.Validator).Validate(); err != nil {
		t.Fatal(err)
	}
	return g.(workload.Opser)
}

// A run's totals and its figures per statement are one count: a statement
// that fails is in both, and one abandoned when the run is cut off (still
// running 5 s past the time limit) is in neither. Before, the workload
// counted its statements' errors and the runner the run's, so a run whose
// statements hung reported "2013: 2" per statement and 0 errors in total.
func TestStatementErrorsAreTheRunsErrors(t *testing.T) {
	simulate(t, func(ctx context.Context, clk *clock.Fake) {
		load := sqlWorkload(t, "-- @name bad\nSELECT (SELECT 1 UNION SELECT 2);\n-- @name stuck\nSELECT repeat('a', 41943040);\n")
		start := clk.Now()
		srv := &fakeconn.Server{Latency: time.Millisecond, Handle: func(ctx context.Context, st fakeconn.Statement) (fakeconn.Result, error) {
			switch {
			case strings.Contains(st.SQL, "UNION"):
				return fakeconn.Result{}, fakeconn.ServerError(1242, "Subquery returns more than 1 row")
			case clk.Now().Sub(start) >= 500*time.Millisecond:
				<-ctx.Done() // a reply that never ends, until the run gives up on it
				return fakeconn.Result{}, fakeconn.ErrLost
			}
			return fakeconn.Result{Rows: true}, nil
		}}
		cfg := config(srv, clk, 2)
		cfg.Time = time.Second
		cfg.Policy.IgnoreAll = true
		o, err := runner.Run(ctx, cfg, load)
		if err != nil {
			t.Fatal(err)
		}
		if len(o.Statements) != 2 || !strings.Contains(o.Statements[0].Name, "bad") || !strings.Contains(o.Statements[1].Name, "stuck") {
			t.Fatalf("got statements %+v, want bad and stuck", o.Statements)
		}
		perStmt := map[uint16]int64{}
		for _, st := range o.Statements {
			for code, n := range st.Errors {
				perStmt[code] += n
			}
		}
		if len(perStmt) != len(o.Errors) {
			t.Errorf("errors per statement %v, in total %v: want the same", perStmt, o.Errors)
		}
		for code, n := range o.Errors {
			if perStmt[code] != n {
				t.Errorf("error %d: %d per statement, %d in total, want the same", code, perStmt[code], n)
			}
		}
		if o.Errors[1242] == 0 {
			t.Errorf("got errors %v, want 1242 counted", o.Errors)
		}
		if n := o.Statements[1].Errors[target.CRServerLost]; n != 0 {
			t.Errorf("the abandoned statements count %d errors, want 0", n)
		}
		if o.Statements[1].Latency.Count() == 0 {
			t.Error("stuck ran no statement before it stuck")
		}
	})
}
