package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/capacity"
	"github.com/shakedown/shakedown/internal/monitor"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/sandbox/gmstest"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/store"
)

// TestCapacityBadInput: nothing runs, exit 2, and the message names what
// was wrong.
func TestCapacityBadInput(t *testing.T) {
	dir := t.TempDir()
	empty, torn := filepath.Join(dir, "empty.jsonl"), filepath.Join(dir, "torn.jsonl")
	for path, text := range map[string]string{empty: "", torn: `{"time":"2026-11-25T20:14:56Z","v":{"qps":5}}` + "\n" + `{"time":` + "\n"} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"slo without <=", []string{"--slo", "p99<20ms"}, []string{`--slo "p99<20ms"`, "no <=", capacity.SLOForm}},
		{"slo unit", []string{"--slo=p99<=20ms,errors<=1"}, []string{`"errors<=1"`, "ends in %", capacity.SLOForm}},
		{"rate", []string{"--slo", "p99<=20ms", "--rate=100"}, []string{"--rate cannot be given", "capacity chooses the rate"}},
		{"bracket", []string{"--slo", "p99<=20ms", "--bracket=0"}, []string{"--bracket must be above 0"}},
		{"unknown option", []string{"--slo", "p99<=20ms", "--tabels=2"}, []string{"--tabels"}},
		{"peak file missing", []string{"--slo", "p99<=20ms", "--peak", filepath.Join(dir, "prod.jsonl")}, []string{"--peak " + filepath.Join(dir, "prod.jsonl") + ": no such file", "watch TARGET --json"}},
		{"peak file empty", []string{"--slo", "p99<=20ms", "--peak", empty}, []string{"--peak " + empty + ": holds no sample", "give the peak as a number"}},
		{"peak file torn", []string{"--slo", "p99<=20ms", "--peak=" + torn}, []string{"--peak " + torn + ": line 2: not a JSON object", "one sample a line"}},
		{"peak negative", []string{"--slo", "p99<=20ms", "--peak=-5"}, []string{"--peak -5", "number >= 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"capacity", "oltp_point_select", "--target=mysql://u@127.0.0.1:1/db"}, tc.args...)
			code, out, errOut := runCLI(t.Context(), args...)
			if code != ExitUsage {
				t.Fatalf("got exit %d, want %d\n%s%s", code, ExitUsage, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("got %q, want it to say %q", errOut, w)
				}
			}
		})
	}
}

// TestCapacityStarvedClientIsClientBound starves the client (see
// starvedClient) with hundreds of threads: the search stops at its probe
// with "client-bound" and reports no capacity.
func TestCapacityStarvedClientIsClientBound(t *testing.T) {
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("taskset is not installed")
	}
	url := sandboxtest.URL(t)
	mustExec(t, adminDB(t, url), "CREATE DATABASE IF NOT EXISTS starvedcap")
	url = strings.TrimSuffix(url, "/sbtest") + "/starvedcap"
	prepareSmall(t, url)
	path := filepath.Join(t.TempDir(), "cap.json")
	cmd, out := starvedClient(t, []string{"capacity", "oltp_point_select", "--target=" + url, "--tables=1", "--table-size=2000",
		"--threads=400", "--slo", "p99<=50ms", "--step-time=3", "--step-warmup=0", "--json=" + path})
	err := cmd.Run()
	t.Logf("output:\n%s", out.String())
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != ExitFailure {
		t.Fatalf("got %v, want exit %d", err, ExitFailure)
	}
	if !strings.Contains(out.String(), "client-bound") {
		t.Errorf("output lacks \"client-bound\"")
	}
	var rep capacity.Report
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Targets) != 1 {
		t.Fatalf("got %d targets in the report, want 1", len(rep.Targets))
	}
	r := rep.Targets[0]
	if r.Outcome != capacity.ClientBound || r.Capacity != 0 {
		t.Errorf("got outcome %q, capacity %g, want %q and no capacity", r.Outcome, r.Capacity, capacity.ClientBound)
	}
	if n := len(r.Steps); n != 1 || !r.Steps[0].ClientBound {
		t.Errorf("got %d steps (%+v), want the search to stop at its client-bound probe", n, r.Steps)
	}
}

// TestCapacityFindsCeiling runs the command against go-mysql-server, which
// runs one statement at a time, with every event sleeping 5ms there: a
// ceiling under 200/s. Short steps and a wide bracket keep it to seconds;
// the search against a scan in 2% steps is make test-capacity's. The
// production peak is a file that watch --json wrote: an event of this
// workload is one statement, so the peak is its highest qps (50/s), not
// its tps, and the headroom is the capacity over it.
func TestCapacityFindsCeiling(t *testing.T) {
	srv := gmstest.Start(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "sleep.sql")
	if err := os.WriteFile(file, []byte("SELECT SLEEP(0.005);\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	peakAt := time.Date(2026, 11, 25, 20, 14, 57, 0, time.UTC)
	prod := writeWatch(t, filepath.Join(dir, "prod.jsonl"), peakAt.Add(-time.Second), [][2]float64{{30, 900}, {50, 2}, {20, 1}})
	jsonPath, storePath, htmlPath := filepath.Join(dir, "cap.json"), filepath.Join(dir, "runs.db"), filepath.Join(dir, "cap.html")
	code, out, errOut := runCLI(t.Context(), "capacity", "sql", "--file="+file, "--target="+srv.URL, "--threads=16",
		"--slo", "p95<=1s", "--step-time=1", "--step-warmup=0", "--bracket=10", "--repeats=1", "--peak", prod,
		"--json="+jsonPath, "--store="+storePath, "--html="+htmlPath)
	t.Logf("output:\n%s%s", out, errOut)
	if code != ExitOK {
		t.Fatalf("got exit %d, want %d", code, ExitOK)
	}
	var rep capacity.Report
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Targets) != 1 {
		t.Fatalf("got %d targets, want 1", len(rep.Targets))
	}
	r := rep.Targets[0]
	if r.Outcome != capacity.Found || r.Capacity < 50 || r.Capacity > 200 {
		t.Errorf("got outcome %q capacity %.1f/s, want %q between 50 and 200/s (5ms a statement, one at a time)", r.Outcome, r.Capacity, capacity.Found)
	}
	if r.High > 0 && (r.High-r.Low)/r.Low > 0.1 {
		t.Errorf("got bracket %.1f-%.1f/s, want it within 10%%", r.Low, r.High)
	}
	from := rep.PeakFrom
	if rep.Peak != 50 || from == nil || from.Key != "qps" || from.File != prod || from.Samples != 3 || from.Line != 2 || !from.At.Equal(peakAt) {
		t.Fatalf("got peak %g from %+v, want 50 from qps of 3 samples in %s, line 2 at %v", rep.Peak, from, prod, peakAt)
	}
	headroom := fmt.Sprintf("headroom x%.2f over the production peak of 50.0/s", r.Capacity/50)
	peakLine := "Production peak 50.0/s: the highest qps (statements a second, one an event of sql) of the 3 samples in " + prod + ", at 2026-11-25 20:14:57 UTC (line 2)"
	for _, want := range []string{headroom, peakLine, "offered/s", "confirmed by 1 of 1 repeats", "Stored in"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	page, err := os.ReadFile(htmlPath)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(page), `<svg class="chart"`); got != 2 {
		t.Errorf("--html: got %d charts, want 2 (latency and achieved against the offered rate)", got)
	}
	for _, want := range []string{html.EscapeString(peakLine), html.EscapeString(headroom)} {
		if !strings.Contains(string(page), want) {
			t.Errorf("--html: got no %q in the page", want)
		}
	}
	wantStoredPass(t, storePath, r.Target)
	// readiness finds the search by the server's URL and shows its
	// headroom over the production peak.
	_, out, errOut = runCLI(t.Context(), "readiness", srv.URL, srv.URL, "--store="+storePath)
	if !regexp.MustCompile(`capacity +pass +capacity [0-9.]+/s .*; headroom x[0-9.]+ over the production peak of 50\.0/s`).MatchString(out) {
		t.Errorf("readiness: got %q%q, want the capacity passed with its headroom over 50/s", out, errOut)
	}
}

// wantStoredPass holds the store at storePath to a capacity search of
// target stored as evidence that passed.
func wantStoredPass(t *testing.T, storePath, target string) {
	t.Helper()
	st, err := store.Open(t.Context(), storePath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e, err := st.LatestEvidence(t.Context(), store.KindCapacity, nil)
	if err != nil {
		t.Fatalf("got %v, want the search stored as evidence", err)
	}
	if e.Outcome != store.OutcomePass || e.Target != target {
		t.Errorf("got stored outcome %q for %q, want %q for %q", e.Outcome, e.Target, store.OutcomePass, target)
	}
}

// writeWatch writes at path what watch --json writes for samples of qps
// and tps a second apart, the first at start, and returns path.
func writeWatch(t *testing.T, path string, start time.Time, qpsTPS [][2]float64) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for i, v := range qpsTPS {
		s := result.Sample{AtS: float64(i + 1), ElapsedS: 1, Values: map[string]float64{"qps": v[0], "tps": v[1]}, Wall: start.Add(time.Duration(i) * time.Second)}
		if err := enc.Encode(monitor.Record(s)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSweepPlanCapacity: a sweep plan's capacity: section searches its
// first workload at its highest thread level once the sweep's steps are
// done, prints the report after the sweep's, and stores the search as
// capacity --store does; a split sweep runs no search and says so. The
// workload is the user's own, made by capture --to-workload from a slow
// log.
func TestSweepPlanCapacity(t *testing.T) {
	srv := gmstest.Start(t)
	dir := t.TempDir()
	var log strings.Builder
	for i, q := range []string{"SELECT SLEEP(0.005)", "SELECT SLEEP(0.005)", "SELECT 1 + 5", "SELECT SLEEP(0.005)", "SELECT 1 + 7"} {
		fmt.Fprintf(&log, "# Time: 261122 21:56:%02d\n# User@Host: a[a] @  [127.0.0.1]\n# Thread_id: 4  Schema: app  QC_hit: No\n"+
			"# Query_time: 0.005  Lock_time: 0.0  Rows_sent: 1  Rows_examined: 0\nSET timestamp=%d;\n%s;\n", i, 1669154200+i, q)
	}
	slow, file := filepath.Join(dir, "slow.log"), filepath.Join(dir, "app.sql")
	if err := os.WriteFile(slow, []byte(log.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCLI(t.Context(), "capture", slow, "--to-workload", file); code != ExitOK || !strings.Contains(out+errOut, "workload of 2 statements") {
		t.Fatalf("capture --to-workload: got exit %d, %q%q; want a workload of 2 statements", code, out, errOut)
	}
	planPath, storePath := filepath.Join(dir, "plan.yaml"), filepath.Join(dir, "runs.db")
	src := fmt.Sprintf(`targets:
  - {name: gms, url: %q, role: control}
workloads:
  - {name: sql, options: {file: %q}}
threads: [1, 4]
time: 1
capacity: {slo: "p95<=1s", step_time: 1, warmup: 0, bracket: 30%%, repeats: 1}
production_peak: 20
`, srv.URL, file)
	if err := os.WriteFile(planPath, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t.Context(), "sweep", planPath, "--store="+storePath)
	t.Logf("output:\n%s%s", out, errOut)
	if code != ExitOK {
		t.Fatalf("got exit %d, want %d", code, ExitOK)
	}
	sweepAt, capAt := strings.Index(out, "full report:"), strings.Index(out, "\nCapacity of sql under p95<=1s (bracket 30%)")
	if sweepAt < 0 || capAt < sweepAt {
		t.Errorf("got the sweep's summary at %d and the capacity report at %d, want the report after the summary", sweepAt, capAt)
	}
	if !regexp.MustCompile(`headroom x[0-9.]+ over the production peak of 20\.0/s`).MatchString(out) {
		t.Errorf("output lacks the headroom over the production peak of 20/s")
	}
	wantStoredPass(t, storePath, srv.URL)

	code, out, errOut = runCLI(t.Context(), "sweep", planPath, "--store="+storePath, "--segment=1/2", "--dry-run",
		"--start-at="+time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	if code != ExitOK || !strings.Contains(errOut, "plan.yaml:7: a split sweep runs no capacity search") || strings.Contains(out, "capacity of") {
		t.Errorf("split: got exit %d, %q%q; want 0 and the search left out, said", code, out, errOut)
	}
	code, out, errOut = runCLI(t.Context(), "sweep", planPath, "--store="+storePath, "--dry-run")
	if code != ExitOK || !strings.Contains(out, "then  capacity of sql at 4 threads on every target under p95<=1s") {
		t.Errorf("dry run: got exit %d, %q%q; want 0 and the capacity search listed after the steps", code, out, errOut)
	}
}

// TestSweepPlanCapacityOnPreparedData: with prepare: and cleanup:, the
// plan's capacity search runs on the data the sweep prepared, which is
// dropped after the search, not before it. A search cut short leaves the
// data and marks the sweep interrupted; the printed sweep --resume runs
// the search again and no step, then drops the data. Whether the search
// found a capacity on a busy host is not what it checks.
func TestSweepPlanCapacityOnPreparedData(t *testing.T) {
	t.Parallel()
	url := sandboxtest.URL(t)
	admin := adminDB(t, url)
	mustExec(t, admin, "DROP DATABASE IF EXISTS sweepcap", "CREATE DATABASE sweepcap")
	url = strings.TrimSuffix(url, "/sbtest") + "/sweepcap"
	tables := func() int {
		t.Helper()
		var n int
		if err := admin.QueryRow("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'sweepcap'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	dir := t.TempDir()
	planPath, storePath := filepath.Join(dir, "plan.yaml"), filepath.Join(dir, "runs.db")
	src := fmt.Sprintf(`targets:
  - {name: db, url: %q, role: control}
workloads:
  - {name: oltp_point_select, options: {tables: 1, table-size: 200}}
prepare: true
prepare_threads: 1
cleanup: true
threads: [1]
time: 1
capacity: {slo: "p95<=1s", step_time: 1, warmup: 0, bracket: 45%%, repeats: 1}
`, url)
	if err := os.WriteFile(planPath, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}

	// Cut short as the search starts: the sweep's summary is out.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan int)
	go func() { done <- runCLIWith(ctx, &out, &errOut, "sweep", planPath, "--store="+storePath) }()
	for deadline := time.Now().Add(2 * time.Minute); !strings.Contains(out.String(), "full report:"); {
		select {
		case code := <-done:
			t.Fatalf("the sweep ended (exit %d) before its summary:\n%s%s", code, out.String(), errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("no sweep summary within 2 minutes:\n%s%s", out.String(), errOut.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	code := <-done
	t.Logf("interrupted:\n%s%s", out.String(), errOut.String())
	resume := "shakedown sweep --resume 1 --store " + storePath
	if code != ExitFailure || !strings.Contains(errOut.String(), "interrupted") || !strings.Contains(errOut.String(), resume) {
		t.Fatalf("got exit %d; want %d, the search interrupted and %q", code, ExitFailure, resume)
	}
	if n := tables(); n != 1 {
		t.Errorf("after the interrupted search: %d tables in sweepcap, want the prepared one kept for the resumed search", n)
	}

	code, stdout, stderr := runCLI(t.Context(), "sweep", "--resume", "1", "--store="+storePath)
	t.Logf("resumed:\n%s%s", stdout, stderr)
	if code != ExitOK && code != ExitFailure || !strings.Contains(stdout+stderr, "every step is stored as ok; the capacity search runs again") ||
		!strings.Contains(stdout, "Capacity of oltp_point_select") {
		t.Errorf("resume: got exit %d; want no step run again and the search's report", code)
	}
	if strings.Contains(stdout+stderr, "doesn't exist") {
		t.Errorf("the search ran without its data")
	}
	if n := tables(); n != 0 {
		t.Errorf("after the search: %d tables in sweepcap, want none (cleanup: true)", n)
	}
}
