package sweep

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/bench"
	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/target"
)

// TestDataKeptAsTold runs several workloads on one database with prepare:
// replace and cleanup: false: a workload's prepare drops only its own
// tables (and says so), data that can stand beside it stays, a collision
// is said, a table of the user's is untouched, and a sql workload that
// prepares nothing is not said to be prepared.
func TestDataKeptAsTold(t *testing.T) {
	url := database(t, sandboxtest.URL(t), "kept_told")
	tg, err := target.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	db, err := tg.Open(tg.Endpoints()[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{"CREATE TABLE keepme (id INT PRIMARY KEY)", "INSERT INTO keepme VALUES (1)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	sqlFile := filepath.Join(t.TempDir(), "orders.sql")
	if err := os.WriteFile(sqlFile, []byte("SELECT 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf(`targets:
  - {name: a, url: %s, role: control}
workloads:
  - name: oltp_read_only
    options: {tables: 1, table-size: 100}
  - name: sql
    label: orders
    options: {file: %s}
  - hotrow
  - name: oltp_point_select
    options: {tables: 2, table-size: 50}
threads: [1]
time: 1
prepare: replace
prepare_threads: 1
cleanup: false
`, url, sqlFile)
	p, err := plan.Parse(filepath.Join(t.TempDir(), "plan.yaml"), []byte(src), func(string) string { return "" }, bench.Grammar{})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	st := openStore(t)
	var progress bytes.Buffer
	sum, err := Run(context.Background(), p, check(t, p), Options{Store: st, Progress: &progress, Version: "test"})
	out := progress.String()
	if err != nil || sum.OK != 4 {
		t.Fatalf("Run: got %v, %+v; want 4 ok\n%s", err, sum, out)
	}
	got := tables(t, url)
	slices.Sort(got)
	if want := []string{"hotrow", "keepme", "sbtest1", "sbtest2"}; !slices.Equal(got, want) {
		t.Errorf("tables after the sweep: got %v, want %v\n%s", got, want, out)
	}
	tests := []struct {
		name string
		line string
		want bool
	}{
		{"read_only prepared", "prepared oltp_read_only data on a (created sbtest1)", true},
		{"sql prepares nothing", "orders prepares no data: it runs on each target's database as it is", true},
		{"sql not said prepared", "prepared orders data", false},
		{"hotrow beside read_only", "keeping oltp_read_only data on a (sbtest1): hotrow's tables (hotrow) stand beside it", true},
		{"hotrow prepared", "prepared hotrow data on a (created hotrow)", true},
		{"collision said", "oltp_read_only and oltp_point_select both use sbtest1 on a: oltp_point_select's prepare replaces them", true},
		{"hotrow kept for point_select", "keeping hotrow data on a (hotrow): oltp_point_select's tables (sbtest1, sbtest2) stand beside it", true},
		{"drop said", "dropping on a before preparing oltp_point_select: sbtest1 (oltp_read_only's data, made by this sweep)", true},
		{"point_select prepared", "prepared oltp_point_select data on a (created sbtest1, sbtest2)", true},
		{"hotrow never dropped", "dropping on a before preparing hotrow", false},
		{"user's table never named", "keepme", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Contains(out, tc.line); got != tc.want {
				t.Errorf("progress has %q: got %v, want %v\n%s", tc.line, got, tc.want, out)
			}
		})
	}
	d, err := st.Load(context.Background(), sum.SweepID)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, n := range d.Notes {
		kinds = append(kinds, n.Kind+" "+n.Workload)
	}
	want := []string{store.NotePrepared + " oltp_read_only", store.NotePrepared + " hotrow", store.NoteDropped + " oltp_point_select", store.NotePrepared + " oltp_point_select"}
	if !slices.Equal(kinds, want) {
		t.Errorf("notes: got %q, want %q", kinds, want)
	}
}
