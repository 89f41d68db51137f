package monitor

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/flavour"
)

// TiDB keeps "no limit" as max_connections = 0 and max_prepared_stmt_count
// = -1: neither stops a run there, and both still do on MariaDB.
func TestCheckLimitsNoLimit(t *testing.T) {
	vars := map[string]float64{"max_connections": 0, "max_prepared_stmt_count": -1}
	status := map[string]float64{"Threads_connected": 0}
	n := Needs{Threads: 4, PreparedPerThread: 1, PreparedExact: true}
	if got := CheckLimits(vars, status, n, flavour.TiDB); len(got) != 0 {
		t.Errorf("TiDB: got %v, want no finding", got)
	}
	if got := CheckLimits(vars, status, n, flavour.MariaDB); len(got) != 2 {
		t.Errorf("MariaDB: got %v, want max_connections and max_prepared_stmt_count", got)
	}
}

func TestCheckLimits(t *testing.T) {
	vars := map[string]float64{"max_connections": 151, "max_prepared_stmt_count": 16382, "table_open_cache": 2000, "open_files_limit": 1024}
	status := map[string]float64{"Threads_connected": 5, "Prepared_stmt_count": 100}
	cases := []struct {
		name  string
		needs Needs
		want  map[string]bool // check -> stop
	}{
		{"fits", Needs{Threads: 16, PreparedPerThread: 20, PreparedExact: true, Tables: 10}, map[string]bool{}},
		{"too many connections", Needs{Threads: 147}, map[string]bool{"max_connections": true}},
		{"exactly the free connections", Needs{Threads: 146}, map[string]bool{}},
		{"prepared statements, stated", Needs{Threads: 100, PreparedPerThread: 200, PreparedExact: true}, map[string]bool{"max_prepared_stmt_count": true}},
		{"prepared statements, estimated", Needs{Threads: 100, PreparedPerThread: 200}, map[string]bool{"max_prepared_stmt_count": false}},
		{"table cache", Needs{Threads: 100, Tables: 32}, map[string]bool{"table_open_cache": false}},
		{"open files", Needs{Threads: 140, Tables: 900}, map[string]bool{"open_files_limit": false, "table_open_cache": false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]bool{}
			for _, f := range CheckLimits(vars, status, tc.needs, flavour.MariaDB) {
				got[f.Check] = f.Stop
				if f.Message == "" || f.Fix == "" {
					t.Errorf("%s: got an empty message or fix: %+v", f.Check, f)
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("got findings %v, want %v", got, tc.want)
			}
			for k, stop := range tc.want {
				if g, ok := got[k]; !ok || g != stop {
					t.Errorf("%s: got stop=%v (found %v), want stop=%v", k, g, ok, stop)
				}
			}
		})
	}
}

func TestStops(t *testing.T) {
	fs := []Finding{{Check: "table_open_cache", Message: "m", Fix: "f"}, {Check: "max_connections", Stop: true, Message: "too few", Fix: "SET GLOBAL max_connections = 300"}}
	err := Stops(fs)
	if !errors.Is(err, ErrPreflight) {
		t.Fatalf("got %v, want ErrPreflight", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "SET GLOBAL max_connections = 300") || strings.Contains(msg, "table_open_cache") {
		t.Errorf("got %q, want the stopping finding with its fix only", msg)
	}
	if err := Stops(fs[:1]); err != nil {
		t.Errorf("warnings only: got %v, want nil", err)
	}
}

func TestPreflightAgainstServer(t *testing.T) {
	db, _ := openTest(t)
	ctx := context.Background()
	fs, err := Preflight(ctx, db, Needs{Threads: 4, PreparedPerThread: 2, Tables: 1}, flavour.MariaDB)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 0 {
		t.Errorf("small run: got %v, want no findings", fs)
	}
	fs, err = Preflight(ctx, db, Needs{Threads: 1 << 20, Tables: 1}, flavour.MariaDB)
	if err != nil {
		t.Fatal(err)
	}
	if err := Stops(fs); err == nil || !strings.Contains(err.Error(), "max_connections") {
		t.Errorf("a million threads: got %v, want a max_connections stop", err)
	}
}
