package cli

import (
	"bytes"
	"context"
	"database/sql"
	"regexp"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
)

// openSandbox opens a pool on a sandbox's URL.
func openSandbox(t *testing.T, url string) *sql.DB {
	t.Helper()
	tg, err := target.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	db, err := tg.Open(tg.Endpoints()[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// runSandboxCLI runs one command line in-process with SHAKEDOWN_HOME=home.
func runSandboxCLI(t *testing.T, home string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{
		Stdin:  strings.NewReader(""),
		Stdout: &out,
		Stderr: &errb,
		Getenv: func(k string) string {
			if k == "SHAKEDOWN_HOME" {
				return home
			}
			return ""
		},
	}
	code = Main(t.Context(), env, args)
	return code, out.String(), errb.String()
}

func TestSandboxBadInput(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{"no subcommand", []string{"sandbox"}, "missing subcommand: use up, start, stop, down or list"},
		{"unknown subcommand", []string{"sandbox", "begin", "x"}, `unknown subcommand "begin"`},
		{"start a sandbox that does not exist", []string{"sandbox", "start", "x"}, "no sandbox x in"},
		{"stop a sandbox that does not exist", []string{"sandbox", "stop", "x"}, "no sandbox x in"},
		{"up without name", []string{"sandbox", "up"}, "sandbox up: missing NAME"},
		{"up two names", []string{"sandbox", "up", "a", "b"}, `unexpected argument "b"`},
		{"up bad name", []string{"sandbox", "up", "a/b"}, `sandbox name "a/b": use 1-64 letters`},
		{"up set without =", []string{"sandbox", "up", "a", "--set", "max_connections"}, `--set "max_connections": want var=value`},
		{"up set port", []string{"sandbox", "up", "a", "--set", "port=1"}, "--set port: use --port"},
		{"up bad port", []string{"sandbox", "up", "a", "--port", "70000"}, "--port 70000: want 1-65535"},
		{"up port not a number", []string{"sandbox", "up", "a", "--port", "x"}, "--port"},
		{"up unknown flag", []string{"sandbox", "up", "a", "--bogus"}, "--bogus: unknown option"},
		{"up cpus that do not parse", []string{"sandbox", "up", "a", "--cpus", "0-"}, `sandbox up: --cpus 0-: "0-" is not a CPU number or range`},
		{"up cpus the machine lacks", []string{"sandbox", "up", "a", "--cpus", "8191"}, "sandbox up: --cpus 8191: this machine has no CPU 8191 that shakedown may use"},
		{"up quota that does not parse", []string{"sandbox", "up", "a", "--cpu-quota", "half"}, `sandbox up: --cpu-quota: "half" is not a quota`},
		{"up zero quota", []string{"sandbox", "up", "a", "--cpu-quota", "0%"}, "below the smallest quota"},
		{"up unknown numa policy", []string{"sandbox", "up", "a", "--numa", "bind"}, "sandbox up: --numa bind: want interleave"},
		{"down without name", []string{"sandbox", "down"}, "sandbox down: missing NAME"},
		{"down bad name", []string{"sandbox", "down", ".."}, `sandbox name ".."`},
		{"list with argument", []string{"sandbox", "list", "x"}, `sandbox list: unexpected argument "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			code, stdout, stderr := runSandboxCLI(t, home, tt.args...)
			if code != ExitUsage {
				t.Errorf("got exit %d, want %d (stderr %q)", code, ExitUsage, stderr)
			}
			if !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("got stderr %q, want it to contain %q", stderr, tt.wantStderr)
			}
			if stdout != "" {
				t.Errorf("got stdout %q, want none", stdout)
			}
		})
	}
}

func TestSandboxHelpAndEmpty(t *testing.T) {
	home := t.TempDir()
	for _, args := range [][]string{{"sandbox", "--help"}, {"sandbox", "up", "--help"}} {
		code, stdout, _ := runSandboxCLI(t, home, args...)
		if code != ExitOK || !strings.Contains(stdout, "--url-only") || !strings.Contains(stdout, "sandbox down NAME") {
			t.Errorf("%v: got exit %d and %q, want 0 and the usage", args, code, stdout)
		}
	}
	code, stdout, stderr := runSandboxCLI(t, home, "sandbox", "list")
	if code != ExitOK || !strings.Contains(stdout, "no sandboxes in "+home) {
		t.Errorf("list: got exit %d, stdout %q, stderr %q; want 0 and no sandboxes", code, stdout, stderr)
	}
	code, _, stderr = runSandboxCLI(t, home, "sandbox", "down", "nope")
	if code != ExitUsage || !strings.Contains(stderr, "no sandbox nope") {
		t.Errorf("down missing: got exit %d, stderr %q; want 2 and no sandbox nope", code, stderr)
	}
}

func TestSandboxUpListDown(t *testing.T) {
	sandboxtest.RequireServer(t)
	t.Parallel() // servers of its own, no timings: it runs beside the other such tests, after the rest
	home := t.TempDir()
	small := []string{"--set", "innodb_buffer_pool_size=256M", "--set", "innodb-log-file-size=64M"}
	t.Cleanup(func() {
		for _, n := range []string{"cli-a", "cli-b"} {
			_ = sandbox.Down(context.Background(), home+"/sandboxes", n)
		}
	})

	code, stdout, stderr := runSandboxCLI(t, home, append([]string{"sandbox", "up", "cli-a"}, small...)...)
	if code != ExitOK {
		t.Fatalf("up: got exit %d, stderr %q", code, stderr)
	}
	lineRE := regexp.MustCompile(`^sandbox cli-a up: (MariaDB|MySQL) \d+\.\d+\.\d+ on 127\.0\.0\.1:(\d+) \(socket \S+\); target (mysql://shakedown@127\.0\.0\.1:(\d+)/sbtest)\n$`)
	m := lineRE.FindStringSubmatch(stdout)
	if m == nil || m[2] != m[4] {
		t.Fatalf("up: got %q, want a line matching %s", stdout, lineRE)
	}
	urlA := m[3]

	code, stdout, stderr = runSandboxCLI(t, home, append([]string{"sandbox", "up", "--url-only", "cli-b"}, small...)...)
	if code != ExitOK {
		t.Fatalf("up --url-only: got exit %d, stderr %q", code, stderr)
	}
	if !regexp.MustCompile(`^mysql://shakedown@127\.0\.0\.1:\d+/sbtest\n$`).MatchString(stdout) || strings.TrimSpace(stdout) == urlA {
		t.Errorf("up --url-only: got %q, want only a URL on another port than %s", stdout, urlA)
	}

	// up of a running sandbox as it is prints its URL, for scripts that
	// run it every time; other settings are refused, named, and nothing
	// is deleted.
	code, stdout, stderr = runSandboxCLI(t, home, append([]string{"sandbox", "up", "cli-a", "--url-only"}, small...)...)
	if code != ExitOK || stdout != urlA+"\n" {
		t.Errorf("up --url-only of a running sandbox: got exit %d, stdout %q, stderr %q; want 0 and %s", code, stdout, stderr, urlA)
	}
	code, stdout, _ = runSandboxCLI(t, home, "sandbox", "up", "cli-a")
	if code != ExitOK || !strings.HasPrefix(stdout, "sandbox cli-a already up: ") || !strings.Contains(stdout, urlA) {
		t.Errorf("up of a running sandbox: got exit %d, stdout %q; want 0 and already up at %s", code, stdout, urlA)
	}
	code, stdout, stderr = runSandboxCLI(t, home, "sandbox", "up", "cli-a", "--url-only", "--set", "innodb_buffer_pool_size=512M")
	if want := "sandbox cli-a runs with other settings than asked: --set innodb_buffer_pool_size=512M (it has innodb_buffer_pool_size=256M). Its data stays"; code != ExitUsage || stdout != "" || !strings.Contains(stderr, want) {
		t.Errorf("up of a running sandbox with other settings: got exit %d, stdout %q, stderr %q; want 2 and %q", code, stdout, stderr, want)
	}

	code, stdout, _ = runSandboxCLI(t, home, "sandbox", "list")
	if code != ExitOK {
		t.Fatalf("list: got exit %d", code)
	}
	for _, want := range []string{"NAME", "cli-a", "cli-b", "running", urlA} {
		if !strings.Contains(stdout, want) {
			t.Errorf("list: got %q, want %q in it", stdout, want)
		}
	}

	// Killed as a crash would, cli-a comes back with its data.
	db := openSandbox(t, urlA)
	vfyExec(t, db, "CREATE TABLE sbtest.kept (id INT PRIMARY KEY)", "INSERT INTO sbtest.kept VALUES (42)")
	db.Close()
	if err := sandbox.Kill(context.Background(), home+"/sandboxes", "cli-a"); err != nil {
		t.Fatal(err)
	}
	if _, stdout, _ = runSandboxCLI(t, home, "sandbox", "list"); !regexp.MustCompile(`cli-a +stopped`).MatchString(stdout) {
		t.Errorf("list after kill -9: got %q, want cli-a stopped", stdout)
	}
	code, _, stderr = runSandboxCLI(t, home, "sandbox", "up", "cli-a", "--set", "sync_binlog=1")
	if code != ExitUsage || !strings.Contains(stderr, "sandbox cli-a exists (stopped) with other settings than asked: --set sync_binlog=1 (it has the server's default)") {
		t.Errorf("up of a stopped sandbox with new settings: got exit %d, stderr %q; want 2", code, stderr)
	}
	code, stdout, stderr = runSandboxCLI(t, home, "sandbox", "up", "cli-a")
	if code != ExitOK || !strings.Contains(stdout, "sandbox cli-a started again with its data") || !strings.Contains(stdout, urlA) {
		t.Fatalf("up of a killed sandbox: got exit %d, stdout %q, stderr %q; want it started again at %s", code, stdout, stderr, urlA)
	}
	db = openSandbox(t, urlA)
	var id int
	if err := db.QueryRow("SELECT id FROM sbtest.kept").Scan(&id); err != nil || id != 42 {
		t.Errorf("data after the restart: got %d, %v; want 42", id, err)
	}
	db.Close()
	code, stdout, _ = runSandboxCLI(t, home, "sandbox", "stop", "cli-a")
	if code != ExitOK || !strings.Contains(stdout, "sandbox cli-a stopped; its data stays") {
		t.Errorf("stop: got exit %d, %q", code, stdout)
	}
	code, stdout, _ = runSandboxCLI(t, home, "sandbox", "start", "cli-a", "--url-only")
	if code != ExitOK || stdout != urlA+"\n" {
		t.Errorf("start --url-only: got exit %d, %q; want %s", code, stdout, urlA)
	}

	for _, n := range []string{"cli-a", "cli-b"} {
		code, stdout, stderr = runSandboxCLI(t, home, "sandbox", "down", n)
		if code != ExitOK || stdout != "sandbox "+n+" down\n" {
			t.Errorf("down %s: got exit %d, stdout %q, stderr %q", n, code, stdout, stderr)
		}
	}
	code, stdout, _ = runSandboxCLI(t, home, "sandbox", "list")
	if code != ExitOK || !strings.Contains(stdout, "no sandboxes") {
		t.Errorf("list after down: got exit %d, %q; want no sandboxes", code, stdout)
	}
}
