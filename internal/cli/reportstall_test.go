package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/store"
)

// TestReportStall prints a stored run's stall captures in full: all of a
// long processlist and the InnoDB status text that the run's summary
// leaves out.
func TestReportStall(t *testing.T) {
	st, path := tempStore(t)
	ctx := context.Background()
	pl := result.StallSection{Name: "processlist", Columns: []string{"Id", "Info"}}
	for i := 0; i < 20; i++ {
		pl.Rows = append(pl.Rows, []string{fmt.Sprint(100 + i), "UPDATE sbtest1 SET k=k+1 WHERE id=1"})
	}
	stall := result.Stall{At: time.Date(2026, 11, 25, 10, 0, 5, 0, time.UTC), AtS: 5, Reasons: []string{"threads_running>2 for 2s: threads_running 9"},
		Blockers: []string{"41 (RUNNING since 10:00:01), blocking 19 sessions"},
		Sections: []result.StallSection{pl, {Name: "innodb_status", Text: "TRANSACTIONS\n---TRANSACTION 99, ACTIVE 4 sec\n"}}}
	res := &result.Result{SchemaVersion: result.SchemaVersion, Workload: "hotrow", Threads: 4, QPS: 100, Errors: result.Errors{ByCode: map[string]int64{}},
		Stalls: []result.Stall{stall}}
	with, err := st.AddRun(ctx, &store.Run{Target: "a", Workload: "hotrow", Threads: 4, Status: store.RunOK, StartedAt: time.Now(), Result: res})
	if err != nil {
		t.Fatal(err)
	}
	res2 := *res
	res2.Stalls = nil
	without, err := st.AddRun(ctx, &store.Run{Target: "a", Workload: "hotrow", Threads: 4, Status: store.RunOK, StartedAt: time.Now(), Result: &res2})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"text in full", []string{"--stall", fmt.Sprint(with)}, 0, []string{fmt.Sprintf("Run %d (made on its own): a, hotrow, 4 threads", with), "Stall captures: 1",
			"blocking, waiting for nothing: 41", "      119 | UPDATE", "      ---TRANSACTION 99, ACTIVE 4 sec"}},
		{"json", []string{"--stall", fmt.Sprint(with), "--format", "json"}, 0, []string{`"run": ` + fmt.Sprint(with), `"innodb_status"`}},
		{"run without captures", []string{"--stall", fmt.Sprint(without)}, ExitFailure, []string{"no stall captures: it ran without --stall, or no trigger held"}},
		{"no such run", []string{"--stall", "999"}, ExitUsage, []string{"run 999", "not found"}},
		{"not alone", []string{"--stall", fmt.Sprint(with), "--list"}, ExitUsage, []string{"--stall prints one run's captures"}},
		{"format it lacks", []string{"--stall", fmt.Sprint(with), "--format", "html"}, ExitUsage, []string{`--format "html": want one of text, json`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := runEnv(ctx, nil, append([]string{"report", "--store", path}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit: got %d, want %d (%s)", code, tc.code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(out+stderr, w) {
					t.Errorf("got no %q in\n%s%s", w, out, stderr)
				}
			}
			if tc.name == "json" && !json.Valid([]byte(out)) {
				t.Errorf("got invalid JSON:\n%s", out)
			}
		})
	}
}
