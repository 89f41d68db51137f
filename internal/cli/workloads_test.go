package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

// TestConnectModes checks that the server's Connections counter grows by
// what --connect-mode implies: the fixed connections of a run (checking the
// target, monitoring) plus one per thread, one per event, or one per
// statement (3 per hotrow event). It runs on the I/O loops, where a
// connection per event or statement is dialled off the loop (Offload).
func TestConnectModes(t *testing.T) {
	url := sandboxtest.URL(t)
	admin := adminDB(t, url)
	mustExec(t, admin, "CREATE DATABASE IF NOT EXISTS modes")
	url = strings.TrimSuffix(url, "/sbtest") + "/modes"
	if code, out, errOut := runCLI(context.Background(), "cleanup", "hotrow", "--target="+url); code != 0 {
		t.Fatalf("cleanup: %s %s", out, errOut)
	}
	if code, out, errOut := runCLI(context.Background(), "prepare", "hotrow", "--target="+url, "--rows=8"); code != 0 {
		t.Fatalf("prepare: %s %s", out, errOut)
	}
	const threads, events = 2, 60
	run := func(t *testing.T, mode string) (int64, string) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "r.json")
		var out string
		d := delta(t, admin, []string{"Connections"}, func() {
			var code int
			var errOut string
			code, out, errOut = runCLI(context.Background(), "run", "hotrow", "--target="+url, "--rows=8", "--threads=2", "--time=0",
				"--events=60", "--connect-mode="+mode, "--json="+path, "--client-io=loop")
			if code != 0 {
				t.Fatalf("run --connect-mode=%s: exit %d\n%s\n%s", mode, code, out, errOut)
			}
		})
		r := readResult(t, path)
		switch {
		case mode == "persistent" && r.Connect != nil:
			t.Errorf("persistent: got connect figures %+v, want none", r.Connect)
		case mode != "persistent" && (r.Connect == nil || r.Connect.Mode != mode):
			t.Errorf("%s: got connect figures %+v, want them for the mode", mode, r.Connect)
		}
		return d["Connections"], out
	}
	fixed, _ := run(t, "persistent")
	fixed -= threads
	cases := []struct {
		mode     string
		opened   int64 // by the threads
		wantLine string
	}{
		{"persistent", threads, ""},
		{"transaction", events, "connections opened:            60"},
		{"query", 3 * events, "connections opened:            180"},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			got, out := run(t, tc.mode)
			if want := fixed + tc.opened; got != want {
				t.Errorf("Connections grew by %d, want %d (%d for the run, %d by the threads)", got, want, fixed, tc.opened)
			}
			if tc.wantLine != "" && !strings.Contains(out, tc.wantLine) {
				t.Errorf("output lacks %q:\n%s", tc.wantLine, out)
			}
		})
	}
}

// TestNewWorkloadsRun runs ping, connect, hotrow and sql under run.
func TestNewWorkloadsRun(t *testing.T) {
	url := sandboxtest.URL(t)
	mustExec(t, adminDB(t, url), "CREATE DATABASE IF NOT EXISTS newwl")
	url = strings.TrimSuffix(url, "/sbtest") + "/newwl"
	dir := t.TempDir()
	setup := filepath.Join(dir, "setup.sql")
	file := filepath.Join(dir, "biz.sql")
	for path, body := range map[string]string{
		setup: "DROP TABLE IF EXISTS orders;\nCREATE TABLE orders (id INT PRIMARY KEY, user_id INT, amount INT);\n" +
			"INSERT INTO orders VALUES (1, 10, 5), (2, 11, 7), (3, 12, 9);\n",
		file: "-- @weight 3\nSELECT amount FROM orders WHERE id = {{uniform 1 3}};\n" +
			"SELECT id FROM orders WHERE user_id = {{column orders.user_id}};\n" +
			"-- @event pay\nBEGIN;\nUPDATE orders SET amount = amount + 1 WHERE id = {{o = zipf 1 3}};\nSELECT amount FROM orders WHERE id = {{o}};\nCOMMIT;\n",
	} {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, out, errOut := runCLI(context.Background(), "prepare", "hotrow", "--target="+url); code != 0 {
		t.Fatalf("prepare hotrow: %s %s", out, errOut)
	}
	t.Cleanup(func() { runCLI(context.Background(), "cleanup", "hotrow", "--target="+url) })
	if code, out, errOut := runCLI(context.Background(), "prepare", "sql", "--target="+url, "--file="+file, "--prepare-file="+setup); code != 0 {
		t.Fatalf("prepare sql: %s %s", out, errOut)
	}
	cases := []struct {
		name      string
		args      []string
		queries   func(events int64) int64 // per run
		wantLines []string
	}{
		{"ping com", []string{"ping"}, func(e int64) int64 { return e }, nil},
		{"ping select", []string{"ping", "--ping-mode=select"}, func(e int64) int64 { return e }, nil},
		{"connect", []string{"connect"}, func(e int64) int64 { return e }, []string{"connections opened:            200"}},
		{"hotrow", []string{"hotrow"}, func(e int64) int64 { return 3 * e }, nil},
		{"hotrow skewed without transactions", []string{"hotrow", "--skew=1.2", "--skip-trx"}, func(e int64) int64 { return e }, nil},
		{"sql", []string{"sql", "--file=" + file}, nil, []string{"Per statement (latency in ms):", "#4 pay.2: UPDATE orders SET amount = amount + 1 WHERE id = ?"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "r.json")
			args := append(append([]string{"run"}, tc.args...), "--target="+url, "--threads=2", "--time=0", "--events=200", "--json="+path)
			code, out, errOut := runCLI(context.Background(), args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
			}
			r := readResult(t, path)
			if r.Transactions != 200 || r.Errors.Total != 0 {
				t.Errorf("got %d events and %d errors, want 200 and none", r.Transactions, r.Errors.Total)
			}
			if tc.queries != nil && r.Queries.Total != tc.queries(200) {
				t.Errorf("got %d queries, want %d", r.Queries.Total, tc.queries(200))
			}
			for _, w := range tc.wantLines {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if tc.name == "sql" {
				if len(r.Statements) != 6 {
					t.Fatalf("got %d statements in the result, want 6", len(r.Statements))
				}
				var n int64
				for _, s := range r.Statements {
					n += s.Count
				}
				if n != r.Queries.Total {
					t.Errorf("statements add up to %d runs, want the %d queries", n, r.Queries.Total)
				}
				if pay := r.Statements[2]; pay.Count == 0 || pay.Count != r.Statements[5].Count {
					t.Errorf("the group's BEGIN ran %d times and its COMMIT %d, want the same, not 0", pay.Count, r.Statements[5].Count)
				}
			}
		})
	}
}

func TestNewWorkloadsBadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"connect mode", []string{"run", "ping", "--connect-mode=pooled"}, "--connect-mode must be persistent, transaction or query"},
		{"ping mode", []string{"run", "ping", "--ping-mode=icmp"}, "--ping-mode must be com or select"},
		{"hotrow rows", []string{"run", "hotrow", "--rows=0"}, "--rows must be >= 1"},
		{"hotrow skew", []string{"run", "hotrow", "--skew=-1"}, "--skew must be >= 0"},
		{"sql without a file", []string{"run", "sql"}, "--file is required"},
		{"sql missing file", []string{"run", "sql", "--file=/nonexistent/x.sql"}, "no such file"},
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
