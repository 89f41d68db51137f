package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every command that loads or measures and writes a file checks the file
// before it connects or starts a server: a path that cannot be written
// stops it with exit 1 and a line naming the flag and the path. The
// targets do not answer, so a command that connected first would say so
// ("refused") instead. (report, readiness and baseline only read a store
// and write what they read.)
func TestEveryCommandChecksItsOutputsFirst(t *testing.T) {
	dir := t.TempDir()
	write := fileWriter(t, dir)
	dead := deadTarget(t)
	slowLog := write("slow.log", "# Time: 261122 21:56:55\n# User@Host: a[a] @  [127.0.0.1]\n# Thread_id: 4  Schema: s  QC_hit: No\n"+
		"# Query_time: 0.1  Lock_time: 0.0  Rows_sent: 1  Rows_examined: 1\nSET timestamp=1;\nSELECT 1;\n")
	capture := filepath.Join(dir, "slow.capture")
	if code, _, errOut := runCLI(context.Background(), "capture", slowLog, "-o", capture); code != 0 {
		t.Fatalf("capture the slow log: exit %d: %s", code, errOut)
	}
	plan := write("plan.yaml", fmt.Sprintf("targets:\n  - name: a\n    url: %s\n    role: control\nworkloads: [ping]\nthreads: [1]\ntime: 1\n", dead))
	text := write("notes.txt", "not a database\n")
	const bad = "/proc/nope/out"
	bisect := []string{"vars", "bisect", dead, dead, "--workload=oltp_point_select", "--threads=1", "--allow-set-global"}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"run json", []string{"run", "ping", "--target=" + dead, "--time=1", "--json=" + bad}, "--json " + bad + ": cannot be written"},
		{"run store", []string{"run", "ping", "--target=" + dead, "--time=1", "--store=" + text}, "--store " + text + ": cannot be used"},
		{"slap json", []string{"slap", "--target=" + dead, "--query=select 1", "--json=" + bad}, "--json " + bad + ": cannot be written"},
		{"sweep store", []string{"sweep", plan, "--store=" + bad}, "--store " + bad + ": cannot be written"},
		{"verify html", []string{"verify", dead, dead, "--html=" + bad}, "--html " + bad + ": cannot be written"},
		{"check json", []string{"check", dead, dead, "--json=" + bad}, "--json " + bad + ": cannot be written"},
		{"check store", []string{"check", dead, dead, "--store=" + bad}, "--store " + bad + ": cannot be written"},
		{"replay html", []string{"replay", capture, "--control=" + dead, "--candidate=" + dead, "--html=" + bad}, "--html " + bad + ": cannot be written"},
		{"replay store", []string{"replay", capture, "--control=" + dead, "--candidate=" + dead, "--store=" + bad}, "--store " + bad + ": cannot be"},
		{"vars bisect json", append(bisect, "--json="+bad), "--json " + bad + ": cannot be written"},
		{"vars bisect undo", append(bisect, "--undo="+bad), "--undo " + bad + ": cannot be written"},
		{"capture output", []string{"capture", slowLog, "-o", bad}, "-o " + bad + ": cannot be written"},
		{"demo out", []string{"demo", "--out=" + bad}, "--out " + bad + ": cannot be created"},
		{"host facts json", []string{"host", "facts", "--json=" + bad}, "--json " + bad + ": cannot be written"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(context.Background(), tc.args...)
			if code != ExitFailure {
				t.Errorf("exit code: got %d, want %d\n%s", code, ExitFailure, stderr)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q: want it to contain %q", stderr, tc.want)
			}
			if strings.Contains(stderr, "refused") || strings.Contains(stdout, "Threads started") {
				t.Errorf("it connected before checking its outputs:\n%s%s", stdout, stderr)
			}
		})
	}
}

// fileWriter returns a function that writes a file of text named name in
// dir, readable by its owner only, and returns its path.
func fileWriter(t *testing.T, dir string) func(name, text string) string {
	t.Helper()
	return func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
}
