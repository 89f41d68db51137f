package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/sandbox/gmstest"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

// The contract: every command either works against a MySQL-compatible
// server or stops with one clear line (exit 1 or 2) saying what the server
// lacks. It never hangs, never prints a stack trace, never writes a wrong
// result. The suite runs the same commands against MariaDB and against
// go-mysql-server, a second, independent implementation of the protocol and
// the SQL that lacks InnoDB, LOAD DATA LOCAL and many variables, as TiDB and
// cloud services lack some of them.

// contractServer is one implementation under the contract.
type contractServer struct {
	name string
	url  string
}

func contractServers(t *testing.T) []contractServer {
	servers := []contractServer{
		{"mariadb", sandboxtest.URL(t)},
		{"go-mysql-server", gmstest.Start(t).URL},
	}
	// The flavours users move to, each where its server is on this
	// machine; one that is not is skipped with a line saying how to get it.
	if bin, err := sandboxtest.TiDBServer(); err != nil {
		t.Fatalf("find a TiDB server: %v", err)
	} else if bin == "" {
		t.Run("tidb", func(t *testing.T) { t.Skip(sandboxtest.TiDBGet) })
	} else {
		servers = append(servers, contractServer{"tidb", sandboxtest.TiDB(t)})
	}
	if bin, err := sandboxtest.VitessServer(); err != nil {
		t.Fatalf("find a vtcombo: %v", err)
	} else if bin == "" {
		t.Run("vitess", func(t *testing.T) { t.Skip(sandboxtest.VitessGet) })
	} else {
		servers = append(servers, contractServer{"vitess", sandboxtest.Vitess(t)})
	}
	return append(servers, contractServer{"galera", sandboxtest.Galera(t)})
}

// copySource makes the database a copy from MariaDB carries to each
// server: latin1 and utf8mb4 tables, a JSON column (MariaDB's LONGTEXT
// with a json_valid check, a JSON type elsewhere), a foreign key, a view;
// it returns the database's URL on MariaDB.
func copySource(t *testing.T, mariadb string) string {
	t.Helper()
	db := adminDB(t, mariadb)
	mustExec(t, db,
		"DROP DATABASE IF EXISTS flavsrc",
		"CREATE DATABASE flavsrc CHARACTER SET latin1 COLLATE latin1_swedish_ci",
		"CREATE TABLE flavsrc.customers (id INT PRIMARY KEY, name VARCHAR(40) COLLATE latin1_swedish_ci) CHARSET latin1",
		"CREATE TABLE flavsrc.orders (id INT PRIMARY KEY AUTO_INCREMENT, customer INT NOT NULL, note TEXT, total DECIMAL(10,2), doc JSON,"+
			" KEY (customer), CONSTRAINT fk_customer FOREIGN KEY (customer) REFERENCES flavsrc.customers (id)) CHARSET utf8mb4 COLLATE utf8mb4_general_ci",
		"INSERT INTO flavsrc.customers VALUES (1, 'Åsa'), (2, 'Bo'), (3, 'Ça')",
		`INSERT INTO flavsrc.orders (customer, note, total, doc) VALUES (1, 'först', 10.50, '{"b": 2, "a": [1, 2.50]}'), (2, '二', 3.25, '{}'), (3, NULL, 0, NULL)`,
		"CREATE VIEW flavsrc.big AS SELECT id, total FROM flavsrc.orders WHERE total > 1",
	)
	return strings.Replace(mariadb, "/sbtest", "/flavsrc", 1)
}

// contractStep is one command line and what it may end with.
type contractStep struct {
	name  string
	args  []string
	codes []int // exit codes it may end with; the first is the usual one
	// check, when set, looks at what a successful run wrote.
	check func(t *testing.T, stdout string)
}

// contractRun runs one step under a deadline and holds it to the contract.
func contractRun(t *testing.T, st contractStep) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code, stdout, stderr := runCLI(ctx, st.args...)
	if ctx.Err() != nil {
		t.Fatalf("%s: still running after 2 minutes (a hang): stdout:\n%s\nstderr:\n%s", st.name, stdout, stderr)
	}
	all := stdout + stderr
	for _, bad := range []string{"panic:", "goroutine ", "runtime error", "[recovered]"} {
		if strings.Contains(all, bad) {
			t.Fatalf("%s: got %q in the output, want no stack trace:\n%s", st.name, bad, all)
		}
	}
	ok := false
	for _, c := range st.codes {
		ok = ok || c == code
	}
	if !ok {
		t.Fatalf("%s: got exit %d, want one of %v\nstdout:\n%s\nstderr:\n%s", st.name, code, st.codes, stdout, stderr)
	}
	if code == ExitFailure || code == ExitUsage {
		// A refusal is one clear line saying what the server lacks.
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if len(lines) != 1 || !strings.Contains(stderr, "not supported by this server") {
			t.Fatalf("%s: exit %d with stderr\n%s\nwant one line \"not supported by this server: ...\"", st.name, code, stderr)
		}
		return
	}
	if st.check != nil && code == st.codes[0] {
		st.check(t, stdout)
	}
}

func TestContract(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	servers := contractServers(t)
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			dir := t.TempDir()
			port := urlPort(t, srv.url)
			data := []string{"--target=" + srv.url, "--tables=2", "--table-size=200"}
			resultFile := filepath.Join(dir, "run.json")
			steps := []contractStep{
				{name: "cleanup before", args: append([]string{"cleanup", "oltp_read_write"}, data...), codes: []int{ExitOK}},
				{name: "prepare", args: append([]string{"prepare", "oltp_read_write"}, data...), codes: []int{ExitOK},
					check: func(t *testing.T, out string) {
						// A server that refuses LOAD DATA LOCAL gets INSERTs, said once.
						if n := strings.Count(out, "loading with multi-row INSERTs"); n > 1 {
							t.Errorf("prepare: got the fallback said %d times, want once at most:\n%s", n, out)
						}
					}},
				{name: "run point selects, prepared", args: append([]string{"run", "oltp_point_select", "--time=1", "--threads=2", "--json=" + resultFile}, data...),
					codes: []int{ExitOK}, check: func(t *testing.T, _ string) { checkResultFile(t, resultFile) }},
				{name: "run read/write, text protocol", args: append([]string{"run", "oltp_read_write", "--time=1", "--threads=2", "--db-ps-mode=disable", "--json=" + resultFile}, data...),
					codes: []int{ExitOK}, check: func(t *testing.T, _ string) { checkResultFile(t, resultFile) }},
				// One short search, bounded by its budget: it ends with a
				// capacity or says why it found none.
				{name: "capacity, one short search", args: append([]string{"capacity", "oltp_point_select", "--slo", "p99<=200ms", "--threads=2",
					"--step-time=1", "--step-warmup=0", "--bracket=40", "--repeats=1", "--budget=6s"}, data...),
					codes: []int{ExitOK, ExitDifferences}, check: func(t *testing.T, out string) {
						if !strings.Contains(out, "Capacity") && !strings.Contains(out, "capacity") {
							t.Errorf("capacity: got\n%s\nwant the search's answer", out)
						}
					}},
				{name: "slap", args: []string{"slap", "--host=127.0.0.1", "--port=" + port, "--user=shakedown", "--create-schema=sbtest",
					"--query=SELECT 1; SELECT COUNT(*) FROM sbtest1", "--concurrency=2", "--iterations=1", "--number-of-queries=40"},
					codes: []int{ExitOK}, check: func(t *testing.T, out string) {
						if !strings.Contains(out, "Number of clients running queries: 2") {
							t.Errorf("slap: got\n%s\nwant mysqlslap's summary", out)
						}
					}},
				{name: "sweep", args: []string{"sweep", contractPlan(t, dir, srv), "--store", filepath.Join(dir, "sweep.db")}, codes: []int{ExitOK}},
				{name: "report", args: []string{"report", "--store", filepath.Join(dir, "sweep.db")}, codes: []int{ExitOK},
					check: func(t *testing.T, out string) {
						if !strings.Contains(out, "oltp_point_select") {
							t.Errorf("report: got\n%s\nwant the sweep's workload", out)
						}
					}},
				{name: "baseline save", args: []string{"baseline", "save", "own", "--store", filepath.Join(dir, "sweep.db")}, codes: []int{ExitOK}},
				{name: "report against the baseline saved from it", args: []string{"report", "--baseline", "own", "--store", filepath.Join(dir, "sweep.db")},
					codes: []int{ExitOK}, check: func(t *testing.T, out string) {
						if strings.Count(out, "same: the baseline's own runs") < 2 || strings.Contains(out, "1 run: no verdict") {
							t.Errorf("report --baseline: got\n%s\nwant every thread level the same: the baseline's own runs", out)
						}
					}},
				{name: "watch", args: []string{"watch", srv.url, "--count=2"}, codes: []int{ExitOK},
					check: func(t *testing.T, out string) {
						// A figure the flavour keeps elsewhere (TiDB's status port)
						// is read there: statements per second are never a dash.
						if srv.name == "go-mysql-server" {
							return // keeps no statement counters, and has no status port
						}
						var qps string
						for _, l := range strings.Split(out, "\n") {
							if cols := strings.Split(l, "|"); len(cols) > 2 && !strings.Contains(l, "qps") {
								qps = strings.TrimSpace(cols[1])
							}
						}
						if f := strings.Fields(qps); len(f) == 0 || f[0] == "-" {
							t.Errorf("watch: got\n%s\nwant a qps figure", out)
						}
					}},
				{name: "vars diff against MariaDB", args: []string{"vars", "diff", servers[0].url, srv.url}, codes: []int{ExitDifferences, ExitOK}},
				{name: "verify against itself", args: []string{"verify", srv.url, srv.url}, codes: []int{ExitOK},
					check: func(t *testing.T, out string) {
						if !strings.Contains(out, "source and target are equal") {
							t.Errorf("verify: got\n%s\nwant equal", out)
						}
					}},
				{name: "check against MariaDB", args: []string{"check", servers[0].url, srv.url, "--json", filepath.Join(dir, "check.json")},
					codes: []int{ExitDifferences, ExitOK}, check: func(t *testing.T, out string) {
						if !strings.Contains(out, " warnings, ") {
							t.Errorf("check: got\n%s\nwant the summary of findings", out)
						}
					}},
				{name: "cleanup", args: append([]string{"cleanup", "oltp_read_write"}, data...), codes: []int{ExitOK}},
			}
			if srv.name != "mariadb" && srv.name != "go-mysql-server" {
				// A copy from MariaDB, verified: collations the server
				// lacks are mapped and said; the rows arrive whole.
				src := copySource(t, servers[0].url)
				dst := strings.Replace(srv.url, "/sbtest", "/flavdst", 1)
				store, capFile, slowLog := filepath.Join(dir, "move.db"), filepath.Join(dir, "app.capture"), filepath.Join(dir, "slow.log")
				if err := os.WriteFile(slowLog, []byte(contractSlowLog), 0o644); err != nil {
					t.Fatal(err)
				}
				steps = append(steps,
					contractStep{name: "copy from MariaDB", args: []string{"copy", src, dst, "--allow-write", "--replace"}, codes: []int{ExitOK},
						check: func(t *testing.T, out string) {
							if !strings.Contains(out, "verify: 2 tables equal") {
								t.Errorf("copy: got\n%s\nwant a verify that found them equal", out)
							}
						}},
					contractStep{name: "verify the copy", args: []string{"verify", src, dst, "--store", store}, codes: []int{ExitOK}},
					contractStep{name: "analyze the copy", args: []string{"analyze", dst}, codes: []int{ExitOK}},
					contractStep{name: "capture a slow log of the source", args: []string{"capture", slowLog, "-o", capFile}, codes: []int{ExitOK}},
					// The same statements on both: their results agree, or
					// the differences are the flavour's, found and said.
					contractStep{name: "replay MariaDB against it", args: []string{"replay", capFile, "--control", src, "--candidate", srv.name + "=" + dst,
						"--store", store}, codes: []int{ExitOK, ExitDifferences},
						check: func(t *testing.T, out string) {
							if !strings.Contains(out, "statements") {
								t.Errorf("replay: got\n%s\nwant its summary", out)
							}
						}},
					contractStep{name: "check against MariaDB, stored", args: []string{"check", src, dst, "--store", store}, codes: []int{ExitDifferences, ExitOK}},
					contractStep{name: "readiness", args: []string{"readiness", src, dst, "--store", store}, codes: []int{ExitDifferences, ExitOK},
						check: func(t *testing.T, out string) {
							if !strings.Contains(out, "verdict: ") {
								t.Errorf("readiness: got\n%s\nwant a go/no-go", out)
							}
						}},
				)
			}
			for _, st := range steps {
				contractRun(t, st)
			}
		})
	}
}

// contractPlan writes a one-target sweep plan for srv.
func contractPlan(t *testing.T, dir string, srv contractServer) string {
	path := filepath.Join(dir, "plan.yaml")
	plan := fmt.Sprintf(`name: contract
targets:
  - name: %s
    url: %s
    role: control
options: {tables: 1, table-size: 200}
workloads:
  - oltp_point_select
threads: [1, 2]
time: 1
repeats: 1
prepare: replace
cleanup: true
`, srv.name, srv.url)
	if err := os.WriteFile(path, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkResultFile holds a run's result document to the contract: it
// measured something, and its totals agree with its per-statement figures.
func checkResultFile(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc result.Result
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if doc.Queries.Total <= 0 || doc.Transactions <= 0 {
		t.Errorf("%s: got %d queries, %d transactions; want a run that measured something", path, doc.Queries.Total, doc.Transactions)
	}
	var perCode int64
	for _, n := range doc.Errors.ByCode {
		perCode += n
	}
	if perCode != doc.Errors.Total {
		t.Errorf("%s: got %d errors in total and %d by code, want them equal", path, doc.Errors.Total, perCode)
	}
}

// urlPort is the port of u's first host.
func urlPort(t *testing.T, u string) string {
	t.Helper()
	i := strings.LastIndex(u, ":")
	j := strings.Index(u[i:], "/")
	p, _, _ := strings.Cut(u[i+1:i+j], ",")
	if _, err := strconv.Atoi(p); err != nil {
		t.Fatalf("no port in %s", u)
	}
	return p
}

// contractSlowLog is a MariaDB slow log of the application copySource
// makes, as log_slow_query_time=0 writes it.
const contractSlowLog = `# Time: 261201 23:00:01
# User@Host: app[app] @ localhost [127.0.0.1]
# Thread_id: 7  Schema: flavdst  QC_hit: No
# Query_time: 0.000210  Lock_time: 0.000050  Rows_sent: 3  Rows_examined: 3
use flavdst;
SET timestamp=1796166001;
SELECT id, name FROM customers ORDER BY id;
# Time: 261201 23:00:02
# User@Host: app[app] @ localhost [127.0.0.1]
# Thread_id: 7  Schema: flavdst  QC_hit: No
# Query_time: 0.000180  Lock_time: 0.000040  Rows_sent: 1  Rows_examined: 3
SET timestamp=1796166002;
SELECT COUNT(*), SUM(total) FROM orders WHERE customer = 1;
# Time: 261201 23:00:03
# User@Host: app[app] @ localhost [127.0.0.1]
# Thread_id: 8  Schema: flavdst  QC_hit: No
# Query_time: 0.000300  Lock_time: 0.000060  Rows_sent: 2  Rows_examined: 3
SET timestamp=1796166003;
SELECT c.name, o.total FROM customers c JOIN orders o ON o.customer = c.id WHERE o.total > 1 ORDER BY o.id;
`
