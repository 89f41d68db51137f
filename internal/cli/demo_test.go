package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/demo"
	"github.com/shakedown/shakedown/internal/host"
	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

// TestDemo runs a short demo end to end: two sandboxes, a sweep of the
// two workloads at one thread level (the sweep tests cover several), the
// report, and the sandboxes gone at the end.
func TestDemo(t *testing.T) {
	sandboxtest.RequireServer(t)
	dir := filepath.Join(t.TempDir(), "demo")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	code, stdout, stderr := runEnv(ctx, nil, "demo", "--out", dir, "--time", "1", "--threads", "4", "--max-repeats", "3")
	if code != 0 {
		t.Fatalf("demo: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	for _, w := range []string{"Candidates against the control (durable)", "oltp_write_only", "oltp_point_select", "95% interval",
		"report:", "stopped the sandboxes (durable, relaxed)", "demo done in",
		"into the candidate's own tables", "relaxed: not ready:", "rehearsal done in"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout: want %q in\n%s", w, stdout)
		}
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatalf("no report: %v", err)
	}
	if strings.Contains(string(page), "http://") || strings.Contains(string(page), "https://") {
		t.Errorf("report.html refers to the network")
	}
	for _, f := range []string{"shakedown.db", "plan.yaml", "rehearsal/rehearsal.yaml", "rehearsal/app-relaxed.readiness.html"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("demo left no %s: %v", f, err)
		}
	}
	// Only the durability settings differ between the two servers.
	code, out, errOut := runEnv(ctx, nil, "report", "--store", filepath.Join(dir, "shakedown.db"), "--format", "json")
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	var rep struct {
		DifferingVariables []struct{ Name string } `json:"differing_variables"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report json: %v", err)
	}
	var names []string
	for _, v := range rep.DifferingVariables {
		names = append(names, v.Name)
	}
	if got := strings.Join(names, ","); got != "innodb_flush_log_at_trx_commit,sync_binlog" {
		t.Errorf("variables differing between durable and relaxed: %s; want the two durability settings only", got)
	}
	left, err := sandbox.List(filepath.Join(dir, "sandboxes"))
	if err != nil || len(left) != 0 {
		t.Errorf("sandboxes left behind: %v, %v", left, err)
	}
}

// demo --candidate tidb: the same sweep and report against a TiDB
// sandbox, and the rehearsal of the move to it, which says why it is not
// ready (TiDB has no triggers; the copy leaves them out and says so).
func TestDemoTiDB(t *testing.T) {
	sandboxtest.RequireServer(t)
	bin, err := sandboxtest.TiDBServer()
	if err != nil {
		t.Fatal(err)
	}
	if bin == "" {
		t.Skip(sandboxtest.TiDBGet)
	}
	dir := filepath.Join(t.TempDir(), "demo")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	code, stdout, stderr := runEnv(ctx, map[string]string{"SHAKEDOWN_TIDB_SERVER": bin},
		"demo", "--candidate", "tidb", "--out", dir, "--time", "1", "--threads", "4", "--max-repeats", "3")
	if code != 0 {
		t.Fatalf("demo: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	for _, w := range []string{"tidb     candidate TiDB ", "Candidates against the control (durable)", "oltp_write_only",
		"stopped the sandboxes (durable, tidb)", "copy       pass", "tidb: not ready:", "TiDB has no triggers"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout: want %q in\n%s", w, stdout)
		}
	}
}

// demo --candidate vitess: the same sweep and report against vtgate over
// a MariaDB set as the control, and the rehearsal's copy into it.
func TestDemoVitess(t *testing.T) {
	bin := sandboxtest.RequireVitess(t)
	if os.Getenv("SHAKEDOWN_TEST_VITESS_FULL") == "" {
		// 90 s more would take make test past 15 minutes where vtcombo
		// is built; the contract suite covers the same commands on Vitess.
		t.Skip("the demo against Vitess runs under make test-vitess (SHAKEDOWN_TEST_VITESS_FULL=1)")
	}
	dir := filepath.Join(t.TempDir(), "demo")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	code, stdout, stderr := runEnv(ctx, map[string]string{"SHAKEDOWN_VITESS_SERVER": bin},
		"demo", "--candidate", "vitess", "--out", dir, "--time", "1", "--threads", "4", "--max-repeats", "3")
	if code != 0 {
		t.Fatalf("demo: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	for _, w := range []string{"vitess   candidate Vitess ", " over MariaDB ", "Candidates against the control (durable)", "oltp_write_only",
		"stopped the sandboxes (durable, vitess)", "copy       pass", "replay     pass", "vitess: not ready:"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout: want %q in\n%s", w, stdout)
		}
	}
}

func TestDemoBadInput(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"time", []string{"--time", "0"}, "--time must be >= 1"},
		{"port past the last", []string{"--port", "65535"}, "demo: --port 65535: want 1-65534 (the control listens on it, the candidate on the next), or 0 for free ports"},
		{"negative port", []string{"--port", "-1"}, "demo: --port -1: want 1-65534"},
		{"a candidate it does not run", []string{"--candidate", "oracle"}, "demo: --candidate oracle: want mariadb, tidb or vitess"},
		{"tidb with placement", []string{"--candidate", "tidb", "--placement"}, "it takes no --candidate tidb"},
		{"vitess with placement", []string{"--candidate", "vitess", "--placement"}, "it takes no --candidate vitess"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runEnv(context.Background(), nil, append([]string{"demo", "--out", dir}, tc.args...)...)
			if code != ExitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("got exit %d and %q, want %d and %q", code, stderr, ExitUsage, tc.want)
			}
		})
	}
}

// TestDemoPlacementTargets checks what demo --placement compares: the
// same server on half the CPUs this process may use against it under a
// quota of as much CPU time, control first.
func TestDemoPlacementTargets(t *testing.T) {
	if _, err := sandbox.ParsePlacement("", "100%", ""); err != nil {
		t.Skipf("no writable cgroup here: %v", err)
	}
	targets, err := demo.Targets(true, "mariadb")
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) != 2 || targets[0].Role != "control" || targets[1].Role != "candidate" {
		t.Fatalf("got targets %+v, want a control and a candidate", targets)
	}
	cpus, err := host.ParseCPUList(targets[0].Place.CPUs)
	if err != nil {
		t.Fatalf("control's --cpus %q: %v", targets[0].Place.CPUs, err)
	}
	if want := max(len(sandbox.AllowedCPUs())/2, 1); len(cpus) != want {
		t.Errorf("got the control on %d CPUs (%s), want %d, half of those allowed", len(cpus), targets[0].Place.CPUs, want)
	}
	if got, want := targets[1].Place.CPUQuota, 100*len(cpus); got != want || targets[1].Place.CPUs != "" {
		t.Errorf("got the candidate at %d%% on CPUs %q, want %d%% on any CPU: as much CPU time as the control", got, targets[1].Place.CPUs, want)
	}
	plan := string((&demoCmd{placement: true, threads: []int{4}, timeS: 2, maxRepeats: 3}).planText(nil))
	if !strings.Contains(plan, "workloads: [oltp_point_select, oltp_read_only]") {
		t.Errorf("got plan\n%s\nwant oltp_point_select and oltp_read_only", plan)
	}
}
