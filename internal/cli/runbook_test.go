package cli

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/bench"
	"github.com/shakedown/shakedown/internal/fingerprint"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

// generalLog turns the server's general log on, into mysql.general_log,
// until the test ends.
func generalLog(t *testing.T, admin *sql.DB) {
	t.Helper()
	var on, output string
	if err := admin.QueryRow("SELECT @@global.general_log, @@global.log_output").Scan(&on, &output); err != nil {
		t.Fatal(err)
	}
	mustExec(t, admin, "SET GLOBAL log_output = 'TABLE'", "SET GLOBAL general_log = 1")
	t.Cleanup(func() {
		admin.Exec("SET GLOBAL general_log = " + on)
		admin.Exec("SET GLOBAL log_output = '" + output + "'")
		admin.Exec("TRUNCATE mysql.general_log")
	})
}

var tableNumber = regexp.MustCompile(`sbtest\d+`)

// logged runs fn and returns what user's connections sent meanwhile, by
// kind and shape: "Query: fingerprint", "Execute: fingerprint" (a
// prepared statement), "Connect". With load set, only the statements
// of the sbtest tables and BEGIN and COMMIT count (not the sampler's,
// whose number follows the run's length), and sbtestN reads sbtest?.
func logged(t *testing.T, admin *sql.DB, user string, load bool, fn func()) map[string]int {
	t.Helper()
	mustExec(t, admin, "TRUNCATE mysql.general_log")
	fn()
	rows, err := admin.Query("SELECT command_type, CONVERT(argument USING utf8mb4) FROM mysql.general_log WHERE user_host LIKE ? AND command_type IN ('Query', 'Execute', 'Connect')",
		"%["+user+"] @ %")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]int{}
	for rows.Next() {
		var kind, arg string
		if err := rows.Scan(&kind, &arg); err != nil {
			t.Fatal(err)
		}
		if kind == "Connect" {
			if !load {
				got[kind]++
			}
			continue
		}
		fp := tableNumber.ReplaceAllString(fingerprint.Lex(arg).Fingerprint, "sbtest?")
		if load && !strings.Contains(fp, "sbtest") && fp != "begin" && fp != "commit" {
			continue
		}
		got[kind+": "+fp]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

// perEvents runs a tool for n and for 2n events and returns what the
// second run sent beyond the first: n events' worth, without what a tool
// sends once per run.
func perEvents(t *testing.T, admin *sql.DB, user string, n int, run func(events int)) map[string]int {
	t.Helper()
	once := logged(t, admin, user, true, func() { run(n) })
	twice := logged(t, admin, user, true, func() { run(2 * n) })
	for k, v := range once {
		twice[k] -= v
	}
	return twice
}

// sameStatements fails the test where got and want differ.
func sameStatements(t *testing.T, got, want map[string]int, who string) {
	t.Helper()
	keys := map[string]bool{}
	for k := range got {
		keys[k] = true
	}
	for k := range want {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		if got[k] != want[k] {
			t.Errorf("%s: got %d, want %d (%s)", k, got[k], want[k], who)
		}
	}
	if len(want) == 0 {
		t.Errorf("%s sent nothing", who)
	}
	t.Logf("%s: %v", who, want)
}

// oltpLuaEvent is what one event of sysbench 0.5's oltp.lua sends with
// its defaults, as text: statements written with their values, one
// table for the whole transaction.
var oltpLuaEvent = map[string]int{
	"BEGIN":                            1,
	"SELECT c FROM sbtest1 WHERE id=5": 10,
	"SELECT c FROM sbtest1 WHERE id BETWEEN 5 AND 104":                     1,
	"SELECT SUM(K) FROM sbtest1 WHERE id BETWEEN 5 AND 104":                1,
	"SELECT c FROM sbtest1 WHERE id BETWEEN 5 AND 104 ORDER BY c":          1,
	"SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN 5 AND 104 ORDER BY c": 1,
	"UPDATE sbtest1 SET k=k+1 WHERE id=5":                                  1,
	"UPDATE sbtest1 SET c='1-2' WHERE id=5":                                1,
	"DELETE FROM sbtest1 WHERE id=5":                                       1,
	"INSERT INTO sbtest1 (id, k, c, pad) VALUES (5, 6, '1-2', '3-4')":      1,
	"COMMIT": 1,
}

// TestOldRunbookLines runs the first lines of old runbooks as written, the
// connection pointed at a sandbox and the sizes made small, and compares
// what the server saw, statement by statement in its general log, with what
// sysbench 1.0.20 and mysqlslap send for the same line.
func TestOldRunbookLines(t *testing.T) {
	sb, err := exec.LookPath("sysbench")
	if err != nil {
		t.Fatal("sysbench is not installed: run 'make test', which installs Debian's sysbench")
	}
	slapBin, err := exec.LookPath("mysqlslap")
	if err != nil {
		t.Fatal("mysqlslap is not installed: run 'make test', which installs Debian's mariadb-client")
	}
	url := sandboxtest.URL(t)
	admin := adminDB(t, url)
	host, port := hostPort(t, url)
	var socket string
	if err := admin.QueryRow("SELECT @@socket").Scan(&socket); err != nil {
		t.Fatal(err)
	}
	// The runbooks' own database, accounts and table.
	mustExec(t, admin,
		"CREATE DATABASE IF NOT EXISTS sysbench",
		"CREATE DATABASE IF NOT EXISTS test",
		"CREATE USER IF NOT EXISTS sysbench@localhost IDENTIFIED BY 'sysbench'",
		"CREATE USER IF NOT EXISTS sysbench@'127.0.0.1' IDENTIFIED BY 'sysbench'",
		"GRANT ALL ON *.* TO sysbench@localhost",
		"GRANT ALL ON *.* TO sysbench@'127.0.0.1'",
		"CREATE USER IF NOT EXISTS runbook@'127.0.0.1'",
		"GRANT ALL ON *.* TO runbook@'127.0.0.1'",
		"CREATE TABLE IF NOT EXISTS test.seckill (id INT PRIMARY KEY, num INT NOT NULL)",
		"REPLACE INTO test.seckill VALUES (1, 100000000)",
	)
	generalLog(t, admin)
	const n = 40
	ctx := context.Background()
	shakedown := func(t *testing.T, args ...string) string {
		t.Helper()
		code, out, errOut := runCLI(ctx, args...)
		if code != 0 {
			t.Fatalf("shakedown %s: exit %d\n%s\n%s", strings.Join(args, " "), code, out, errOut)
		}
		return errOut
	}
	sysbench := func(t *testing.T, args ...string) {
		t.Helper()
		if out, err := exec.Command(sb, args...).CombinedOutput(); err != nil {
			t.Fatalf("sysbench: %v\n%s", err, out)
		}
	}

	t.Run("sysbench 0.5 oltp.lua", func(t *testing.T) {
		line := func(events int) []string {
			return strings.Fields(fmt.Sprintf("--test=/opt/sysbench/share/sysbench/oltp.lua --oltp-tables-count=2 --oltp-table-size=1000 "+
				"--mysql-db=sysbench --mysql-user=sysbench --mysql-password=sysbench --mysql-socket=%s --max-time=120 --max-requests=%d "+
				"--num-threads=1 --oltp-test-mode=complex", socket, events))
		}
		shakedown(t, append(append([]string{"sysbench"}, line(0)...), "cleanup")...)
		shakedown(t, append(append([]string{"sysbench"}, line(0)...), "prepare")...)
		var warnings string
		got := perEvents(t, admin, "sysbench", n, func(events int) {
			warnings = shakedown(t, append(append([]string{"sysbench"}, line(events)...), "run")...)
		})
		// sysbench 1.0.20 has no oltp.lua of its own: the workload of
		// today that the warning names, with the same options.
		want := perEvents(t, admin, "sysbench", n, func(events int) {
			sysbench(t, "oltp_read_write", "--mysql-db=sysbench", "--mysql-user=sysbench", "--mysql-password=sysbench", "--mysql-socket="+socket,
				"--tables=2", "--table-size=1000", "--db-ps-mode=disable", "--threads=1", "--time=0", fmt.Sprintf("--events=%d", events), "run")
		})
		sameStatements(t, got, want, "sysbench 1.0.20 oltp_read_write --db-ps-mode=disable")
		legacy := map[string]int{}
		for stmt, k := range oltpLuaEvent {
			legacy["Query: "+tableNumber.ReplaceAllString(fingerprint.Lex(stmt).Fingerprint, "sbtest?")] += k * n
		}
		sameStatements(t, got, legacy, "sysbench 0.5's oltp.lua")
		for _, w := range []string{
			"WARNING: the --test option is deprecated.",
			"WARNING: --max-requests is deprecated, use --events instead",
			"WARNING: --max-time is deprecated, use --time instead",
			"WARNING: --oltp-tables-count is deprecated, use --tables instead",
			"WARNING: oltp.lua is a sysbench 0.5 script: shakedown runs oltp_read_write with --db-ps-mode=disable in its place",
		} {
			if !strings.Contains(warnings, w) {
				t.Errorf("standard error lacks %q:\n%s", w, warnings)
			}
		}
		// oltp.lua's own options: a read-only event of other sizes, outside
		// a transaction.
		kin := strings.Fields("--oltp-read-only=on --oltp-point-selects=3 --oltp-range-size=10 --oltp-sum-ranges=2 --oltp-distinct-ranges=0 --oltp-skip-trx=on")
		got = perEvents(t, admin, "sysbench", n, func(events int) {
			shakedown(t, append(append(append([]string{"sysbench"}, line(events)...), kin...), "run")...)
		})
		want = perEvents(t, admin, "sysbench", n, func(events int) {
			sysbench(t, "oltp_read_only", "--mysql-db=sysbench", "--mysql-user=sysbench", "--mysql-password=sysbench", "--mysql-socket="+socket,
				"--tables=2", "--table-size=1000", "--point-selects=3", "--range-size=10", "--sum-ranges=2", "--distinct-ranges=0", "--skip-trx=on",
				"--db-ps-mode=disable", "--threads=1", "--time=0", fmt.Sprintf("--events=%d", events), "run")
		})
		sameStatements(t, got, want, "sysbench 1.0.20 oltp_read_only with the same options")
		shakedown(t, append(append([]string{"sysbench"}, line(0)...), "cleanup")...)
	})

	t.Run("sysbench 1.0 oltp_read_only", func(t *testing.T) {
		line := func(events int) []string {
			return strings.Fields(fmt.Sprintf("--db-driver=mysql --mysql-host=%s --mysql-port=%s --mysql-user=sysbench --mysql-password=sysbench "+
				"--mysql-db=sbtest --table_size=1000 --tables=2 --events=%d --time=0 --threads=2 --percentile=95 --skip-trx=1 --report-interval=1 oltp_read_only",
				host, port, events))
		}
		shakedown(t, append(append([]string{"sysbench"}, line(0)...), "cleanup")...)
		shakedown(t, append(append([]string{"sysbench"}, line(0)...), "prepare")...)
		got := perEvents(t, admin, "sysbench", n, func(events int) {
			shakedown(t, append(append([]string{"sysbench"}, line(events)...), "run")...)
		})
		want := perEvents(t, admin, "sysbench", n, func(events int) { sysbench(t, append(line(events), "run")...) })
		sameStatements(t, got, want, "sysbench 1.0.20")
		shakedown(t, append(append([]string{"sysbench"}, line(0)...), "cleanup")...)
	})

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "query.sql"), []byte("select num from seckill where id=1;update seckill set num=num-1 where id =1 and num>1;"), 0o644); err != nil {
		t.Fatal(err)
	}
	conn := []string{"-urunbook", "-h127.0.0.1", "-P", port}
	// The hot-row check (slap's, which mysqlslap lacks) reads the row's
	// sum before and after each iteration: these are the only statements
	// slap adds.
	const checkRead = "Query: select sum (num) from seckill where id = ?"
	for _, tc := range []struct {
		name   string
		args   []string
		checks int
	}{
		{"mysqlslap, queries from a file", []string{"--iterations=2", "--create-schema=test", "--query=query.sql", "--number-of-queries=200", "--delimiter=;", "--concurrency=10"}, 2 * 2},
		{"mysqlslap, the seckill line", []string{"--concurrency=8", "--create-schema=test", "--query=begin;update seckill set num=num-1 where id =1 and num>1;commit;", "--number-of-queries=400"}, 0}, // no --delimiter: one multi-statement query, not checked
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(dir) // --query=query.sql is a file in the working directory
			want := logged(t, admin, "runbook", false, func() {
				if out, err := exec.Command(slapBin, append(append([]string{"--no-defaults"}, conn...), tc.args...)...).CombinedOutput(); err != nil {
					t.Fatalf("mysqlslap: %v\n%s", err, out)
				}
			})
			got := logged(t, admin, "runbook", false, func() { shakedown(t, append(append([]string{"slap"}, conn...), tc.args...)...) })
			if got[checkRead] != tc.checks {
				t.Errorf("%s: got %d, want %d (the hot-row check's reads)", checkRead, got[checkRead], tc.checks)
			}
			delete(got, checkRead)
			sameStatements(t, got, want, "mysqlslap")
		})
	}
}

// TestSysbenchHelpExample: the old line that sysbench --help shows parses,
// as the workload its text says.
func TestSysbenchHelpExample(t *testing.T) {
	i := strings.Index(sysbenchHelp, "  shakedown sysbench --test=")
	if i < 0 {
		t.Fatalf("sysbench --help shows no old line:\n%s", sysbenchHelp)
	}
	line := strings.ReplaceAll(sysbenchHelp[i:], "\\\n", " ")
	line, _, _ = strings.Cut(line, "\n")
	args := strings.Fields(line)[2:] // after "shakedown sysbench"
	if args[len(args)-1] != "run" {
		t.Fatalf("got %q, want a line that ends with run", line)
	}
	job, err := bench.Parse("run", args[:len(args)-1], nil)
	if err != nil {
		t.Fatalf("got %v, want %q to parse", err, line)
	}
	if job.Workload() != "oltp_read_write" || job.Threads() != 16 {
		t.Errorf("got %s at %d threads, want oltp_read_write at 16", job.Workload(), job.Threads())
	}
}
