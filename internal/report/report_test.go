package report

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/golden"
	"github.com/shakedown/shakedown/internal/store"
)

func TestFormats(t *testing.T) {
	for _, repeats := range []int{1, 2} {
		rep := Build(fixture(repeats))
		for _, format := range Formats {
			name := format + "-" + map[int]string{1: "single", 2: "repeats"}[repeats] + "." + map[string]string{"text": "txt", "md": "md", "csv": "csv", "json": "json", "html": "html"}[format]
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

func TestHTMLIsSelfContained(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, Build(fixture(2))); err != nil {
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
	row := func(qps ...float64) *Row { return &Row{Target: "x", QPS: newStat(qps)} }
	tests := []struct {
		name      string
		cand, ctl *Row
		want      string
	}{
		{"single runs, 2.9% faster is noise", row(102.9), row(100), Noise},
		{"single runs, 3.1% faster", row(103.1), row(100), Faster},
		{"single runs, 5% slower", row(95), row(100), Slower},
		{"repeats, tight and apart", row(110, 111, 110.5), row(100, 100.5, 100.2), Faster},
		{"repeats, wide spread covers the gap", row(110, 95, 125), row(100, 90, 112), Noise},
		{"repeats, medians inside each other's range", row(101, 99, 108), row(100, 98, 103), Noise},
		{"repeats, clearly slower", row(80, 81, 80.5), row(100, 101, 100.5), Slower},
		{"candidate failed", row(), row(100), NoData},
		{"control failed", row(100), row(), NoData},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := compare(tc.cand, tc.ctl, "c").Verdict; got != tc.want {
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
	// tuned failed once at 16 threads and was interrupted once: both left out.
	row := w.Row("tuned", 16)
	if row.QPS.N != 0 || row.Failed != 2 {
		t.Errorf("tuned at 16: got %d ok and %d failed, want 0 and 2", row.QPS.N, row.Failed)
	}
	if got := row.Compared.Verdict; got != NoData {
		t.Errorf("tuned at 16: got %s, want %s", got, NoData)
	}
	if got, want := r.Differing, []string{"innodb_flush_log_at_trx_commit", "sync_binlog", "version_comment"}; !reflect.DeepEqual(got, want) {
		t.Errorf("differing variables: got %v, want %v", got, want)
	}
	if got := r.Workloads[0].Row("relaxed", 4).Compared.Verdict; got != Faster {
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
	if row.QPS.N != 0 || row.Failed != 2 || row.Compared.Verdict != NoData {
		t.Errorf("relaxed at 4: got %d counted, %d left out, verdict %s; want 0, 2 and %s", row.QPS.N, row.Failed, row.Compared.Verdict, NoData)
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
