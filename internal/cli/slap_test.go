package cli

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

// globalStatus reads the named counters of SHOW GLOBAL STATUS.
func globalStatus(t *testing.T, db *sql.DB, names ...string) map[string]int64 {
	t.Helper()
	rows, err := db.Query("SHOW GLOBAL STATUS WHERE Variable_name IN ('" + strings.Join(names, "','") + "')")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[string]int64{}
	for rows.Next() {
		var k string
		var v int64
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		m[k] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

// delta runs fn and returns how much each counter grew meanwhile, less the
// one statement (and, for Com_select, the SELECT-like SHOW) that reading
// them costs.
func delta(t *testing.T, db *sql.DB, names []string, fn func()) map[string]int64 {
	t.Helper()
	before := globalStatus(t, db, names...)
	fn()
	after := globalStatus(t, db, names...)
	d := map[string]int64{}
	for _, n := range names {
		d[n] = after[n] - before[n]
	}
	return d
}

// TestSlapMatchesMysqlslap runs the same command lines under Debian's
// mysqlslap and under shakedown slap against one server and compares what
// the server counted: statements by kind, and connections.
func TestSlapMatchesMysqlslap(t *testing.T) {
	bin, err := exec.LookPath("mysqlslap")
	if err != nil {
		t.Fatal("mysqlslap is not installed: run 'make test', which installs Debian's mariadb-client")
	}
	url := sandboxtest.URL(t)
	admin := adminDB(t, url)
	mustExec(t, admin,
		"CREATE DATABASE IF NOT EXISTS slaptest",
		"CREATE TABLE IF NOT EXISTS slaptest.seckill (id INT PRIMARY KEY, num INT NOT NULL)",
		"REPLACE INTO slaptest.seckill VALUES (1, 100000000)",
	)
	host, port := hostPort(t, url)
	conn := []string{"-h" + host, "-P" + port, "-ushakedown"}
	counters := []string{"Com_begin", "Com_update", "Com_commit", "Com_select", "Com_insert", "Com_create_table", "Com_create_db", "Com_drop_db", "Com_set_option", "Connections"}
	cases := []struct {
		name string
		args []string
		want []string // in shakedown's output
		// checks are the SELECTs slap sends that mysqlslap does not: the
		// hot-row check's reads before and after each iteration.
		checks int64
	}{
		{"the seed command", []string{"--concurrency=4,8", "--iterations=2", "--create-schema=slaptest",
			"--query=begin;update seckill set num=num-1 where id =1 and num>1;commit;", "--delimiter=;", "--number-of-queries=2000"},
			[]string{"Number of clients running queries: 4", "Number of clients running queries: 8", "Average number of queries per client: 500", "Average number of queries per client: 250",
				"Queries per second:", "Client I/O: ", "Latency (ms), all statements:", "#2 update seckill", "Errors by code: none",
				"Hot-row check: sum of num in seckill where id =1 (2 iterations, their changes added up) changed by -"}, 2 * 2 * 2},
		{"auto-generated keyed reads, commit and detach", []string{"-a", "--auto-generate-sql-load-type=key", "--auto-generate-sql-add-autoincrement",
			"--concurrency=3", "--number-of-queries=60", "--commit=4", "--detach=5", "--auto-generate-sql-write-number=20"},
			[]string{"Average number of queries per client: 20", "WHERE id = key (auto-generated)"}, 0},
		{"auto-generated mixed with engines and iterations", []string{"-a", "--concurrency=2", "--iterations=2", "--engine=innodb,memory", "--auto-generate-sql-unique-query-number=4"},
			[]string{"Running for engine innodb", "Running for engine memory"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := delta(t, admin, counters, func() {
				args := append(append([]string{"--no-defaults"}, conn...), tc.args...)
				if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
					t.Fatalf("mysqlslap: %v\n%s", err, out)
				}
			})
			var out string
			got := delta(t, admin, counters, func() {
				var code int
				var errOut string
				code, out, errOut = runCLI(context.Background(), append(append([]string{"slap"}, conn...), tc.args...)...)
				if code != 0 {
					t.Fatalf("shakedown slap: exit %d\n%s\n%s", code, out, errOut)
				}
			})
			want["Com_select"] += tc.checks
			for _, k := range counters {
				if got[k] != want[k] {
					t.Errorf("%s: got %d, want %d (mysqlslap)", k, got[k], want[k])
				}
			}
			if want["Com_update"]+want["Com_select"]+want["Com_insert"] == 0 {
				t.Errorf("mysqlslap sent no statements: %v", want)
			}
			for _, line := range []string{"Benchmark\n", "\tAverage number of seconds to run all queries: ", "\tMinimum number of seconds to run all queries: ",
				"\tMaximum number of seconds to run all queries: ", "\tNumber of clients running queries: ", "\tAverage number of queries per client: "} {
				if !strings.Contains(out, line) {
					t.Errorf("output lacks mysqlslap's %q:\n%s", line, out)
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestSlapBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	empty := write("empty.sql", "")
	bad := write("bad.sql", "select 1;\nselect 2;\nselect 3;\nselect 4;\nselect 5;\nselect 6;\nselect 'seven;\nselect 8;\n")
	nodelim := write("nodelim.sql", "update t set a=1\nupdate t set a=2\n")
	// Port 1 would refuse a connection: these must fail before connecting.
	base := []string{"slap", "-h127.0.0.1", "-P1"}
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"unknown option", []string{"--query=select 1", "--frobnicate"}, []string{"--frobnicate: unknown option"}},
		{"empty query file", []string{"--query=" + empty}, []string{"--query " + empty, "empty"}},
		{"syntax error in statement 7", []string{"--query=" + bad, "--delimiter=;"}, []string{bad, "statement 7 (line 7)", "unterminated quoted string", "select 'seven;"}},
		{"delimiter that never occurs", []string{"--query=" + nodelim, "--delimiter=;"}, []string{nodelim, `the delimiter ";" never occurs`}},
		{"nothing to run", nil, []string{"nothing to run"}},
		{"bare -p without input", []string{"--query=select 1", "-p"}, []string{"-p without a password"}},
		{"split over runners", []string{"--query=select 1", "--segment=1/2"}, []string{"--segment: slap cannot be split over runners", "shakedown run --help"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := runCLI(context.Background(), append(base, tc.args...)...)
			if code != ExitUsage {
				t.Errorf("exit code: got %d, want %d (stderr %q)", code, ExitUsage, stderr)
			}
			if out != "" {
				t.Errorf("got output %q, want none: nothing may run", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q: want it to contain %q", stderr, w)
				}
			}
		})
	}
}

func TestSlapRuntimeErrors(t *testing.T) {
	url := sandboxtest.URL(t)
	mustExec(t, adminDB(t, url), "CREATE DATABASE IF NOT EXISTS slaperr")
	host, port := hostPort(t, url)
	args := []string{"slap", "-h" + host, "-P" + port, "-ushakedown", "--create-schema=slaperr", "--delimiter=;",
		"--query=select 1;select * from no_such_table;select 2", "--concurrency=2", "--number-of-queries=12"}

	code, out, stderr := runCLI(context.Background(), args...)
	if code != ExitFailure || !strings.Contains(stderr, "no_such_table") || !strings.Contains(stderr, "1146") || !strings.Contains(stderr, "--ignore-errors") {
		t.Errorf("without --ignore-errors: got exit %d and %q, want %d and the failing statement with its code", code, stderr, ExitFailure)
	}
	if !strings.Contains(out, "STOPPED:") {
		t.Errorf("output %q: want the summary of what ran, marked STOPPED", out)
	}

	code, out, stderr = runCLI(context.Background(), append(args, "--ignore-errors")...)
	if code != 0 {
		t.Fatalf("with --ignore-errors: exit %d\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(out, "Errors by code: 1146: 4") {
		t.Errorf("output %q: want 4 errors 1146 (2 clients, 2 passes)", out)
	}
}

func TestSlapPasswordNeverShown(t *testing.T) {
	url := sandboxtest.URL(t)
	mustExec(t, adminDB(t, url),
		"CREATE USER IF NOT EXISTS 'slappw'@'127.0.0.1' IDENTIFIED BY 'Slap-Secret-3'",
		"GRANT ALL ON *.* TO 'slappw'@'127.0.0.1'",
	)
	host, port := hostPort(t, url)
	for _, pw := range []string{"-pSlap-Secret-3", "-pWrong-Secret-4"} {
		code, out, stderr := runCLI(context.Background(), "slap", "-h"+host, "-P"+port, "-uslappw", pw, "--create-schema=mysql", "--query=select 1", "-vvv")
		if strings.Contains(out+stderr, "Secret") {
			t.Errorf("%s: a password was printed:\n%s\n%s", pw, out, stderr)
		}
		if pw == "-pWrong-Secret-4" && (code != ExitFailure || !strings.Contains(stderr, "access denied")) {
			t.Errorf("wrong password: got exit %d and %q, want %d and access denied", code, stderr, ExitFailure)
		}
	}
}

// TestSlapResults: --json writes a result document per concurrency level
// and --store records each level, so that report compares slap tests;
// neither holds the password.
func TestSlapResults(t *testing.T) {
	url := sandboxtest.URL(t)
	mustExec(t, adminDB(t, url),
		"CREATE USER IF NOT EXISTS 'slapres'@'127.0.0.1' IDENTIFIED BY 'Res-Secret-5'",
		"GRANT ALL ON *.* TO 'slapres'@'127.0.0.1'",
		"CREATE DATABASE IF NOT EXISTS slapres",
	)
	host, port := hostPort(t, url)
	dir := t.TempDir()
	db := filepath.Join(dir, "slap.db")
	var files []string
	for _, name := range []string{"before", "after"} {
		file := filepath.Join(dir, name+".json")
		files = append(files, file)
		code, out, stderr := runCLI(context.Background(), "slap", "-h"+host, "-P"+port, "-uslapres", "-pRes-Secret-5", "--create-schema=slapres",
			"--delimiter=;", "--query=select 1;select 2", "--concurrency=1,3", "--iterations=2", "--number-of-queries=60",
			"--name="+name, "--json="+file, "--store="+db)
		if code != 0 || !strings.Contains(out, "2 concurrency level(s) stored in") {
			t.Fatalf("slap: exit %d\n%s\n%s", code, out, stderr)
		}
	}
	levels := readResults(t, files[0])
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(levels) != 2 || levels[0].Threads != 1 || levels[1].Threads != 3 || levels[0].Workload != "slap" {
		t.Fatalf("--json: got %d levels %+v", len(levels), levels)
	}
	for _, lv := range levels {
		// 60 statements per iteration, split among the clients, 2 iterations.
		if lv.Queries.Total != 120 || lv.QPS <= 0 || len(lv.Statements) != 2 || lv.Statements[0].Count+lv.Statements[1].Count != 120 || lv.Target.Name != "before" {
			t.Errorf("level %d: queries %d, qps %.1f, statements %+v, target %q", lv.Threads, lv.Queries.Total, lv.QPS, lv.Statements, lv.Target.Name)
		}
	}
	stored, _ := os.ReadFile(db)
	if strings.Contains(string(raw)+string(stored), "Res-Secret-5") {
		t.Error("the password is in the result documents or the store")
	}
	for _, args := range [][]string{{"--store=" + db, "--runs=all"}, files} {
		code, out, stderr := runCLI(context.Background(), append([]string{"report", "--control=before"}, args...)...)
		if code != 0 || !strings.Contains(out, "== slap") || !regexp.MustCompile(`(?m)^\s+3\s+after\s+[\d.]+\s+[\d.]+\s+[\d.]+`).MatchString(out) {
			t.Errorf("report %q: exit %d, want slap compared at 3 threads:\n%s%s", args, code, out, stderr)
		}
	}
}

// readResults reads slap's --json file: a result document a level, at
// least one.
func readResults(t *testing.T, path string) []result.Result {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var levels []result.Result
	if err := json.Unmarshal(raw, &levels); err != nil || len(levels) == 0 {
		t.Fatalf("%s: %d levels, %v\n%s", path, len(levels), err, raw)
	}
	return levels
}

// schemaTables lists the tables of schema, and whether it exists.
func schemaTables(t *testing.T, db *sql.DB, schema string) (bool, []string) {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", schema).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		return false, nil
	}
	rows, err := db.Query("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME", schema)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return true, names
}

// TestSlapKeepsSchemaThatHoldsData: where --create or -a would drop and
// re-create --create-schema (mysqlslap drops it, whatever it holds), a
// schema that holds tables is refused before anything runs unless
// --allow-drop-schema; an empty one is used and left empty; and a test
// that fails leaves the schema it made dropped, so that the next test is
// not refused.
func TestSlapKeepsSchemaThatHoldsData(t *testing.T) {
	url := sandboxtest.URL(t)
	admin := adminDB(t, url)
	host, port := hostPort(t, url)
	conn := []string{"slap", "-h" + host, "-P" + port, "-ushakedown"}
	precious := func(t *testing.T) {
		mustExec(t, admin,
			"CREATE DATABASE IF NOT EXISTS slapkeep",
			"CREATE TABLE IF NOT EXISTS slapkeep.orders (id INT PRIMARY KEY)",
			"REPLACE INTO slapkeep.orders VALUES (1), (2)",
		)
	}
	rows := func(t *testing.T) int {
		var n int
		if err := admin.QueryRow("SELECT COUNT(*) FROM slapkeep.orders").Scan(&n); err != nil {
			t.Fatalf("slapkeep.orders: %v (the schema was dropped)", err)
		}
		return n
	}
	refused := []string{"--create-schema=slapkeep", "schema slapkeep exists and holds 1 table", "nothing was run or dropped", "--allow-drop-schema"}
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr []string
		after  func(t *testing.T)
	}{
		{"auto-generated, refused", []string{"-a", "--create-schema=slapkeep"}, ExitUsage,
			append(refused, "--auto-generate-sql fills"), func(t *testing.T) {
				if n := rows(t); n != 2 {
					t.Errorf("slapkeep.orders: got %d rows, want 2", n)
				}
			}},
		{"--create with --no-drop, refused", []string{"--create-schema=slapkeep", "--create=CREATE TABLE t1 (a INT)", "--query=select 1", "--no-drop"}, ExitUsage,
			append(refused, "--create fills", "--no-drop"), func(t *testing.T) {
				if _, tables := schemaTables(t, admin, "slapkeep"); len(tables) != 1 || rows(t) != 2 {
					t.Errorf("slapkeep: got tables %q, want only orders with its 2 rows", tables)
				}
			}},
		{"--allow-drop-schema drops it, as mysqlslap does", []string{"-a", "--create-schema=slapkeep", "--allow-drop-schema"}, 0,
			[]string{"slap: schema slapkeep holds 1 table: dropping it (--allow-drop-schema)"}, func(t *testing.T) {
				if exists, _ := schemaTables(t, admin, "slapkeep"); exists {
					t.Error("slapkeep exists: want it dropped at the end, as mysqlslap does")
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			precious(t)
			code, out, stderr := runCLI(context.Background(), append(conn, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit code: got %d, want %d\n%s\n%s", code, tc.code, out, stderr)
			}
			if tc.code != 0 && out != "" {
				t.Errorf("got output %q, want none: nothing may run", out)
			}
			for _, w := range tc.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q: want it to contain %q", stderr, w)
				}
			}
			tc.after(t)
		})
	}

	t.Run("an empty schema is used and left empty", func(t *testing.T) {
		mustExec(t, admin, "DROP DATABASE IF EXISTS slapempty", "CREATE DATABASE slapempty CHARACTER SET latin1")
		code, out, stderr := runCLI(context.Background(), append(conn, "-a", "--create-schema=slapempty", "--concurrency=2", "--iterations=2", "--auto-generate-sql-write-number=10")...)
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
		}
		exists, tables := schemaTables(t, admin, "slapempty")
		var charset string
		if exists {
			if err := admin.QueryRow("SELECT DEFAULT_CHARACTER_SET_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'slapempty'").Scan(&charset); err != nil {
				t.Fatal(err)
			}
		}
		if !exists || len(tables) != 0 || charset != "latin1" {
			t.Errorf("slapempty: got exists %v, tables %q, character set %q; want it there, empty, latin1, as it was", exists, tables, charset)
		}
	})

	t.Run("a failed test drops the schema it made", func(t *testing.T) {
		mustExec(t, admin, "DROP DATABASE IF EXISTS slapfail")
		args := append(conn, "--create-schema=slapfail", "--delimiter=;", "--query=select 1", "--create=CREATE TABLE t1 (a INT);INSERT INTO no_such_table VALUES (1)")
		code, out, stderr := runCLI(context.Background(), args...)
		if code != ExitFailure || !strings.Contains(stderr, "no_such_table") {
			t.Fatalf("got exit %d and %q, want %d and the failing --create statement\n%s", code, stderr, ExitFailure, out)
		}
		if exists, tables := schemaTables(t, admin, "slapfail"); exists {
			t.Errorf("slapfail exists with tables %q: want it dropped, so that the next test does not find it holding t1", tables)
		}
	})
}

// TestSlapCreatesMissingSchema: a test without --create in a schema that
// does not exist creates it, and drops it at the end unless --no-drop.
// (mysqlslap's clients fail to connect to it: "Unknown database", and a
// summary of nothing with exit 0.)
func TestSlapCreatesMissingSchema(t *testing.T) {
	url := sandboxtest.URL(t)
	admin := adminDB(t, url)
	host, port := hostPort(t, url)
	cases := []struct {
		name string
		args []string
		kept bool
		note string
	}{
		{"--no-drop keeps it", []string{"--no-drop"}, true, "slap: schema slapnew did not exist: created it; --no-drop keeps it"},
		{"dropped at the end", nil, false, "slap: schema slapnew did not exist: created it; it is dropped at the end"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mustExec(t, admin, "DROP DATABASE IF EXISTS slapnew")
			args := append([]string{"slap", "-h" + host, "-P" + port, "-ushakedown", "--create-schema=slapnew", "--delimiter=;",
				"--query=select 1;select database()", "--concurrency=5", "--iterations=3"}, tc.args...)
			code, out, stderr := runCLI(context.Background(), args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
			}
			for _, w := range []string{"Number of clients running queries: 5", "Average number of queries per client: 2", "Errors by code: none"} {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if !strings.Contains(stderr, tc.note) {
				t.Errorf("stderr %q: want it to contain %q", stderr, tc.note)
			}
			if exists, _ := schemaTables(t, admin, "slapnew"); exists != tc.kept {
				t.Errorf("slapnew exists: got %v, want %v", exists, tc.kept)
			}
		})
	}
}

// TestSlapInitCommandAlone: with --init-command and no query, each client
// connects (running the init command) and runs nothing, and the summary is
// printed, as mysqlslap does (mysql-test's mysqlslap.test runs this line).
func TestSlapInitCommandAlone(t *testing.T) {
	bin, err := exec.LookPath("mysqlslap")
	if err != nil {
		t.Fatal("mysqlslap is not installed: run 'make test', which installs Debian's mariadb-client")
	}
	url := sandboxtest.URL(t)
	admin := adminDB(t, url)
	mustExec(t, admin, "CREATE DATABASE IF NOT EXISTS slapinit", "DROP TABLE IF EXISTS slapinit.t1")
	host, port := hostPort(t, url)
	conn := []string{"-h" + host, "-P" + port, "-ushakedown"}
	line := []string{"--create-schema=slapinit", "--init-command=CREATE TABLE t1(a INT)", "--silent", "--concurrency=1", "--iterations=1"}
	counters := []string{"Com_create_table", "Com_select", "Connections"}

	want := delta(t, admin, counters, func() {
		if out, err := exec.Command(bin, append(append([]string{"--no-defaults"}, conn...), line...)...).CombinedOutput(); err != nil {
			t.Fatalf("mysqlslap: %v\n%s", err, out)
		}
	})
	if _, tables := schemaTables(t, admin, "slapinit"); len(tables) != 1 || tables[0] != "t1" {
		t.Fatalf("after mysqlslap: got tables %q, want t1", tables)
	}
	mustExec(t, admin, "DROP TABLE slapinit.t1")
	got := delta(t, admin, counters, func() {
		code, out, stderr := runCLI(context.Background(), append(append([]string{"slap"}, conn...), line...)...)
		if code != 0 || out != "" {
			t.Fatalf("shakedown slap: exit %d, output %q (want 0 and none: --silent)\n%s", code, out, stderr)
		}
	})
	for _, k := range counters {
		if got[k] != want[k] {
			t.Errorf("%s: got %d, want %d (mysqlslap)", k, got[k], want[k])
		}
	}
	if _, tables := schemaTables(t, admin, "slapinit"); len(tables) != 1 || tables[0] != "t1" {
		t.Errorf("after shakedown slap: got tables %q, want t1", tables)
	}

	// Without --silent the summary says no queries ran, as mysqlslap's.
	code, out, stderr := runCLI(context.Background(), "slap", "-h"+host, "-P"+port, "-ushakedown", "--create-schema=slapinit",
		"--init-command=SET @a = 1", "--concurrency=3", "--number-of-queries=30")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	for _, w := range []string{"Benchmark\n", "Number of clients running queries: 3", "Average number of queries per client: 0", "Connections: 3,"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}
