package report

import (
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/stats"
	"github.com/shakedown/shakedown/internal/store"
)

func targetNamed(name, role string) store.Target { return store.Target{Name: name, Role: role} }

// TestPlainSummary: the report's first paragraph says in words what the
// comparison found.
func TestPlainSummary(t *testing.T) {
	cmp := func(st stats.State, ratio float64) *Comparison {
		return &Comparison{QPS: stats.Comparison{State: st, Ratio: ratio}, Ratio: ratio, Verdict: st}
	}
	type cell struct {
		wl      string
		threads int
		c       *Comparison
	}
	build := func(cells ...cell) *Report {
		r := &Report{Control: "durable", Threshold: 0.02}
		r.Targets = append(r.Targets, targetNamed("durable", "control"), targetNamed("relaxed", "candidate"))
		byName := map[string]*Workload{}
		for _, c := range cells {
			w := byName[c.wl]
			if w == nil {
				w = &Workload{Name: c.wl}
				byName[c.wl] = w
				r.Workloads = append(r.Workloads, w)
			}
			w.Threads = append(w.Threads, c.threads)
			w.Rows = append(w.Rows, &Row{Workload: c.wl, Target: "relaxed", Threads: c.threads, Compared: c.c})
		}
		return r
	}
	tests := []struct {
		name string
		r    *Report
		want string
	}{
		{"faster everywhere", build(cell{"oltp_write_only", 1, cmp(stats.Faster, 1.8)}, cell{"oltp_write_only", 4, cmp(stats.Faster, 1.8)}),
			"relaxed was faster than durable in all 2 comparisons, at 1.80x its QPS."},
		{"mixed", build(cell{"oltp_write_only", 1, cmp(stats.Faster, 1.4)}, cell{"oltp_write_only", 4, cmp(stats.Faster, 2.1)},
			cell{"oltp_point_select", 1, cmp(stats.Same, 1.0)}, cell{"oltp_point_select", 4, cmp(stats.Inconclusive, 1.1)}),
			"Against durable, relaxed was faster in 2 of 4 comparisons (1.40x to 2.10x the control's QPS; oltp_write_only at every thread level), " +
				"the same within 2% in 1 (oltp_point_select at 1 thread) and inconclusive in 1 (oltp_point_select at 4 threads)."},
		{"slower at some levels", build(cell{"sql", 1, cmp(stats.Same, 1)}, cell{"sql", 16, cmp(stats.Slower, 0.7)}, cell{"sql", 64, cmp(stats.Slower, 0.6)}),
			"Against durable, relaxed was slower in 2 of 3 comparisons (0.60x to 0.70x the control's QPS; sql at 16 and 64 threads) and the same within 2% in 1 (sql at 1 thread)."},
		{"one comparison", build(cell{"oltp_write_only", 4, cmp(stats.Inconclusive, 1.68)}),
			"Against durable, relaxed was inconclusive (oltp_write_only at 4 threads)."},
		{"no candidates", &Report{Control: "durable", Targets: []store.Target{targetNamed("durable", "control")}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.plainSummary(); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestTimeAxisFitsTheData: a run's seconds 1 to 2 fill the chart's width,
// not the right half of an axis from 0.
func TestTimeAxisFitsTheData(t *testing.T) {
	c := chart{Title: "t", Width: 460, Height: 240, Series: []series{{Name: "a", Points: []xy{{X: 1, Y: 10}, {X: 2, Y: 20}}}}}
	svg := c.svg()
	left, right := padLeft, 460-padRight
	if !strings.Contains(svg, `d="M`+itoaF(left)+" ") || !strings.Contains(svg, "L"+itoaF(right)+" ") {
		t.Errorf("got %s, want the path from x=%d to x=%d", svg, left, right)
	}
	if strings.Contains(svg, `text-anchor="middle">0</text>`) {
		t.Errorf("got a 0 tick on the time axis of seconds 1 to 2: %s", svg)
	}
}

func itoaF(n int) string { return f1(float64(n)) }
