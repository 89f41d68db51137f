package report

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/golden"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/stats"
	"github.com/shakedown/shakedown/internal/store"
)

func TestFormats(t *testing.T) {
	for _, repeats := range []int{1, 5} {
		rep := Build(fixture(repeats))
		for _, format := range Formats {
			name := format + "-" + map[int]string{1: "single", 5: "repeats"}[repeats] + "." + map[string]string{"text": "txt", "md": "md", "csv": "csv", "json": "json", "html": "html"}[format]
			t.Run(name, func(t *testing.T) {
				var b bytes.Buffer
				if err := Write(&b, format, rep); err != nil {
					t.Fatalf("Write: %v", err)
				}
				golden.Check(t, name, b.Bytes())
			})
		}
	}
}

// withBisect is the fixture with a vars bisect result (as vars bisect
// --json wrote it) to show after the variables that differ.
func withBisect(t *testing.T) *Report {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "bisect.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := result.ReadBisect(f)
	if err != nil {
		t.Fatal(err)
	}
	rep := Build(fixture(5))
	rep.Bisect = b
	return rep
}

// TestBisectSection shows a vars bisect right after the variables that
// differ, in every format that shows those.
func TestBisectSection(t *testing.T) {
	rep := withBisect(t)
	for _, tc := range []struct{ format, name, diff, section, after string }{
		{"text", "text-bisect.txt", "Server variables that differ", "Which differences matter (vars bisect", "How verdicts are reached"},
		{"md", "md-bisect.md", "## Server variables that differ", "## Which differences matter: vars bisect", "How verdicts are reached"},
		{"html", "html-bisect.html", "<h3>Server variables that differ</h3>", `<section class="vars-bisect">`, "server variables of"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, tc.format, rep); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			d, s, a := strings.Index(out, tc.diff), strings.Index(out, tc.section), strings.Index(out, tc.after)
			if d < 0 || s < d || a < s {
				t.Errorf("positions: got the variables at %d, the bisect at %d, %q at %d; want them in that order", d, s, tc.after, a)
			}
			for _, want := range []string{"innodb_flush_log_at_trx_commit", "table_open_cache"} {
				if !strings.Contains(out, want) {
					t.Errorf("got no %s in the bisect block, want it", want)
				}
			}
			golden.Check(t, tc.name, b.Bytes())
		})
	}
}

func TestHTMLIsSelfContained(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, Build(fixture(5))); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"http://", "https://", "<link", "src=", "@import", "url("} {
		if strings.Contains(page, bad) {
			i := strings.Index(page, bad)
			t.Errorf("the page contains %q: ...%s...", bad, page[max(0, i-60):min(len(page), i+60)])
		}
	}
	// 2 workloads x (2 charts + 3 timelines).
	if got, want := strings.Count(page, `<svg class="chart"`), 10; got != want {
		t.Errorf("charts: got %d, want %d", got, want)
	}
}

func TestJSONRows(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, Build(fixture(1))); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rows []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if got, want := len(doc.Rows), 3*2*3; got != want {
		t.Fatalf("rows: got %d, want %d", got, want)
	}
	for _, row := range doc.Rows {
		for _, k := range []string{"target", "workload", "threads", "qps", "tps", "latency_ms", "errors"} {
			if _, ok := row[k]; !ok {
				t.Errorf("row %v: no %s", row, k)
			}
		}
		lat, _ := row["latency_ms"].(map[string]any)
		for _, k := range []string{"avg", "p95", "p99", "max"} {
			if _, ok := lat[k]; !ok {
				t.Errorf("row %v: no latency_ms.%s", row, k)
			}
		}
		_, hasRatio := row["ratio_vs_control"]
		_, hasVerdict := row["verdict"]
		candidate := row["role"] == "candidate"
		if hasVerdict != candidate {
			t.Errorf("row %v: verdict present %v, want %v", row, hasVerdict, candidate)
		}
		if hasRatio && !candidate {
			t.Errorf("row %v: a control row has a ratio", row)
		}
	}
}

func TestVerdict(t *testing.T) {
	row := func(qps ...float64) *Row { return &Row{Target: "x", qps: qps, QPS: stats.Summarize(qps)} }
	r := &Report{Control: "c", Threshold: 0.02, Confidence: 0.95}
	tests := []struct {
		name      string
		cand, ctl *Row
		want      stats.State
	}{
		{"single runs: no verdict, however far apart", row(150), row(100), "no verdict"},
		{"3 repeats a side are too few for a 95% interval", row(110, 111, 110.5), row(100, 100.5, 100.2), "inconclusive"},
		{"5 repeats, tight and apart", row(110, 111, 110.5, 110.2, 110.8), row(100, 100.5, 100.2, 100.1, 100.4), "faster"},
		{"5 repeats, clearly slower", row(80, 81, 80.5, 80.2, 80.8), row(100, 101, 100.5, 100.2, 100.8), "slower"},
		{"5 repeats, the same within 1%", row(100.3, 100.8, 100.1, 100.6, 100.4), row(100, 100.5, 100.2, 100.7, 100.3), "same"},
		{"5 repeats, a wide spread covers the gap", row(110, 95, 125, 102, 118), row(100, 90, 112, 98, 105), "inconclusive"},
		{"candidate failed", row(), row(100), stats.NoData},
		{"control failed", row(100), row(), stats.NoData},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := r.compare(tc.cand, tc.ctl).Verdict; got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestBuild(t *testing.T) {
	r := Build(fixture(2))
	w := r.Workloads[1]
	if w.Name != "oltp_point_select" {
		t.Fatalf("workload order: got %s second, want oltp_point_select", w.Name)
	}
	// tuned failed once at 16 threads and was interrupted once: both left
	// out, and told apart.
	row := w.Row("tuned", 16)
	if row.QPS.N != 0 || row.Failed != 1 || row.Interrupted != 1 {
		t.Errorf("tuned at 16: got %d ok, %d failed, %d interrupted; want 0, 1, 1", row.QPS.N, row.Failed, row.Interrupted)
	}
	if got := row.Compared.Verdict; got != stats.NoData {
		t.Errorf("tuned at 16: got %s, want %s", got, stats.NoData)
	}
	r = Build(fixture(5))
	if got, want := r.Differing, []string{"innodb_flush_log_at_trx_commit", "sync_binlog", "version_comment"}; !reflect.DeepEqual(got, want) {
		t.Errorf("differing variables: got %v, want %v", got, want)
	}
	if got := r.Workloads[0].Row("relaxed", 4).Compared.Verdict; got != stats.Faster {
		t.Errorf("relaxed write_only at 4: got %s, want faster", got)
	}
	if p := r.Workloads[0].Peaks[1]; p.Target != "relaxed" || p.Threads != 16 {
		t.Errorf("peak: got %+v, want relaxed at 16", p)
	}
}

func TestSummary(t *testing.T) {
	d := fixture(1)
	var b bytes.Buffer
	if err := WriteSummary(&b, Build(d)); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "summary.txt", b.Bytes())

	// The control alone: its own figures.
	d.Targets = d.Targets[:1]
	var runs = d.Runs[:0]
	for _, r := range d.Runs {
		if r.Target == "durable" {
			runs = append(runs, r)
		}
	}
	d.Runs = runs
	b.Reset()
	if err := WriteSummary(&b, Build(d)); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "summary-control-only.txt", b.Bytes())
}

// TestLooseRuns reports a sweep's runs as if made one by one: the same
// rows and verdicts, headed as runs; repeats are counted per workload,
// target and threads.
func TestLooseRuns(t *testing.T) {
	sweep := fixture(2)
	d, err := FromRuns("runs.db", sweep.Runs, "")
	if err != nil {
		t.Fatal(err)
	}
	if d.Sweep.ID != 0 || d.Sweep.Settings.Repeats != 2 || len(d.Targets) != len(sweep.Targets) || d.Targets[0].Role != "control" {
		t.Errorf("got sweep %+v, targets %+v", d.Sweep, d.Targets)
	}
	loose, whole := Build(d), Build(sweep)
	for i, w := range whole.Workloads {
		for j, c := range w.Comparisons() {
			if lc := loose.Workloads[i].Comparisons()[j]; lc.Verdict != c.Verdict || lc.Ratio != c.Ratio {
				t.Errorf("%s %d threads: loose %s %.3f, sweep %s %.3f", w.Name, c.Threads, lc.Verdict, lc.Ratio, c.Verdict, c.Ratio)
			}
		}
	}
	for _, format := range []string{"text", "md", "html"} {
		var b bytes.Buffer
		if err := Write(&b, format, loose); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, format+"-loose."+map[string]string{"text": "txt", "md": "md", "html": "html"}[format], b.Bytes())
	}
	if _, err := FromRuns("runs.db", sweep.Runs, "nobody"); err == nil || !strings.Contains(err.Error(), `no target "nobody"`) {
		t.Errorf("unknown control: got %v", err)
	}
	if d, err := FromRuns("runs.db", sweep.Runs, sweep.Targets[1].Name); err != nil || d.Targets[1].Role != "control" || d.Targets[0].Role != "candidate" {
		t.Errorf("--control %s: got %v, %+v", sweep.Targets[1].Name, err, d)
	}
}

// A degraded run (the server was away for part of it) is left out of the
// figures and the verdicts, as a failed one is, and listed with a mark.
func TestDegradedLeftOut(t *testing.T) {
	d := fixture(2)
	var marked *store.Run
	for i := range d.Runs {
		run := &d.Runs[i]
		if run.Target == "relaxed" && run.Workload == "oltp_write_only" && run.Threads == 4 {
			run.Degraded = true
			marked = run
		}
	}
	r := Build(d)
	row := r.Workloads[0].Row("relaxed", 4)
	if row.QPS.N != 0 || row.Failed != 2 || row.Compared.Verdict != stats.NoData {
		t.Errorf("relaxed at 4: got %d counted, %d left out, verdict %s; want 0, 2 and %s", row.QPS.N, row.Failed, row.Compared.Verdict, stats.NoData)
	}
	var b bytes.Buffer
	if err := Write(&b, "text", r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "ok, DEGRADED") {
		t.Errorf("the report does not mark the degraded runs:\n%s", b.String())
	}
	if marked == nil {
		t.Fatal("no run to mark")
	}
}

// TestInterruptedIsNotFailed: a step that was interrupted shows as
// interrupted, not as failed.
func TestInterruptedIsNotFailed(t *testing.T) {
	r := Build(fixture(1))
	row := r.Workloads[1].Row("tuned", 16)
	if row.Interrupted != 1 || row.Failed != 0 {
		t.Fatalf("got %d interrupted and %d failed, want 1 and 0", row.Interrupted, row.Failed)
	}
	if got := qpsCell(row); got != "interrupted" {
		t.Errorf("cell: got %q, want interrupted", got)
	}
}

// TestLooseRunsInventNoLevels: runs made one by one at levels that differ
// by workload get rows only where something ran, never "not run".
func TestLooseRunsInventNoLevels(t *testing.T) {
	var runs []store.Run
	for _, r := range fixture(1).Runs {
		if (r.Workload == "oltp_write_only" && r.Threads != 16) || (r.Workload == "oltp_point_select" && r.Threads == 16 && r.Target != "tuned") {
			runs = append(runs, r)
		}
	}
	d, err := FromRuns("files", runs, "")
	if err != nil {
		t.Fatal(err)
	}
	rep := Build(d)
	for _, w := range rep.Workloads {
		for _, row := range w.Rows {
			if row.QPS.N == 0 && row.Failed == 0 && row.Interrupted == 0 {
				t.Errorf("%s: a row for %s at %d threads that nothing ran", w.Name, row.Target, row.Threads)
			}
		}
	}
	var b bytes.Buffer
	if err := WriteText(&b, rep); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "not run") {
		t.Errorf("the report invents levels:\n%s", b.String())
	}
}

// TestAAPair: a candidate that is the control's own server and database is
// called A/A, and the report shows the noise it measured.
func TestAAPair(t *testing.T) {
	d := fixture(5)
	for i := range d.Targets[:2] {
		d.Targets[i].Variables["hostname"] = "db1"
		d.Targets[i].Variables["port"] = "3307"
		d.Targets[i].URL = "mysql://shakedown@127.0.0.1:3307/sbtest"
	}
	r := Build(d)
	if got := r.AAPairs["relaxed"]; got != "db1:3307" {
		t.Fatalf("A/A pairs: got %v, want relaxed by db1:3307", r.AAPairs)
	}
	if _, ok := r.AAPairs["tuned"]; ok {
		t.Errorf("tuned is another server, got it as A/A")
	}
	aa := r.AA()
	if len(aa) != 1 || aa[0].Cells != 6 || aa[0].MaxDev < 1 {
		t.Errorf("noise: got %+v, want relaxed over 6 cells", aa)
	}
	var b bytes.Buffer
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"relaxed (A/A)", "A/A: relaxed is the same server as durable (db1:3307)", "Measured over 6 cells"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text: want %q in:\n%s", want, b.String())
		}
	}
	// Another database on the same server is not A/A: the data differ.
	d.Targets[1].URL = "mysql://shakedown@127.0.0.1:3307/other"
	if r := Build(d); len(r.AAPairs) != 0 {
		t.Errorf("another database: got A/A %v, want none", r.AAPairs)
	}
}

// TestHistoryHTML draws a history with a change point: one chart per
// series, the change marked on it and named under it.
func TestHistoryHTML(t *testing.T) {
	var sweeps []*store.SweepData
	for i := range 12 {
		d := fixture(1)
		d.Sweep.ID = int64(i + 1)
		d.Sweep.StartedAt = d.Sweep.StartedAt.Add(time.Duration(i) * 24 * time.Hour)
		for j := range d.Runs {
			if res := d.Runs[j].Result; res != nil && i >= 6 {
				res.QPS *= 1.2
			}
		}
		sweeps = append(sweeps, d)
	}
	h := BuildHistory("test", sweeps, HistoryFilter{Workload: "oltp_write_only", Target: "durable", Threads: 4})
	if len(h.Series) != 1 || len(h.Series[0].Changes) != 1 || h.Series[0].Changes[0].SweepID != 7 {
		t.Fatalf("got %+v, want one series changing at sweep 7", h.Series)
	}
	var b bytes.Buffer
	if err := WriteHistory(&b, "html", h); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{`<svg class="chart"`, `class="mark"`, "Change point from sweep 7", "How change points are found"} {
		if !strings.Contains(page, want) {
			t.Errorf("history page lacks %q", want)
		}
	}
	for _, format := range []string{"text", "md", "csv", "json"} {
		b.Reset()
		if err := WriteHistory(&b, format, h); err != nil || !strings.Contains(b.String(), "oltp_write_only") {
			t.Errorf("%s: got %v, %q", format, err, b.String())
		}
	}
}

// TestMostlyUnsteady: when most runs did not keep a steady pace, the
// report says so above the list, and a sweep's summary lists only a few.
func TestMostlyUnsteady(t *testing.T) {
	d := fixture(5)
	for i := range d.Runs {
		if res := d.Runs[i].Result; res != nil {
			for j := range res.Intervals {
				if j%2 == 1 {
					res.Intervals[j].QPS /= 3
				}
			}
		}
	}
	r := Build(d)
	if line := r.unsteadyLine(); !strings.HasPrefix(line, "UNSTEADY: 88 of the 88 runs long enough to judge (4 s or more)") {
		t.Errorf("got %q, want every run called unsteady", line)
	}
	var b bytes.Buffer
	if err := WriteSummary(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "... and 80 more (shakedown report lists them all)") {
		t.Errorf("summary: want the list cut to %d:\n%s", briefUnsteady, b.String())
	}
	if r := Build(fixture(5)); r.unsteadyLine() != "" {
		t.Errorf("steady runs: got %q, want no warning", r.unsteadyLine())
	}
}

func TestByCodeText(t *testing.T) {
	tests := []struct {
		name string
		in   map[string]int64
		want string
	}{
		{"none", nil, ""},
		{"one known", map[string]int64{"1213": 12}, "1213 deadlock: 12"},
		{"most first, then by code", map[string]int64{"1205": 2, "1213": 40, "1020": 2}, "1213 deadlock: 40, 1020 record changed since last read: 2, 1205 lock wait timeout: 2"},
		{"unknown code bare", map[string]int64{"9999": 1}, "9999: 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := byCodeText(tc.in); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestScalingSection fits the Universal Scalability Law for a sweep of 7
// thread levels: durable and relaxed are fitted close to the parameters
// their QPS was drawn from, tuned (linear) is refused with the reason, and
// every format that shows workloads shows the section.
func TestScalingSection(t *testing.T) {
	rep := Build(scalingFixture())
	want := map[string][3]float64{"durable": {0.1, 0.0018, 400}, "relaxed": {0.03, 0.00042, 520}}
	got := rep.Workloads[0].Scaling
	if len(got) != 3 {
		t.Fatalf("got %d fits, want 3 (one per target)", len(got))
	}
	for _, s := range got {
		w, ok := want[s.Target]
		if !ok {
			if !strings.Contains(s.Refused, "rises linearly through 64 threads") {
				t.Errorf("%s: got refusal %q, want it to say the curve rises linearly through 64 threads", s.Target, s.Refused)
			}
			continue
		}
		if s.Refused != "" {
			t.Errorf("%s: got refusal %q, want a fit", s.Target, s.Refused)
			continue
		}
		// A 2% jitter, not 3% noise: 10% is the bound for these 21 points.
		for i, v := range []float64{s.Fit.Sigma, s.Fit.Kappa, s.Fit.Lambda} {
			if math.Abs(v-w[i]) > 0.1*w[i] {
				t.Errorf("%s: parameter %d got %g, want %g within 10%%", s.Target, i, v, w[i])
			}
		}
	}
	for _, format := range []string{"text", "md", "json", "html"} {
		name := format + "-scaling." + map[string]string{"text": "txt", "md": "md", "json": "json", "html": "html"}[format]
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, format, rep); err != nil {
				t.Fatalf("Write: %v", err)
			}
			for _, part := range []string{"not tail latency", "rises linearly through 64 threads"} {
				if !strings.Contains(b.String(), part) {
					t.Errorf("got no %q in the %s report", part, format)
				}
			}
			golden.Check(t, name, b.Bytes())
		})
	}
}

// TestClientBoundInconclusive: a cell in which a run of either side was
// limited by its client is "inconclusive (client-bound)", never "same" or
// "faster", and the report names the run with its client figures.
func TestClientBoundInconclusive(t *testing.T) {
	bound := &result.Client{Bound: true, CPUPct: 65, Cores: 1, WaitPct: 70, LagP50MS: 8, LagP99MS: 67, QueryLatencyMS: 30}
	tests := []struct {
		name            string
		workload        string
		threads         int
		mark            string // the target whose first run is client-bound
		cand            string
		wantBeforeState stats.State
	}{
		{"a candidate's run makes same inconclusive", "oltp_point_select", 4, "relaxed", "relaxed", stats.Same},
		{"the control's run makes faster inconclusive", "oltp_write_only", 1, "durable", "relaxed", stats.Faster},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := fixture(5)
			if tc.wantBeforeState == stats.Same {
				sameAsControl(d, tc.workload, tc.threads, tc.cand)
			}
			before := Build(d).Workloads[wlIndex(tc.workload)].Row(tc.cand, tc.threads).Compared
			if got := before.QPS.State; got != tc.wantBeforeState {
				t.Fatalf("before: got %s, want %s", got, tc.wantBeforeState)
			}
			for i := range d.Runs {
				run := &d.Runs[i]
				if run.Target == tc.mark && run.Workload == tc.workload && run.Threads == tc.threads && run.Repeat == 1 {
					run.Result.Client = bound
				}
			}
			r := Build(d)
			c := r.Workloads[wlIndex(tc.workload)].Row(tc.cand, tc.threads).Compared
			for name, f := range map[string]stats.Comparison{"qps": c.QPS, "tps": c.TPS, "p95": c.P95, "p99": c.P99} {
				if f.Note() != "inconclusive (client-bound)" {
					t.Errorf("%s: got %q, want \"inconclusive (client-bound)\"", name, f.Note())
				}
			}
			if c.Verdict != stats.Inconclusive {
				t.Errorf("verdict: got %q, want inconclusive", c.Verdict)
			}
			for _, format := range []string{"text", "md", "json", "html"} {
				var b bytes.Buffer
				if err := Write(&b, format, r); err != nil {
					t.Fatal(err)
				}
				want := []string{"CLIENT-BOUND", "CPU 65.0% of 1 core"}
				if format == "json" {
					want = []string{`"client_bound_runs": 1`, `"note": "inconclusive (client-bound)"`}
				} else {
					want = append(want, "inconclusive (client-bound)")
				}
				for _, w := range want {
					if !strings.Contains(b.String(), w) {
						t.Errorf("%s: report lacks %q:\n%s", format, w, b.String())
					}
				}
			}
		})
	}
}

// sameAsControl gives every run of the control and of cand in a cell the
// figures of the control's first, which makes the cell "same".
func sameAsControl(d *store.SweepData, workload string, threads int, cand string) {
	var first *result.Result
	for _, run := range d.Runs {
		if first == nil && run.Target == "durable" && run.Workload == workload && run.Threads == threads && run.Result != nil {
			first = run.Result
		}
	}
	for i := range d.Runs {
		run := &d.Runs[i]
		if (run.Target == cand || run.Target == "durable") && run.Workload == workload && run.Threads == threads && run.Result != nil {
			c := *first
			c.Target = run.Result.Target
			run.Result = &c
		}
	}
}

// wlIndex is the index of a fixture workload in a built report.
func wlIndex(name string) int {
	if name == "oltp_write_only" {
		return 0
	}
	return 1
}

// TestDrivenDifferently: where the client drove the control's runs of a
// cell one way and a candidate's another (blocking reads against held
// loops), every format names the cell and both ways; driven alike, with
// loop counts that differ, nothing is said.
func TestDrivenDifferently(t *testing.T) {
	loops := &result.Client{Cores: 2, IO: &result.ClientIO{Asked: "auto", Mode: "loop", Loops: 2, Held: true, BoundToCPUs: true}}
	moreLoops := &result.Client{Cores: 2, IO: &result.ClientIO{Asked: "auto", Mode: "loop", Loops: 4, Held: true, BoundToCPUs: true}}
	blocking := &result.Client{Cores: 2, IO: &result.ClientIO{Asked: "blocking", Mode: "blocking"}}
	for _, tc := range []struct {
		name string
		cand *result.Client
		want bool
	}{
		{"driven alike", moreLoops, false},
		{"driven differently", blocking, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := fixture(5)
			for i := range d.Runs {
				run := &d.Runs[i]
				if run.Result == nil {
					continue
				}
				switch {
				case run.Target == "durable":
					run.Result.Client = loops
				case run.Target == "relaxed" && run.Workload == "oltp_point_select" && run.Threads == 4:
					run.Result.Client = tc.cand
				default:
					run.Result.Client = loops
				}
			}
			r := Build(d)
			const named = "oltp_point_select at 4 threads, durable by I/O loops, holding their processors, bound to CPUs and relaxed by blocking reads"
			for _, format := range []string{"text", "md", "html", "json"} {
				var b bytes.Buffer
				if err := Write(&b, format, r); err != nil {
					t.Fatal(err)
				}
				if format == "json" {
					var doc struct {
						Driven []string `json:"driven_differently"`
					}
					if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
						t.Fatal(err)
					}
					if got := len(doc.Driven) == 1 && doc.Driven[0] == named; got != tc.want || len(doc.Driven) > 1 {
						t.Errorf("json: driven_differently %q, want the cell named: %v", doc.Driven, tc.want)
					}
					continue
				}
				out := strings.Join(strings.Fields(b.String()), " ") // text wraps its lines
				got := strings.Contains(out, "DRIVEN DIFFERENTLY: in 1 compared cell(s)")
				if cell := strings.Contains(out, named); got != tc.want || cell != tc.want {
					t.Errorf("%s: finding %v, the cell named %v; want %v:\n%s", format, got, cell, tc.want, out)
				}
			}
		})
	}
}
