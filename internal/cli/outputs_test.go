package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// deadTarget is a URL where nobody listens: a command that got as far as
// connecting would say "connection refused".
func deadTarget(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprintf("mysql://u@127.0.0.1:%d/db", l.Addr().(*net.TCPAddr).Port)
}

// Every output path is checked before anything connects or runs, and a
// path that cannot be written stops the command with exit 1 and a line
// naming the flag and the path (never a temporary file beside it).
func TestOutputsCheckedBeforeTheLoad(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("not a database\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dead := deadTarget(t)
	run := []string{"run", "oltp_point_select", "--target=" + dead, "--time=1"}
	slap := []string{"slap", "--target=" + dead, "--query=select 1"}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"store in a directory that cannot exist", append(run, "--store=/proc/nope/x.db"), "--store /proc/nope/x.db: cannot be used"},
		{"store that is not a database", append(run, "--store="+text), "--store " + text + ": cannot be used"},
		{"json in a missing directory", append(run, "--json="+filepath.Join(dir, "nope", "r.json")), "--json " + filepath.Join(dir, "nope", "r.json") + ": cannot be written"},
		{"json that is a directory", append(run, "--json="+dir), "--json " + dir + ": cannot be written: it is a directory"},
		{"slap json", append(slap, "--json=/proc/nope/r.json"), "--json /proc/nope/r.json: cannot be written"},
		{"slap store", append(slap, "--store="+text), "--store " + text + ": cannot be used"},
		{"slap csv", append(slap, "--csv="+dir), "--csv " + dir + ": cannot be written"},
		{"verify fix sql", []string{"verify", dead, dead, "--fix-sql=/proc/nope/fix.sql"}, "--fix-sql /proc/nope/fix.sql: cannot be written"},
		{"verify html", []string{"verify", dead, dead, "--html=" + dir}, "--html " + dir + ": cannot be written"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(context.Background(), tc.args...)
			if code != ExitFailure {
				t.Errorf("exit code: got %d, want %d", code, ExitFailure)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q: want it to contain %q", stderr, tc.want)
			}
			if strings.Contains(stderr, "refused") || strings.Contains(stdout, "Threads started") {
				t.Errorf("it connected before checking its outputs:\n%s%s", stdout, stderr)
			}
			if strings.Contains(stderr, ".tmp") {
				t.Errorf("stderr names a temporary file: %q", stderr)
			}
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the checks left files behind: %v", entries)
	}
}

// sharedSmall is a database with the small oltp table, prepared once for
// the tests that only read it.
var sharedSmall struct {
	once sync.Once
	url  string
}

func smallDB(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		// The first caller would be skipped inside the Once and every later
		// one would find no database.
		t.Skip("needs a sandbox; -short runs none")
	}
	sharedSmall.once.Do(func() { sharedSmall.url = freshDB(t, "cliread") })
	if sharedSmall.url == "" {
		t.Fatal("the shared small database could not be prepared")
	}
	return sharedSmall.url
}

// --json - writes the result document to standard output, alone: the
// report goes to standard error.
func TestRunJSONToStdout(t *testing.T) {
	url := smallDB(t)
	code, stdout, stderr := runCLI(context.Background(), "run", "oltp_point_select", "--target="+url, "--table-size=2000", "--events=200", "--json=-", "--monitor=off")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("standard output is not one JSON document: %v\n%s", err, stdout)
	}
	if doc["transactions"] != 200.0 {
		t.Errorf("transactions: got %v, want 200", doc["transactions"])
	}
	if !strings.Contains(stderr, "SQL statistics:") {
		t.Errorf("the report is not on standard error:\n%s", stderr)
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error("a file named - was written")
	}
}

// A result that cannot be saved at the end is not lost: it goes to
// standard error as JSON, and the run exits 1.
func TestRunSaveFailureKeepsTheResult(t *testing.T) {
	url := smallDB(t)
	dir := filepath.Join(t.TempDir(), "out")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "r.json")
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- runCLIWith(context.Background(), &out, &errOut, "run", "oltp_point_select", "--target="+url, "--table-size=2000",
			"--time=2", "--report-interval=1", "--json="+path, "--monitor=off")
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "[ 1s ]") {
		if time.Now().After(deadline) {
			t.Fatalf("no interval line within 30s:\n%s\n%s", out.String(), errOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The directory becomes a file while the run goes on.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := <-done; code != ExitFailure {
		t.Errorf("exit code: got %d, want %d", code, ExitFailure)
	}
	stderr := errOut.String()
	if !strings.Contains(stderr, "--json: write "+path) || !strings.Contains(stderr, "could not be saved") {
		t.Errorf("stderr does not say what could not be saved:\n%s", stderr)
	}
	start := strings.Index(stderr, "{")
	end := strings.LastIndex(stderr, "}")
	var doc map[string]any
	if start < 0 || end < start || json.Unmarshal([]byte(stderr[start:end+1]), &doc) != nil || doc["workload"] != "oltp_point_select" {
		t.Errorf("the result is not on standard error as JSON:\n%s", stderr)
	}
}
