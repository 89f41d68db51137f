package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// layout1Runs is the runs table as the first layout made it, before the
// degraded column.
const layout1Runs = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta VALUES ('schema_version', '1');
CREATE TABLE runs (
	id INTEGER PRIMARY KEY AUTOINCREMENT, sweep_id INTEGER, step INTEGER NOT NULL DEFAULT 0,
	target TEXT NOT NULL, role TEXT NOT NULL DEFAULT '', workload TEXT NOT NULL, threads INTEGER NOT NULL,
	repeat_no INTEGER NOT NULL DEFAULT 1, command TEXT NOT NULL DEFAULT '', status TEXT NOT NULL,
	error TEXT NOT NULL DEFAULT '', started_at TEXT NOT NULL, wall_s REAL NOT NULL DEFAULT 0,
	qps REAL, tps REAL, lat_avg_ms REAL, lat_p95_ms REAL, lat_p99_ms REAL, lat_max_ms REAL, errors INTEGER, result TEXT
);
INSERT INTO runs(target, workload, threads, status, started_at) VALUES ('old', 'oltp_read_write', 4, 'ok', '2025-01-01T00:00:00Z');
`

// A store written before the degraded column opens, keeps its runs (not
// degraded), and records degraded runs from then on.
func TestMigrationOnlyAdds(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(layout1Runs); err != nil {
		t.Fatal(err)
	}
	db.Close()

	for round := 0; round < 2; round++ { // the second opening finds the column there
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("open a layout-1 store: %v", err)
		}
		if round == 0 {
			if _, err := s.AddRun(ctx, &Run{Target: "new", Workload: "oltp_read_write", Threads: 4, Status: RunFailed, Degraded: true, StartedAt: time.Now()}); err != nil {
				t.Fatal(err)
			}
		}
		runs, err := s.LooseRuns(ctx, nil)
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 2 || runs[0].Target != "old" || runs[0].Degraded || runs[1].Target != "new" || !runs[1].Degraded {
			t.Errorf("got %+v, want the old run not degraded and the new one degraded", runs)
		}
	}
}

// A baseline saved before its witnesses were kept reads back without
// them, and the store then keeps the witnesses of new ones.
func TestMigrationBaselineWitnesses(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(layout1Runs + `
CREATE TABLE baselines (name TEXT PRIMARY KEY, created_at TEXT NOT NULL, target TEXT NOT NULL, source TEXT NOT NULL, run_ids TEXT NOT NULL DEFAULT '[]');
INSERT INTO baselines VALUES ('old', '2025-01-01T00:00:00Z', 'old', 'runs all', '[1]');
`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("open a store with a baseline table of the first layout: %v", err)
	}
	defer s.Close()
	if err := s.SaveBaseline(ctx, &Baseline{Name: "new", Target: "old", Source: "runs all", RunIDs: []int64{1}, WitnessRunIDs: []int64{2, 3}}); err != nil {
		t.Fatal(err)
	}
	bs, err := s.Baselines(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 2 || !reflect.DeepEqual(bs[0].WitnessRunIDs, []int64{2, 3}) || len(bs[1].WitnessRunIDs) != 0 {
		t.Errorf("got %+v, want the new baseline with runs 2 and 3 as witnesses and the old one without", bs)
	}
}
