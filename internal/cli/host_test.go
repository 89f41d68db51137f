package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/host"
	"github.com/shakedown/shakedown/internal/sandbox/gmstest"
)

func TestHostBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"version":7}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no subcommand", []string{"host"}, "missing subcommand"},
		{"unknown subcommand", []string{"host", "show"}, `unknown subcommand "show"`},
		{"pid and sandbox", []string{"host", "facts", "--pid", "1", "--sandbox", "a"}, "--pid or --sandbox, not both"},
		{"negative pid", []string{"host", "facts", "--pid", "-3"}, "--pid must be a process id"},
		{"two targets", []string{"host", "facts", "mysql://a@127.0.0.1:1/", "mysql://a@127.0.0.1:2/"}, "at most one TARGET"},
		{"diff of one", []string{"host", "diff", "local"}, "at least two hosts"},
		{"diff of nothing known", []string{"host", "diff", "local", "nosuchfile.json"}, `"nosuchfile.json" is no file, pid:PID, sandbox:NAME, TARGET URL or local`},
		{"diff bad pid", []string{"host", "diff", "local", "pid:abc"}, `"pid:abc": pid:PID needs a process id`},
		{"diff bad file", []string{"host", "diff", "local", bad}, bad + ": host facts version 7, want 1"},
		{"diff no sandbox name", []string{"host", "diff", "local", "sandbox:"}, "sandbox:NAME needs a name"},
		{"unknown flag", []string{"host", "diff", "--everything"}, "--everything: unknown option"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(context.Background(), tc.args...)
			if code != ExitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("got exit %d and %q, want %d and %q", code, stderr, ExitUsage, tc.want)
			}
		})
	}
	// An output file that cannot be written is a failure (exit 1), as in
	// every command, said before any fact is read.
	nowhere := filepath.Join(dir, "no", "such", "f.json")
	code, stdout, stderr := runCLI(context.Background(), "host", "facts", "--json", nowhere)
	if want := "--json " + nowhere + ": cannot be written"; code != ExitFailure || stdout != "" || !strings.Contains(stderr, want) {
		t.Errorf("json into nowhere: got exit %d, stdout %q and %q, want %d, nothing and %q", code, stdout, stderr, ExitFailure, want)
	}
}

// TestHostFactsThisMachine reads this machine's facts for this test's own
// process: every row has a value or its reason, and the rows every Linux
// host has are filled.
func TestHostFactsThisMachine(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "facts.json")
	pid := strconv.Itoa(os.Getpid())
	code, out, stderr := runCLI(context.Background(), "host", "facts", "--pid", pid, "--datadir", dir, "--json", file)
	if code != 0 {
		t.Fatalf("exit: got %d, want 0\n%s%s", code, out, stderr)
	}
	if !strings.Contains(out, "pid "+pid) || !strings.Contains(out, "unknown (each says why)") {
		t.Errorf("text output lacks the subject or the count:\n%s", out)
	}
	in, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	f, err := host.ReadJSON(in, file)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range f.Facts {
		if !x.Known() && x.Reason == "" {
			t.Errorf("%s: neither value nor reason", x.Name)
		}
	}
	for _, name := range []string{"kernel.release", "process.cpus_allowed", "process.limit.open_files", "vm.swappiness", "net.core.somaxconn", "fs.file-max"} {
		if x, ok := f.Get(name); !ok || !x.Known() {
			t.Errorf("%s: got %+v, want a value on a Linux host", name, x)
		}
	}
	if x, _ := f.Get("mysql.back_log"); x.Known() || !strings.Contains(x.Reason, "no target") {
		t.Errorf("mysql.back_log without a target: got %+v, want unknown, saying there is no target", x)
	}
}

// TestHostFactsTarget reads the SQL-only rows of a go-mysql-server target:
// each has its value or says the server lacks the variable.
func TestHostFactsTarget(t *testing.T) {
	srv := gmstest.Start(t)
	code, out, stderr := runCLI(context.Background(), "host", "facts", srv.URL, "--json", "-")
	if code != 0 {
		t.Fatalf("exit: got %d, want 0\n%s%s", code, out, stderr)
	}
	var f host.Facts
	if err := json.Unmarshal([]byte(out), &f); err != nil {
		t.Fatalf("--json -: %v\n%s", err, out)
	}
	if f.Version != host.Version || !strings.Contains(f.Subject.Target, "127.0.0.1") || f.Subject.Remote {
		t.Errorf("document: got version %d subject %+v, want version %d and the local target", f.Version, f.Subject, host.Version)
	}
	for _, x := range f.Facts {
		if x.Group != "sql" {
			continue
		}
		if !x.Known() && !strings.HasPrefix(x.Reason, "the server has no variable") {
			t.Errorf("%s: got reason %q, want a value or that the server lacks it", x.Name, x.Reason)
		}
	}
	if x, _ := f.Get("mysql.version"); !x.Known() {
		t.Errorf("mysql.version: got %+v, want the server's version", x)
	}
}

// TestHostDiffFiles compares a pinned server's facts with a quota one's:
// the cpuset and cpu.max come out named and explained, exit 3; a file
// against itself exits 0.
func TestHostDiffFiles(t *testing.T) {
	dir := t.TempDir()
	mk := func(name, cpus, quota string) string {
		f := &host.Facts{Version: host.Version, Host: "db1", CollectedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
			Subject: host.Subject{Sandbox: name},
			Facts: []host.Fact{
				{Name: "cgroup.cpuset.cpus.effective", Group: "cgroup", Kind: host.Setting, Value: cpus},
				{Name: "cgroup.cpu.max", Group: "cgroup", Kind: host.Setting, Value: quota},
				{Name: "vm.swappiness", Group: "memory", Kind: host.Setting, Value: "10"},
			}}
		path := filepath.Join(dir, name+".json")
		out, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		if err := host.WriteJSON(out, f); err != nil {
			t.Fatal(err)
		}
		return path
	}
	pinned, quota := mk("pinned", "0-1", "max 100000"), mk("quota", "0-15", "200000 100000 (2 CPUs)")
	code, out, stderr := runCLI(context.Background(), "host", "diff", pinned, quota)
	if code != ExitDifferences {
		t.Fatalf("exit: got %d, want %d\n%s%s", code, ExitDifferences, out, stderr)
	}
	for _, want := range []string{"cgroup.cpuset.cpus.effective  0-1", "cgroup.cpu.max", "200000 100000 (2 CPUs)", "what: the CPU quota", "2 settings differ, 2 of them explained"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "vm.swappiness") {
		t.Errorf("output lists the equal vm.swappiness:\n%s", out)
	}
	code, out, _ = runCLI(context.Background(), "host", "diff", pinned, quota, "--json")
	var doc struct {
		Differences []host.Difference `json:"differences"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != ExitDifferences || len(doc.Differences) != 2 {
		t.Errorf("--json: got exit %d, %v, %d differences, want %d and 2\n%s", code, err, len(doc.Differences), ExitDifferences, out)
	}
	code, out, _ = runCLI(context.Background(), "host", "diff", pinned, pinned)
	if code != 0 || !strings.Contains(out, "No setting differs") {
		t.Errorf("against itself: got exit %d and %q, want 0 and no differences", code, out)
	}
}

// hostFactsFile writes a one-fact host facts file: a cgroup's cpu.max.
func hostFactsFile(t *testing.T, dir, name, cpuMax string) string {
	t.Helper()
	f := &host.Facts{Version: host.Version, Host: name, Facts: []host.Fact{
		{Name: "cgroup.cpu.max", Group: "cgroup", Kind: host.Setting, Value: cpuMax}}}
	path := filepath.Join(dir, name+".json")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := host.WriteJSON(out, f); err != nil {
		t.Fatal(err)
	}
	return path
}
