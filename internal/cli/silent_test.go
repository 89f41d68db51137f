package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSilentServer points every command that connects at a server that
// accepts and never answers: each must give up after the connect timeout
// and say so, naming the address, the timeout and where to change it,
// never the driver's "invalid connection".
func TestSilentServer(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", silentServer(t))
	dir := t.TempDir()
	url := "mysql://shakedown@" + addr + "/sbtest?timeout=1s"
	server := "mysql://shakedown@" + addr + "/?timeout=1s"
	write := fileWriter(t, dir)
	plan := write("plan.yaml", fmt.Sprintf("targets:\n  - name: a\n    url: %s\n    role: control\nworkloads: [ping]\nthreads: [1]\ntime: 1\n", url))
	slowLog := write("slow.log", "# Time: 261122 21:56:55\n# User@Host: a[a] @  [127.0.0.1]\n# Thread_id: 4  Schema: sbtest  QC_hit: No\n"+
		"# Query_time: 0.1  Lock_time: 0.0  Rows_sent: 1  Rows_examined: 1\nSET timestamp=1;\nSELECT 1;\n")
	capture := filepath.Join(dir, "slow.capture")
	if code, _, errOut := runCLI(context.Background(), "capture", slowLog, "-o", capture); code != 0 {
		t.Fatalf("capture the slow log: exit %d: %s", code, errOut)
	}
	withFlag := "no answer from " + addr + " in 1s (--connect-timeout, or ?timeout= in the URL)"
	urlOnly := "no answer from " + addr + " in 1s (?timeout= in the URL)"
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"run", []string{"run", "ping", "--target", url, "--time", "1"}, withFlag},
		{"run --connect-timeout", []string{"run", "ping", "--target", "mysql://shakedown@" + addr + "/sbtest", "--connect-timeout", "1s", "--time", "1"}, withFlag},
		{"prepare", []string{"prepare", "oltp_point_select", "--target", url}, withFlag},
		{"cleanup", []string{"cleanup", "oltp_point_select", "--target", url}, withFlag},
		{"slap", []string{"slap", "--target", url, "--query=select 1", "--concurrency=1", "--iterations=1"}, withFlag},
		{"sweep", []string{"sweep", plan, "--dry-run"}, urlOnly},
		{"watch", []string{"watch", server, "--count", "1"}, urlOnly},
		{"vars diff", []string{"vars", "diff", server, server}, urlOnly},
		{"vars bisect", []string{"vars", "bisect", url, url, "--workload", "ping", "--threads", "1"}, urlOnly},
		{"check", []string{"check", url, url}, urlOnly},
		{"verify", []string{"verify", url, url}, urlOnly},
		{"analyze", []string{"analyze", url}, urlOnly},
		{"replay", []string{"replay", capture, "--control", url, "--candidate", url}, urlOnly},
		{"capture general_log", []string{"capture", "mysql://shakedown@" + addr + "/mysql?timeout=1s", "--summary"}, urlOnly},
		{"report --store", []string{"report", "--store", url}, urlOnly},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// A deadline of its own, so that a command that hangs fails
			// the test rather than the whole run.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			code, _, errOut := runCLI(ctx, tc.args...)
			if code != ExitFailure {
				t.Errorf("exit code: got %d, want %d\nstderr: %s", code, ExitFailure, errOut)
			}
			if !strings.Contains(errOut, tc.want) {
				t.Errorf("stderr: got %q, want it to say %q", errOut, tc.want)
			}
			if strings.Contains(errOut, "invalid connection") {
				t.Errorf("stderr: got %q, want no driver's \"invalid connection\"", errOut)
			}
		})
	}
}
