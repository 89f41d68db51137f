package cli

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/target"
)

func TestRunBadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"unknown workload", []string{"run", "oltp_nonsense"}, []string{`unknown workload "oltp_nonsense"`, "oltp_read_write", "oltp_point_select"}},
		{"no workload", []string{"run"}, []string{"name a workload", "oltp_read_write"}},
		{"unknown option", []string{"run", "oltp_read_write", "--threadz=4"}, []string{"--threadz: unknown option (did you mean --threads?)"}},
		{"sysbench order, unknown option", []string{"oltp_read_write", "--bogus=1", "run"}, []string{"--bogus"}},
		{"bad threads", []string{"run", "oltp_read_write", "--threads=0"}, []string{"--threads must be >= 1"}},
		{"no limit", []string{"run", "oltp_read_write", "--time=0"}, []string{"--time=0 needs --events"}},
		{"bad ps mode", []string{"run", "oltp_read_write", "--db-ps-mode=sometimes"}, []string{"--db-ps-mode"}},
		{"bad ignore list", []string{"run", "oltp_read_write", "--mysql-ignore-errors=deadlock"}, []string{"--mysql-ignore-errors"}},
		{"bad workload option", []string{"run", "oltp_read_write", "--tables=0"}, []string{"--tables"}},
		{"bad bool", []string{"run", "oltp_read_write", "--skip_trx=perhaps"}, []string{"skip"}},
		{"unknown command", []string{"frobnicate"}, []string{`unknown command "frobnicate"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(context.Background(), tc.args...)
			if code != ExitUsage {
				t.Errorf("exit code: got %d, want %d (stderr %q)", code, ExitUsage, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q: want it to contain %q", stderr, w)
				}
			}
		})
	}
}

func TestRunHelpListsOptions(t *testing.T) {
	code, out, _ := runCLI(context.Background(), "run", "oltp_read_write", "--help")
	if code != 0 || !strings.Contains(out, "--point-selects") || !strings.Contains(out, "--mysql-host") {
		t.Errorf("got code %d and %q, want 0 and the option list", code, out)
	}
}

// adminDB opens the shared test server for set-up statements.
func adminDB(t *testing.T, url string) *sql.DB {
	t.Helper()
	tg, err := target.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	db, err := tg.OpenNoDB(tg.Endpoints()[0], 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustExec(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func hostPort(t *testing.T, url string) (string, string) {
	t.Helper()
	tg, err := target.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	ep := tg.Endpoints()[0]
	return ep.Host, fmt.Sprint(ep.Port)
}

func TestRunConnectionFaults(t *testing.T) {
	url := sandboxtest.URL(t)
	db := adminDB(t, url)
	mustExec(t, db,
		"CREATE USER IF NOT EXISTS 'pwtest'@'127.0.0.1' IDENTIFIED BY 'Right-Pass-1'",
		"GRANT ALL ON *.* TO 'pwtest'@'127.0.0.1'",
		"CREATE DATABASE IF NOT EXISTS emptydb",
	)
	host, port := hostPort(t, url)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadPort := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
	l.Close()

	base := []string{"run", "oltp_point_select", "--time=1", "--mysql-host=" + host}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"wrong password", []string{"--mysql-port=" + port, "--mysql-user=pwtest", "--mysql-password=Wrong-Pass-9", "--mysql-db=sbtest"}, "access denied for user \"pwtest\""},
		{"nobody listening", []string{"--mysql-port=" + deadPort, "--mysql-user=shakedown"}, "connection refused"},
		{"missing database", []string{"--mysql-port=" + port, "--mysql-user=shakedown", "--mysql-db=no_such_db"}, "database \"no_such_db\" does not exist"},
		{"missing tables", []string{"--mysql-port=" + port, "--mysql-user=shakedown", "--mysql-db=emptydb"}, "run prepare first"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, stdout, stderr := runCLI(context.Background(), append(base, tc.args...)...)
			want := ExitFailure
			if tc.name == "missing database" {
				want = ExitUsage // the user's to fix, as in every command
			}
			if code != want {
				t.Errorf("exit code: got %d, want %d", code, want)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q: want it to contain %q", stderr, tc.want)
			}
			if n := strings.Count(strings.TrimSpace(stderr), "\n"); n > 0 {
				t.Errorf("stderr has %d lines, want one: %q", n+1, stderr)
			}
			if strings.Contains(stdout+stderr, "Wrong-Pass-9") || strings.Contains(stdout+stderr, "Right-Pass-1") {
				t.Error("a password was printed")
			}
			if d := time.Since(start); d > 15*time.Second {
				t.Errorf("took %v, want within the connect timeout", d)
			}
		})
	}
}

func prepareSmall(t *testing.T, url string, extra ...string) {
	t.Helper()
	runCLI(context.Background(), "cleanup", "oltp_read_write", "--target="+url, "--tables=1")
	args := append([]string{"prepare", "oltp_read_write", "--target=" + url, "--tables=1", "--table-size=2000"}, extra...)
	if code, out, errOut := runCLI(context.Background(), args...); code != 0 {
		t.Fatalf("prepare: exit %d\n%s\n%s", code, out, errOut)
	}
}

func readResult(t *testing.T, path string) *result.Result {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := result.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRunWritesResultDocument(t *testing.T) {
	url := sandboxtest.URL(t)
	mustExec(t, adminDB(t, url), "CREATE DATABASE IF NOT EXISTS doc")
	url = strings.TrimSuffix(url, "/sbtest") + "/doc"
	prepareSmall(t, url)
	path := filepath.Join(t.TempDir(), "r.json")
	code, out, errOut := runCLI(context.Background(), "run", "oltp_read_write", "--target="+url, "--tables=1", "--table-size=2000",
		"--threads=2", "--time=2", "--report-interval=1", "--json="+path)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, w := range []string{"[ 1s ] thds: 2 tps:", "SQL statistics:", "queries performed:", "95th percentile:", "Threads fairness:"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"workload", "threads", "time_s", "queries", "transactions", "errors", "reconnects", "qps", "tps", "latency_ms", "intervals", "target", "histogram"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("result document lacks %q", k)
		}
	}
	r := readResult(t, path)
	// 20 statements an event; an event retried after a deadlock adds the
	// statements it ran before the error.
	if tx, q := r.Transactions, r.Queries.Total; tx == 0 || q < 20*tx || q > 20*(tx+r.Errors.Total) {
		t.Errorf("got %d transactions, %d errors and %d queries, want 20 queries per transaction", tx, r.Errors.Total, q)
	}
	if r.Errors.Total == 0 && (r.Queries.Read != 14*r.Transactions || r.Queries.Other != 2*r.Transactions) {
		t.Errorf("r/w/o %d/%d/%d for %d transactions, want 14/4/2 each", r.Queries.Read, r.Queries.Write, r.Queries.Other, r.Transactions)
	}
	if r.Target.Flavour != "mariadb" || r.Target.Version == "" {
		t.Errorf("target: got %+v, want flavour and version", r.Target)
	}
	if len(r.Intervals) < 2 {
		t.Errorf("got %d intervals, want 2", len(r.Intervals))
	}
	if !(r.LatencyMS.Min <= r.LatencyMS.P50 && r.LatencyMS.P50 <= r.LatencyMS.P95 && r.LatencyMS.P95 <= r.LatencyMS.P99 && r.LatencyMS.P99 <= r.LatencyMS.Max) {
		t.Errorf("latency out of order: %+v", r.LatencyMS)
	}
}

func TestRunPasswordNeverStored(t *testing.T) {
	url := sandboxtest.URL(t)
	db := adminDB(t, url)
	mustExec(t, db,
		"CREATE USER IF NOT EXISTS 'pwstore'@'127.0.0.1' IDENTIFIED BY 'Stored-Secret-7'",
		"GRANT ALL ON *.* TO 'pwstore'@'127.0.0.1'",
		"CREATE DATABASE IF NOT EXISTS pwdb",
	)
	host, port := hostPort(t, url)
	pwURL := "mysql://pwstore:Stored-Secret-7@" + host + ":" + port + "/pwdb"
	prepareSmall(t, pwURL)
	path := filepath.Join(t.TempDir(), "r.json")
	dbPath := filepath.Join(t.TempDir(), "store.db")
	code, out, errOut := runCLI(context.Background(), "run", "oltp_point_select", "--target="+pwURL, "--table-size=2000", "--time=1", "--json="+path, "--store="+dbPath,
		"--mysql-password", "Stored-Secret-7")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	raw, _ := os.ReadFile(path)
	stored, err := os.ReadFile(dbPath)
	if err != nil {
		t.Fatalf("--store: %v", err)
	}
	if !strings.Contains(out, "Result stored in") {
		t.Errorf("output does not say the result was stored:\n%s", out)
	}
	if strings.Contains(string(raw)+string(stored)+out+errOut, "Stored-Secret-7") {
		t.Error("the password appears in the output, the result document or the store")
	}
}

func TestRunInterruptedKeepsPartialResults(t *testing.T) {
	url := sandboxtest.URL(t)
	mustExec(t, adminDB(t, url), "CREATE DATABASE IF NOT EXISTS intr")
	url = strings.TrimSuffix(url, "/sbtest") + "/intr"
	prepareSmall(t, url)
	path := filepath.Join(t.TempDir(), "r.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan int)
	go func() {
		done <- runCLIWith(ctx, &out, &errOut, "run", "oltp_read_write", "--target="+url, "--tables=1", "--table-size=2000",
			"--threads=4", "--time=60", "--report-interval=1", "--json="+path, "--client-io=loop")
	}()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(out.String(), "[ 1s ]") {
		if time.Now().After(deadline) {
			t.Fatalf("no interval line within 20s:\n%s\n%s", out.String(), errOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	stopped := time.Now()
	var code int
	select {
	case code = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the run did not stop within 5s of Ctrl-C")
	}
	if d := time.Since(stopped); d > time.Second {
		t.Errorf("stopped %v after Ctrl-C, want within a second", d)
	}
	if code != ExitFailure {
		t.Errorf("exit code: got %d, want %d", code, ExitFailure)
	}
	if !strings.Contains(errOut.String(), "interrupted") || !strings.Contains(out.String(), "INTERRUPTED") {
		t.Errorf("want the run said to be interrupted; stdout:\n%s\nstderr: %s", out.String(), errOut.String())
	}
	r := readResult(t, path)
	if !r.Interrupted || r.Transactions == 0 {
		t.Errorf("saved result: interrupted %v with %d transactions, want true and > 0", r.Interrupted, r.Transactions)
	}
	// How the client drove the server, in the header and the result.
	if c := r.Client; c == nil || c.IO == nil || c.IO.Asked != "loop" || c.IO.Mode != "loop" || c.IO.Loops < 1 || !c.IO.Held {
		t.Errorf("saved result: client %+v, want its I/O recorded: --client-io loop, held loops", c)
	} else if want := "Client I/O: " + c.IO.String() + "\n"; !strings.Contains(out.String(), want) {
		t.Errorf("stdout: want %q in\n%s", want, out.String())
	}
}

// The server is killed (kill -9) mid-run and comes back: the run goes on
// reconnecting until --time, then reports what it measured with the
// errors, the reconnect attempts and failures and the time the server was
// away, marked degraded in the result and the store, and exits 1. Before,
// such a run exited 0 with "reconnects: 0" and a cross-check blaming a
// short run.
//
// It runs on the I/O loops: against a sandbox on this machine's cores,
// auto would choose blocking reads, which the wire tests cover.
func TestRunServerKilledIsDegraded(t *testing.T) {
	inst := sandboxtest.Start(t)
	url := inst.URL()
	prepareSmall(t, url)
	path := filepath.Join(t.TempDir(), "r.json")
	dbPath := filepath.Join(t.TempDir(), "store.db")
	var out, errOut syncBuffer
	done := make(chan int)
	go func() {
		done <- runCLIWith(context.Background(), &out, &errOut, "run", "oltp_read_write", "--target="+url, "--tables=1", "--table-size=2000",
			"--threads=4", "--time=8", "--report-interval=1", "--json="+path, "--store="+dbPath, "--client-io=loop")
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "[ 1s ]") {
		if time.Now().After(deadline) {
			t.Fatalf("no interval line within 30s:\n%s\n%s", out.String(), errOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := sandbox.Kill(ctx, inst.Home, inst.Name); err != nil {
		t.Fatal(err)
	}
	if _, err := sandbox.Start(ctx, inst.Home, inst.Name); err != nil {
		t.Fatal(err)
	}
	var code int
	select {
	case code = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not end")
	}
	if code != ExitFailure {
		t.Errorf("exit code: got %d, want %d\n%s\n%s", code, ExitFailure, out.String(), errOut.String())
	}
	if !strings.Contains(errOut.String(), "run degraded: the server could not be reached for") || !strings.Contains(out.String(), "DEGRADED:") {
		t.Errorf("the run is not said to be degraded:\n%s\n%s", out.String(), errOut.String())
	}
	r := readResult(t, path)
	a := r.Availability
	if !r.Degraded || a == nil || a.ReconnectFailures < 1 || a.ReconnectAttempts <= a.ReconnectFailures || a.UnavailableS <= 0 || a.FirstError == "" {
		t.Errorf("got degraded %v, availability %+v; want attempts, failures, time away and the first error", r.Degraded, a)
	}
	if r.Reconnects < 1 || r.Errors.Total < 1 || r.Transactions == 0 {
		t.Errorf("got %d reconnects, %d errors and %d transactions, want all > 0", r.Reconnects, r.Errors.Total, r.Transactions)
	}
	if r.TimeS < 7 || len(r.Intervals) < 4 {
		t.Errorf("run time %.1fs with %d intervals, want it to go on until --time (8s)", r.TimeS, len(r.Intervals))
	}
	if cc := r.CrossCheck; cc != nil && (cc.Mismatch || strings.Contains(cc.Note, "too short")) {
		t.Errorf("cross-check: got %+v, want no verdict on a degraded run", cc)
	}
	st, err := store.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.LooseRuns(context.Background(), nil)
	if err != nil || len(runs) != 1 || !runs[0].Degraded || runs[0].Status == store.RunOK {
		t.Errorf("stored: got %+v, %v; want one degraded run, not ok", runs, err)
	}
}

// run checks, before it starts, that the tables it will use are there and
// about as large as --table-size says; prepare over existing tables says
// to run cleanup first. Before, a run over half-prepared tables exited 0
// and prepare failed with a raw "Error 1050".
func TestRunNeedsPreparedData(t *testing.T) {
	url := freshDB(t, "prepcheck")
	db := adminDB(t, url)
	run := []string{"run", "oltp_read_only", "--target=" + url, "--tables=1", "--table-size=2000", "--events=50", "--monitor=off"}
	cases := []struct {
		name  string
		setup []string
		args  []string
		code  int
		want  string
	}{
		{"prepared", nil, run, 0, ""},
		{"prepare again", nil, []string{"prepare", "oltp_read_only", "--target=" + url, "--tables=1", "--table-size=2000"}, ExitFailure,
			"create table sbtest1: it exists already: run cleanup first"},
		{"more tables than prepared", nil, append(run[:len(run):len(run)], "--tables=3"), ExitFailure,
			"sbtest2 and sbtest3 do not exist: run prepare first"},
		{"larger than prepared", nil, append(run[:len(run):len(run)], "--table-size=100000"), ExitFailure,
			"sbtest1 holds ids up to 2000 of --table-size 100000: run prepare first"},
		{"part-filled", []string{"DELETE FROM prepcheck.sbtest1 WHERE id > 700"}, run, ExitFailure,
			"sbtest1 holds ids up to 700 of --table-size 2000: run prepare first"},
		{"empty", []string{"DELETE FROM prepcheck.sbtest1"}, run, ExitFailure, "sbtest1 is empty: run prepare first"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mustExec(t, db, tc.setup...)
			code, stdout, stderr := runCLI(context.Background(), tc.args...)
			if code != tc.code {
				t.Errorf("exit code: got %d, want %d\n%s%s", code, tc.code, stdout, stderr)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q: want it to contain %q", stderr, tc.want)
			}
			if strings.Contains(stderr, "Error 1050") {
				t.Errorf("stderr %q: a raw server error", stderr)
			}
		})
	}
}
