package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/stats"
	"github.com/shakedown/shakedown/internal/store"
)

// TestLostUpdatesWrong: a cell in which one run of either side lost
// updates gets no verdict, however much faster its other runs were: every
// format says "wrong: lost updates".
func TestLostUpdatesWrong(t *testing.T) {
	for _, tc := range []struct {
		name, mark string
	}{
		{"a candidate's run", "relaxed"},
		{"the control's run", "durable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := fixture(5)
			const wl, th = "oltp_write_only", 1
			if got := Build(d).Workloads[wlIndex(wl)].Row("relaxed", th).Compared.Verdict; got != stats.Faster {
				t.Fatalf("before: got %s, want faster", got)
			}
			check := result.NewDataCheck("the stock (sum of num) of hotrow's 1 hot row", 1000000, 1000000-7776+580, 7776, -7776, 0, -1)
			for i := range d.Runs {
				run := &d.Runs[i]
				if run.Target == tc.mark && run.Workload == wl && run.Threads == th && run.Repeat == 1 {
					run.Result.DataCheck = check
					run.Status, run.Error = store.RunFailed, check.Finding()
				}
			}
			r := Build(d)
			row := r.Workloads[wlIndex(wl)].Row("relaxed", th)
			c := row.Compared
			if c.Verdict != Wrong {
				t.Errorf("verdict: got %q, want %q", c.Verdict, Wrong)
			}
			for name, f := range map[string]stats.Comparison{"qps": c.QPS, "tps": c.TPS, "p95": c.P95, "p99": c.P99} {
				if f.Note() != "wrong: lost updates" {
					t.Errorf("%s: got %q, want \"wrong: lost updates\"", name, f.Note())
				}
			}
			if other := r.Workloads[wlIndex(wl)].Row("relaxed", 4).Compared.Verdict; other != stats.Faster {
				t.Errorf("at 4 threads: got %s, want faster still", other)
			}
			for _, format := range []string{"text", "md", "csv", "json", "html"} {
				var b bytes.Buffer
				if err := Write(&b, format, r); err != nil {
					t.Fatal(err)
				}
				want := []string{"wrong: lost updates"}
				switch format {
				case "json":
					want = append(want, `"verdict": "wrong: lost updates"`, `"lost_update_runs": 1`)
				case "text", "md", "html":
					want = append(want, "LOST UPDATES: 580 of 7776")
				}
				for _, w := range want {
					if !strings.Contains(b.String(), w) {
						t.Errorf("%s: report lacks %q:\n%s", format, w, b.String())
					}
				}
			}
			if s := r.candidateSentence("relaxed", true); !strings.Contains(s, "wrong in 1 (lost updates; ") {
				t.Errorf("got sentence %q, want the cell named wrong", s)
			}
		})
	}
}
