package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/shakedown/shakedown/internal/bench"
	"github.com/shakedown/shakedown/internal/stats"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/runner"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/sweep"
	"github.com/shakedown/shakedown/internal/target"
)

// runEnv runs one command line in-process with the given environment
// variables.
func runEnv(ctx context.Context, vars map[string]string, args ...string) (code int, stdout, stderr string) {
	var out, errOut syncBuffer
	env := &Env{
		Stdin:  bytes.NewReader(nil),
		Stdout: &out,
		Stderr: &errOut,
		Getenv: func(k string) string { return vars[k] },
	}
	code = Main(ctx, env, args)
	return code, out.String(), errOut.String()
}

func writePlan(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// TestSweepRejectsBadPlans checks that a plan with a typo, an unknown
// workload or an unreachable target is refused before any run, with the
// line named, and that nothing is stored.
func TestSweepRejectsBadPlans(t *testing.T) {
	good := func(url string) string {
		return fmt.Sprintf(`targets:
  - name: a
    url: %s
    role: control
workloads:
  - oltp_point_select
threads: [1]
time: 1
`, url)
	}
	port := closedPort(t)
	tests := []struct {
		name   string
		plan   func(t *testing.T) string
		code   int
		stderr []string
	}{
		{"typo", func(t *testing.T) string { return good("mysql://u@127.0.0.1:1/d") + "repaets: 2\n" }, ExitUsage,
			[]string{`plan.yaml:9: unknown key "repaets" in plan (did you mean "repeats"?)`}},
		{"noise threshold with one repeat", func(t *testing.T) string {
			return good("mysql://u@127.0.0.1:1/d") + "repeats: 1\nnoise_threshold: 75%\n"
		}, ExitUsage,
			[]string{`plan.yaml:10: noise_threshold: 75%: want 0 to 50%`}},
		{"unknown order", func(t *testing.T) string { return good("mysql://u@127.0.0.1:1/d") + "order: random\n" }, ExitUsage,
			[]string{`plan.yaml:9: order: "random": want counterbalanced (the default), interleave or sequential`}},
		{"unknown baseline", func(t *testing.T) string { return good("mysql://u@127.0.0.1:1/d") }, ExitUsage,
			[]string{"no store at"}},
		{"unknown workload", func(t *testing.T) string {
			return strings.Replace(good("mysql://u@127.0.0.1:1/d"), "oltp_point_select", "oltp_teleport", 1)
		}, ExitUsage, []string{`plan.yaml:6: unknown workload "oltp_teleport"`, "oltp_read_write"}},
		{"unreachable target", func(t *testing.T) string {
			return fmt.Sprintf(`targets:
  - name: a
    url: %s
    role: control
  - name: gone
    url: mysql://shakedown@127.0.0.1:%d/sbtest
workloads: [oltp_point_select]
threads: [1]
time: 1
`, sandboxtest.URL(t), port)
		}, ExitFailure, []string{
			fmt.Sprintf("plan.yaml:5: target gone (mysql://shakedown@127.0.0.1:%d/sbtest): connect to 127.0.0.1:%d: connection refused", port, port),
			"nothing was run"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writePlan(t, tc.plan(t))
			db := filepath.Join(t.TempDir(), "s.db")
			args := []string{"sweep", path, "--store", db}
			if tc.name == "unknown baseline" {
				args = append(args, "--baseline", "nightly")
			}
			code, _, stderr := runEnv(context.Background(), nil, args...)
			if code != tc.code {
				t.Errorf("exit code: got %d, want %d (stderr %q)", code, tc.code, stderr)
			}
			for _, w := range tc.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr: got %q, want it to contain %q", stderr, w)
				}
			}
			if _, err := os.Stat(db); err == nil {
				t.Errorf("a store was made for a rejected plan")
			}
		})
	}
}

// TestSweepAndReport runs a small sweep through the command line with a
// password from the environment, then reports it in every format. The
// password must not show up anywhere: not in the output, not in the store.
func TestSweepAndReport(t *testing.T) {
	url := sandboxtest.URL(t)
	const user, pw = "sweeper", "Pw-d0-not-leak-7731"
	tg, err := target.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	db, err := tg.OpenNoDB(tg.Endpoints()[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, q := range []string{
		"DROP DATABASE IF EXISTS cli_a", "CREATE DATABASE cli_a", "DROP DATABASE IF EXISTS cli_b", "CREATE DATABASE cli_b",
		"CREATE USER IF NOT EXISTS '" + user + "'@'127.0.0.1' IDENTIFIED BY '" + pw + "'",
		"GRANT ALL PRIVILEGES ON *.* TO '" + user + "'@'127.0.0.1'",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	addr := fmt.Sprintf("127.0.0.1:%d", tg.Ports[0])
	path := writePlan(t, fmt.Sprintf(`name: cli
targets:
  - name: a
    url: mysql://%s@%s/cli_a
    password_env: SWEEP_PW
    role: control
  - name: b
    url: mysql://%s@%s/cli_b
    password_env: SWEEP_PW
options: {tables: 1, table-size: 100}
workloads: [oltp_point_select]
threads: [1, 2]
time: 1
prepare: true
prepare_threads: 1
`, user, addr, user, addr))
	store := filepath.Join(t.TempDir(), "results.db")
	vars := map[string]string{"SWEEP_PW": pw}

	code, stdout, stderr := runEnv(ctx, vars, "sweep", path, "--store", store, "--verbose")
	if code != 0 {
		t.Fatalf("sweep: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	for _, w := range []string{"plan " + path + ": 4 steps", "Candidates against the control (a)", "oltp_point_select", "sweep 1: 4 of 4 steps ok"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("sweep stdout: want %q in\n%s", w, stdout)
		}
	}
	if !strings.Contains(stderr, "[ 1s ] thds: ") {
		t.Errorf("--verbose: want per-second lines in stderr, got\n%s", stderr)
	}
	all := stdout + stderr

	code, out, errOut := runEnv(ctx, vars, "report", "--store", store, "--format", "json")
	if code != 0 {
		t.Fatalf("report json: exit %d: %s", code, errOut)
	}
	all += out
	var doc struct {
		Rows []struct {
			Target  string   `json:"target"`
			Threads int      `json:"threads"`
			QPS     *float64 `json:"qps"`
			Ratio   *float64 `json:"ratio_vs_control"`
			Verdict string   `json:"verdict"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("report json: %v\n%s", err, out)
	}
	if len(doc.Rows) != 4 {
		t.Fatalf("rows: got %d, want 4", len(doc.Rows))
	}
	for _, r := range doc.Rows {
		if r.QPS == nil || *r.QPS <= 0 {
			t.Errorf("row %+v: want qps", r)
		}
		if (r.Target == "b") != (r.Verdict != "" && r.Ratio != nil) {
			t.Errorf("row %+v: want ratio and verdict on the candidate only", r)
		}
	}

	for _, format := range []string{"text", "md", "csv"} {
		code, out, errOut := runEnv(ctx, vars, "report", "--store", store, "--sweep", "1", "--format", format)
		if code != 0 || !strings.Contains(out, "oltp_point_select") {
			t.Errorf("report %s: exit %d, %q, stderr %q", format, code, out, errOut)
		}
		all += out
	}
	html := filepath.Join(t.TempDir(), "r.html")
	if code, _, errOut := runEnv(ctx, vars, "report", "--store", store, "-o", html); code != 0 {
		t.Fatalf("report -o: exit %d: %s", code, errOut)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(page), "<!DOCTYPE html>") || strings.Contains(string(page), "http://") || strings.Contains(string(page), "https://") {
		t.Errorf("-o r.html: want a self-contained HTML page, got %.200s", page)
	}
	all += string(page)
	code, out, _ = runEnv(ctx, vars, "report", "--store", store, "--list")
	if code != 0 || !strings.Contains(out, "cli") || !strings.Contains(out, "done") {
		t.Errorf("report --list: exit %d, %q", code, out)
	}

	raw, err := os.ReadFile(store)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(pw)) {
		t.Errorf("the store holds the password")
	}
	if strings.Contains(all, pw) {
		t.Errorf("the output shows the password")
	}
}

func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.db")
	notJSON, noOutcome := filepath.Join(dir, "bisect.txt"), filepath.Join(dir, "other.json")
	for path, body := range map[string]string{notJSON: "round 1\n", noOutcome: `{"causes": []}`} {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no store", []string{"report", "--store", missing}, "no store at"},
		{"no bisect file", []string{"report", "--bisect", filepath.Join(dir, "none.json")}, "report --bisect " + filepath.Join(dir, "none.json") + ": no such file"},
		{"bisect file not JSON", []string{"report", "--bisect", notJSON}, "report --bisect " + notJSON + ": "},
		{"bisect file of something else", []string{"report", "--bisect", noOutcome}, "report --bisect " + noOutcome + ": read vars bisect result: no outcome"},
		{"bisect with history", []string{"report", "--history", "--bisect", noOutcome}, "--bisect goes with a sweep"},
		{"bad format", []string{"report", "--format", "pdf"}, `--format "pdf"`},
		{"bad sweep", []string{"report", "--sweep", "first"}, `--sweep "first"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runEnv(context.Background(), nil, tc.args...)
			if code != ExitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("got exit %d and %q, want %d and %q", code, stderr, ExitUsage, tc.want)
			}
		})
	}
}

// TestReportLooseRuns reports runs made one by one, from the store and
// from their result documents, with the control chosen by --control.
func TestReportLooseRuns(t *testing.T) {
	url := sandboxtest.URL(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "runs.db")
	var files []string
	for _, name := range []string{"today", "tomorrow"} {
		for _, th := range []string{"1", "2"} {
			file := filepath.Join(dir, name+"-"+th+".json")
			code, out, errOut := runCLI(context.Background(), "run", "ping", "--target="+url, "--name="+name, "--threads="+th, "--time=1",
				"--store="+db, "--json="+file)
			if code != 0 {
				t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
			}
			files = append(files, file)
		}
	}
	code, out, errOut := runCLI(context.Background(), "report", "--list", "--store="+db)
	if code != 0 || !strings.Contains(out, "Runs outside sweeps") || strings.Count(out, " ping ") != 4 {
		t.Errorf("--list: exit %d, want the 4 runs listed:\n%s%s", code, out, errOut)
	}
	type row struct {
		Target, Role, Workload string
		Threads                int
		Runs                   int
		Ratio                  *float64 `json:"ratio_vs_control"`
		Verdict                string
	}
	check := func(what string, args ...string) {
		t.Helper()
		code, out, errOut := runCLI(context.Background(), append([]string{"report", "--control=tomorrow", "--format=json"}, args...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", what, code, errOut)
		}
		var rep struct{ Rows []row }
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, out)
		}
		var got []string
		for _, r := range rep.Rows {
			got = append(got, fmt.Sprintf("%s/%s/%d/%d/%v", r.Target, r.Role, r.Threads, r.Runs, r.Ratio != nil && r.Verdict != ""))
		}
		want := "today/candidate/1/1/true today/candidate/2/1/true tomorrow/control/1/1/false tomorrow/control/2/1/false"
		if strings.Join(got, " ") != want {
			t.Errorf("%s: rows %s, want %s", what, strings.Join(got, " "), want)
		}
	}
	check("--runs all", "--store="+db, "--runs=all")
	check("--runs IDs", "--store="+db, "--runs=1,2,3,4")
	check("result files", files...)

	// A vars bisect result shown after the variables that differ.
	bis := filepath.Join(dir, "bisect.json")
	var doc bytes.Buffer
	if err := result.WriteBisectJSON(&doc, &result.Bisect{Control: "mysql://a", Candidate: "mysql://b", Workload: "oltp_write_only", Outcome: result.OutcomeBisected,
		Causes:  []result.BisectCause{{Variable: "sync_binlog", ControlValue: "1", CandidateValue: "0", Effect: result.Effect{Ratio: 1.5, Lo: 1.4, Hi: 1.6, State: stats.Faster}}},
		Cleared: []string{"sort_buffer_size"}}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bis, doc.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(context.Background(), append([]string{"report", "--control=tomorrow", "--bisect", bis}, files...)...)
	if code != 0 || !strings.Contains(out, "sync_binlog explains 1.50x; whether together the causes found account for the rest was not measured.") || !strings.Contains(out, "Cleared, shown not to matter (1): sort_buffer_size") {
		t.Errorf("--bisect: exit %d, want 0 and the bisect's block:\n%s%s", code, out, errOut)
	}

	for _, bad := range [][]string{
		{"report", "--store=" + db, "--runs=99"},
		{"report", "--store=" + db, "--runs=all", "--control=nobody"},
		{"report", "--store=" + db, "--runs=x"},
		{"report", "--store=" + db, "--control=today"},
		{"report", db},
	} {
		if code, _, errOut := runCLI(context.Background(), bad...); code != 2 || !strings.Contains(errOut, "report:") {
			t.Errorf("%q: exit %d, %q; want 2 and a message", bad, code, errOut)
		}
	}
}

// TestSweepResume interrupts a sweep, then continues it from the command
// line in the same store; a store with nothing to resume is bad input.
func TestSweepResume(t *testing.T) {
	url := sandboxtest.URL(t)
	mustExec(t, adminDB(t, url), "DROP DATABASE IF EXISTS resume_cli", "CREATE DATABASE resume_cli")
	url = strings.TrimSuffix(url, "/sbtest") + "/resume_cli"
	path := writePlan(t, fmt.Sprintf(`targets:
  - {name: a, url: "%s", role: control}
workloads:
  - name: oltp_point_select
    options: {tables: 1, table-size: 100}
threads: [1, 2]
time: 2
prepare: replace
`, url))
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Parse(path, src, func(string) string { return "" }, bench.Grammar{})
	if err != nil {
		t.Fatal(err)
	}
	envs, err := sweep.Check(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "s.db")
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Steps of two seconds: a one-second step may end before its first
	// whole interval, and OnInterval would not see it.
	_, err = sweep.Run(ctx, p, envs, sweep.Options{Store: st, OnInterval: func(s plan.Step, _ runner.Interval) {
		if s.Index == 2 {
			cancel()
		}
	}})
	st.Close()
	if !errors.Is(err, sweep.ErrInterrupted) {
		t.Fatalf("first part: got %v, want interrupted", err)
	}
	code, stdout, stderr := runEnv(context.Background(), nil, "sweep", "--resume", "--store", db)
	if code != ExitOK || !strings.Contains(stdout, "resuming sweep 1") || !strings.Contains(stdout, "sweep 1: 2 of 2 steps ok") {
		t.Errorf("resume: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	code, _, stderr = runEnv(context.Background(), nil, "sweep", "--resume", "--store", db)
	if code != ExitUsage || !strings.Contains(stderr, "holds no interrupted sweep") {
		t.Errorf("nothing to resume: got exit %d, %q; want 2", code, stderr)
	}
}
