package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/vars"
)

func TestVarsBadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no subcommand", []string{"vars"}, "missing subcommand"},
		{"unknown subcommand", []string{"vars", "show"}, `unknown subcommand "show"`},
		{"one target", []string{"vars", "diff", "mysql://a@127.0.0.1:1/"}, "at least two TARGETs"},
		{"not a URL", []string{"vars", "diff", "mysql://a@127.0.0.1:1/", "127.0.0.1:2"}, "not a target URL"},
		{"unknown flag", []string{"vars", "diff", "--everything"}, "--everything: unknown option"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(context.Background(), tc.args...)
			if code != ExitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("got exit %d and %q, want %d and %q", code, stderr, ExitUsage, tc.want)
			}
		})
	}
}

func TestVarsHelp(t *testing.T) {
	code, out, _ := runCLI(context.Background(), "vars", "--help")
	if code != 0 || !strings.Contains(out, "vars diff TARGET TARGET") || !strings.Contains(out, "--all") {
		t.Errorf("got %d and %q, want 0 and the usage", code, out)
	}
}

// TestVarsDiffDurableRelaxed compares a durable sandbox with a relaxed one,
// as the demo has them: the two durability settings come first, explained,
// and the command exits 3; a server against itself exits 0.
func TestVarsDiffDurableRelaxed(t *testing.T) {
	sandboxtest.RequireServer(t)
	t.Parallel() // servers of its own, no timings: it runs beside the other such tests, after the rest
	insts := sandboxtest.StartAll(t, []string{"innodb_flush_log_at_trx_commit=1", "sync_binlog=1", "log_bin=ON"},
		[]string{"innodb_flush_log_at_trx_commit=0", "sync_binlog=0", "log_bin=ON"})
	durable, relaxed := insts[0].URL(), insts[1].URL()
	ctx := context.Background()

	code, out, stderr := runCLI(ctx, "vars", "diff", durable, relaxed)
	if code != ExitDifferences {
		t.Fatalf("exit: got %d, want %d\n%s%s", code, ExitDifferences, out, stderr)
	}
	var listed []string // variables marked as changing performance
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 3 && strings.HasSuffix(line, "*") {
			listed = append(listed, f[0])
		}
	}
	if len(listed) < 2 || listed[0] != "innodb_flush_log_at_trx_commit" || listed[1] != "sync_binlog" {
		t.Errorf("first variables: got %v, want innodb_flush_log_at_trx_commit then sync_binlog\n%s", listed, out)
	}
	for _, want := range []string{"durability: 1 writes and syncs the redo log at every commit", "durability: 1 syncs the binary log"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks the explanation %q:\n%s", want, out)
		}
	}
	for _, ignored := range []string{"server_id", "datadir", "socket", "pid_file", "port "} {
		if strings.Contains(out, "\n"+ignored) {
			t.Errorf("output lists per-instance %q:\n%s", ignored, out)
		}
	}

	code, out, _ = runCLI(ctx, "vars", "diff", durable, relaxed, "--json")
	var doc vars.Document
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != ExitDifferences {
		t.Fatalf("--json: exit %d, %v\n%s", code, err, out)
	}
	if d := doc.Differences; len(d) < 2 || d[0].Name != "innodb_flush_log_at_trx_commit" || d[0].Values[0] != "1" || d[0].Values[1] != "0" || !d[0].Relevant {
		t.Errorf("--json: got %+v, want innodb_flush_log_at_trx_commit 1 vs 0 first", doc.Differences)
	}

	code, out, stderr = runCLI(ctx, "vars", "diff", durable, durable)
	if code != 0 || !strings.Contains(out, "No differences") {
		t.Errorf("against itself: got exit %d and %q %q, want 0 and no differences", code, out, stderr)
	}
	code, out, _ = runCLI(ctx, "vars", "diff", durable, durable, "--all")
	if code != 0 || !strings.Contains(out, "Same on every server:") || !strings.Contains(out, "innodb_flush_log_at_trx_commit") {
		t.Errorf("against itself with --all: got exit %d and %q, want 0 and every variable", code, out)
	}
}
