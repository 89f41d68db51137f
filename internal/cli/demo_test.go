package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

// TestDemo runs a short demo end to end: two sandboxes, a sweep of the
// three workloads, the report, and the sandboxes gone at the end.
func TestDemo(t *testing.T) {
	sandboxtest.RequireServer(t)
	dir := filepath.Join(t.TempDir(), "demo")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	code, stdout, stderr := runEnv(ctx, nil, "demo", "--out", dir, "--time", "1", "--threads", "1,4")
	if code != 0 {
		t.Fatalf("demo: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	for _, w := range []string{"Candidates against the control (durable)", "oltp_write_only", "oltp_point_select", "oltp_read_write",
		"report:", "stopped the sandboxes (durable, relaxed)", "demo done in"} {
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
	for _, f := range []string{"shakedown.db", "plan.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("demo left no %s: %v", f, err)
		}
	}
	left, err := sandbox.List(filepath.Join(dir, "sandboxes"))
	if err != nil || len(left) != 0 {
		t.Errorf("sandboxes left behind: %v, %v", left, err)
	}
}

func TestDemoBadInput(t *testing.T) {
	code, _, stderr := runEnv(context.Background(), nil, "demo", "--time", "0")
	if code != ExitUsage || !strings.Contains(stderr, "--time must be >= 1") {
		t.Errorf("got exit %d and %q, want %d and the --time message", code, stderr, ExitUsage)
	}
}
