package cli

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/target"
)

func TestVerifyBadInput(t *testing.T) {
	u := "mysql://u@127.0.0.1:1/a"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no arguments", []string{"verify"}, "want SOURCE and TARGET, got 0"},
		{"one argument", []string{"verify", u}, "want SOURCE and TARGET, got 1"},
		{"three arguments", []string{"verify", u, u, u}, "got 3"},
		{"not a URL", []string{"verify", "db1", u}, "SOURCE: \"db1\" is not a target URL"},
		{"bad URL", []string{"verify", u, "mysql://u@h:99999/x"}, "TARGET"},
		{"threads", []string{"verify", u, u, "--threads", "0"}, "--threads must be >= 1"},
		{"chunk time", []string{"verify", u, u, "--chunk-time", "0s"}, "--chunk-time must be > 0"},
		{"max load", []string{"verify", u, u, "--max-load", "-1"}, "--max-load must be >= 0"},
		{"where", []string{"verify", u, u, "--where", "1; DROP TABLE t"}, "--where is one condition"},
		{"fix-sql-triggers value", []string{"verify", u, u, "--fix-sql", "f.sql", "--fix-sql-triggers", "fire"}, "--fix-sql-triggers must be skip or drop"},
		{"fix-sql-triggers without fix-sql", []string{"verify", u, u, "--fix-sql-triggers", "drop"}, "--fix-sql-triggers applies to --fix-sql FILE"},
		{"unknown flag", []string{"verify", u, u, "--bogus"}, "--bogus: unknown option"},
		{"analyze no target", []string{"analyze"}, "want one TARGET, got 0"},
		{"analyze not a URL", []string{"analyze", "db1"}, "is not a target URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(context.Background(), tt.args...)
			if code != ExitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("got exit %d, stderr %q; want %d and %q", code, stderr, ExitUsage, tt.want)
			}
			if stdout != "" {
				t.Errorf("got stdout %q, want none", stdout)
			}
		})
	}
}

func TestVerifyHelp(t *testing.T) {
	for _, args := range [][]string{{"verify", "--help"}, {"analyze", "--help"}} {
		code, stdout, _ := runCLI(context.Background(), args...)
		if code != ExitOK || !strings.Contains(stdout, "usage: shakedown "+args[0]) || !strings.Contains(stdout, "--databases") {
			t.Errorf("%v: got exit %d and %q", args, code, stdout)
		}
	}
	_, stdout, _ := runCLI(context.Background(), "analyze", "--help")
	if !strings.Contains(stdout, "WRITES") {
		t.Errorf("analyze --help does not say that it writes: %q", stdout)
	}
}

func TestVerifyConnectionFailureHidesPassword(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	u := fmt.Sprintf("mysql://u:s3cr3t-pw@127.0.0.1:%d/db?timeout=2s", port)
	code, stdout, stderr := runCLI(context.Background(), "verify", u, u)
	if code != ExitFailure || !strings.Contains(stderr, "connection refused") {
		t.Errorf("got exit %d, stderr %q; want 1 and connection refused", code, stderr)
	}
	if strings.Contains(stdout+stderr, "s3cr3t-pw") {
		t.Error("the password was printed")
	}
}

// verifyDBs creates a source and a target database on the test server.
func verifyDBs(t *testing.T, name string) (srcURL, dstURL string, src, dst *sql.DB) {
	t.Helper()
	base := sandboxtest.URL(t)
	tg, err := target.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := tg.OpenNoDB(tg.Endpoints()[0], 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	open := func(db string) (string, *sql.DB) {
		for _, s := range []string{"DROP DATABASE IF EXISTS " + db, "CREATE DATABASE " + db} {
			if _, err := admin.Exec(s); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() { admin.Exec("DROP DATABASE IF EXISTS " + db) })
		u := strings.TrimSuffix(base, "/"+tg.DB) + "/" + db
		dt, err := target.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		pool, err := dt.Open(dt.Endpoints()[0], 4)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pool.Close() })
		return u, pool
	}
	srcURL, src = open(name + "_src")
	dstURL, dst = open(name + "_dst")
	return srcURL, dstURL, src, dst
}

func vfyExec(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// TestVerifySbtestRepair: four sbtest tables, a handful of updates,
// deletes and inserts on the target; verify reports exactly those rows,
// and its repair SQL makes a second verify come out equal.
func TestVerifySbtestRepair(t *testing.T) {
	srcURL, dstURL, src, dst := verifyDBs(t, "vfy_sbtest")
	const rows = 50_000
	for i := 1; i <= 4; i++ {
		vfyExec(t, src, fmt.Sprintf(`CREATE TABLE sbtest%d (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT 0,
			c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id), KEY k_%d (k))`, i, i),
			fmt.Sprintf(`INSERT INTO sbtest%d SELECT seq, CRC32(seq) %% %d,
			CONCAT_WS('-', CRC32(seq), CRC32(seq+1), CRC32(seq+2), CRC32(seq+3), CRC32(seq+4), CRC32(seq+5), CRC32(seq+6), CRC32(seq+7), CRC32(seq+8), CRC32(seq+9), CRC32(seq+10)),
			CONCAT_WS('-', CRC32(-seq), CRC32(-seq-1), CRC32(-seq-2), CRC32(-seq-3), CRC32(-seq-4))
			FROM seq_1_to_%d`, i, rows, rows))
		vfyExec(t, dst, fmt.Sprintf("CREATE TABLE sbtest%d LIKE vfy_sbtest_src.sbtest%d", i, i),
			fmt.Sprintf("INSERT INTO sbtest%d SELECT * FROM vfy_sbtest_src.sbtest%d", i, i))
	}
	vfyExec(t, dst,
		"UPDATE sbtest1 SET c = 'changed' WHERE id = 500",
		"UPDATE sbtest2 SET k = k + 1 WHERE id IN (10, 49999)",
		"DELETE FROM sbtest3 WHERE id IN (77, 25000)",
		"INSERT INTO sbtest4 (id, k, c, pad) VALUES (50001, 1, 'new', 'new')",
		"UPDATE sbtest4 SET pad = 'x' WHERE id = 12345")
	want := []string{
		"sbtest1 changed 500 c", "sbtest2 changed 10 k", "sbtest2 changed 49999 k",
		"sbtest3 missing_on_target 77 ", "sbtest3 missing_on_target 25000 ",
		"sbtest4 extra_on_target 50001 ", "sbtest4 changed 12345 pad",
	}
	dir := t.TempDir()
	fixPath, jsonPath, htmlPath := filepath.Join(dir, "fix.sql"), filepath.Join(dir, "v.json"), filepath.Join(dir, "v.html")
	storePath := filepath.Join(dir, "s.db")
	code, stdout, stderr := runCLI(context.Background(), "verify", srcURL, dstURL, "--fix-sql", fixPath, "--json", jsonPath, "--html", htmlPath,
		"--store="+storePath)
	if code != ExitDifferences {
		t.Fatalf("got exit %d, want 3\n%s%s", code, stdout, stderr)
	}
	var doc struct {
		Equal  bool `json:"equal"`
		Tables []struct {
			Table         string `json:"table"`
			RowsSource    int64  `json:"rows_source"`
			RowsTarget    int64  `json:"rows_target"`
			Chunks        int    `json:"chunks"`
			Equal         bool   `json:"equal"`
			DifferingRows int64  `json:"differing_rows"`
			Rows          []struct {
				Key     map[string]string `json:"key"`
				Kind    string            `json:"kind"`
				Columns []string          `json:"columns"`
			} `json:"rows"`
		} `json:"tables"`
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var got []string
	var total int64
	for _, tr := range doc.Tables {
		name := tr.Table[strings.LastIndex(tr.Table, ".")+1:]
		for _, r := range tr.Rows {
			got = append(got, fmt.Sprintf("%s %s %s %s", name, r.Kind, r.Key["id"], strings.Join(r.Columns, ",")))
		}
		total += tr.DifferingRows
		if tr.RowsSource != rows || tr.Chunks < 1 || tr.Equal {
			t.Errorf("%s: got rows_source %d, chunks %d, equal %v", tr.Table, tr.RowsSource, tr.Chunks, tr.Equal)
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") || total != 7 || doc.Equal || len(doc.Tables) != 4 {
		t.Errorf("got %d tables, %d differing rows:\n  %s\nwant 4, 7:\n  %s", len(doc.Tables), total, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	for _, s := range []string{"sbtest1", `changed id=500 (c: "`, `"changed" on the target)`, "4 tables compared", "compared by these rules"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, stdout)
		}
	}
	if !strings.Contains(stderr, "done:") {
		t.Errorf("stderr has no per-table progress: %q", stderr)
	}
	if html, err := os.ReadFile(htmlPath); err != nil || !strings.Contains(string(html), "changed") {
		t.Errorf("HTML report: %v", err)
	}
	if e := latestVerify(t, storePath); e.Outcome != store.OutcomeFail || e.Summary != "4 of 4 tables differ: 7 differing rows, 0 schema differences" {
		t.Errorf("stored: got outcome %q summary %q, want fail and the counts", e.Outcome, e.Summary)
	}

	// Apply the repair SQL the way a DBA would, statement by statement.
	fix, err := os.ReadFile(fixPath)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := dst.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(fix), "\n") {
		if line != "" && !strings.HasPrefix(line, "--") {
			if _, err := conn.ExecContext(context.Background(), line); err != nil {
				t.Fatalf("repair SQL %q: %v", line, err)
			}
		}
	}
	conn.Close()
	code, stdout, stderr = runCLI(context.Background(), "verify", srcURL, dstURL, "--store="+storePath)
	if code != ExitOK || !strings.Contains(stdout, "source and target are equal") {
		t.Errorf("after the repair: got exit %d\n%s%s", code, stdout, stderr)
	}

	// Both runs are in the store, the repaired one last.
	if e := latestVerify(t, storePath); e.Outcome != store.OutcomePass || e.Summary != "4 tables equal" || e.ID != 2 {
		t.Errorf("stored after the repair: got id %d outcome %q summary %q, want 2, pass, 4 tables equal", e.ID, e.Outcome, e.Summary)
	}
}

func latestVerify(t *testing.T, path string) *store.Evidence {
	t.Helper()
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e, err := st.LatestEvidence(context.Background(), store.KindVerify, nil)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestAnalyze(t *testing.T) {
	_, dstURL, _, dst := verifyDBs(t, "vfy_analyze")
	vfyExec(t, dst, "CREATE TABLE a (id INT PRIMARY KEY)", "CREATE TABLE b (id INT PRIMARY KEY)", "CREATE VIEW v AS SELECT * FROM a")
	code, stdout, stderr := runCLI(context.Background(), "analyze", dstURL, "--local")
	if code != ExitOK {
		t.Fatalf("got exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"vfy_analyze_dst.a: OK", "vfy_analyze_dst.b: OK", "analyzed 2 tables"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
}

func TestVerifyNothingToCompare(t *testing.T) {
	srcURL, dstURL, _, _ := verifyDBs(t, "vfy_empty")
	for _, args := range [][]string{
		{"verify", srcURL, dstURL},
		{"verify", strings.TrimSuffix(srcURL, "vfy_empty_src") + "no_such_db", dstURL},
	} {
		code, _, stderr := runCLI(context.Background(), args...)
		if code != ExitUsage || !strings.Contains(stderr, "nothing to compare") {
			t.Errorf("%v: got exit %d, stderr %q; want 2 and nothing to compare", args[1], code, stderr)
		}
	}
}

func TestVerifyPasswordNeverStored(t *testing.T) {
	srcURL, dstURL, src, dst := verifyDBs(t, "vfy_pw")
	vfyExec(t, src, "CREATE USER IF NOT EXISTS 'vfy_pw'@'127.0.0.1' IDENTIFIED BY 'Pw-s3cr3t-42'",
		"GRANT ALL ON *.* TO 'vfy_pw'@'127.0.0.1'", "CREATE TABLE t (id INT PRIMARY KEY, v INT)", "INSERT INTO t VALUES (1, 1)")
	t.Cleanup(func() { src.Exec("DROP USER IF EXISTS 'vfy_pw'@'127.0.0.1'") })
	vfyExec(t, dst, "CREATE TABLE t (id INT PRIMARY KEY, v INT)", "INSERT INTO t VALUES (1, 2)")
	withPw := func(u string) string {
		return strings.Replace(u, "mysql://shakedown@", "mysql://vfy_pw:Pw-s3cr3t-42@", 1)
	}
	dir := t.TempDir()
	code, stdout, stderr := runCLI(context.Background(), "verify", withPw(srcURL), withPw(dstURL),
		"--fix-sql", filepath.Join(dir, "f.sql"), "--json", filepath.Join(dir, "v.json"), "--html", filepath.Join(dir, "v.html"),
		"--resume", filepath.Join(dir, "ck"))
	if code != ExitDifferences {
		t.Fatalf("got exit %d, want 3\n%s%s", code, stdout, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), "Pw-s3cr3t-42") {
			t.Errorf("%s holds the password", filepath.Base(f))
		}
	}
	if strings.Contains(stdout+stderr, "Pw-s3cr3t-42") {
		t.Error("the output shows the password")
	}
}

// applyWithClient applies a repair file to the server of url the way its
// header says: with the mariadb client, --comments, no database.
func applyWithClient(t *testing.T, url, path string) {
	t.Helper()
	tg, err := target.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	client, err := exec.LookPath("mariadb")
	if err != nil {
		t.Fatalf("the mariadb client is needed to apply repair SQL: %v (run make deps)", err)
	}
	ep := tg.Endpoints()[0]
	args := []string{"--no-defaults", "--comments", "-h", ep.Host, "-P", strconv.Itoa(ep.Port), "-u", tg.User}
	if tg.Password != "" {
		args = append(args, "--password="+tg.Password)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, client, args...)
	cmd.Stdin = f
	if out, err := cmd.CombinedOutput(); err != nil {
		b, _ := os.ReadFile(path)
		t.Fatalf("mariadb < %s: %v\n%s\nrepair SQL:\n%s", filepath.Base(path), err, out, b)
	}
}

// triggerDefs are the triggers of a database as information_schema holds
// them, one line each.
func triggerDefs(t *testing.T, db *sql.DB, schema string) []string {
	t.Helper()
	rows, err := db.Query(`SELECT CONCAT_WS(' | ', TRIGGER_NAME, ACTION_TIMING, EVENT_MANIPULATION, ACTION_ORDER, DEFINER, SQL_MODE,
		CHARACTER_SET_CLIENT, COLLATION_CONNECTION, DATABASE_COLLATION, ACTION_STATEMENT)
		FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ? ORDER BY TRIGGER_NAME`, schema)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestVerifyRepairWithTriggers: the target's orders table has triggers
// (an audit row per insert and delete, a version bumped on update). The
// repair file, applied with the mariadb client as its header says, must
// not let them act: by default it leaves that table unrepaired and says
// why; with --fix-sql-triggers=drop it repairs it with the triggers
// dropped meanwhile and recreated as they were, and verify then finds the
// two sides equal.
func TestVerifyRepairWithTriggers(t *testing.T) {
	srcURL, dstURL, src, dst := verifyDBs(t, "vfy_trg")
	tables := []string{
		"CREATE TABLE orders (id INT PRIMARY KEY, customer VARCHAR(20) NOT NULL, total DECIMAL(10,2) NOT NULL, version INT NOT NULL DEFAULT 0)",
		"CREATE TABLE orders_audit (id INT AUTO_INCREMENT PRIMARY KEY, order_id INT NOT NULL, action VARCHAR(10) NOT NULL)",
	}
	triggers := []string{
		"CREATE TRIGGER orders_ai AFTER INSERT ON orders FOR EACH ROW INSERT INTO orders_audit (order_id, action) VALUES (NEW.id, 'insert')",
		"CREATE TRIGGER orders_ai_first AFTER INSERT ON orders FOR EACH ROW PRECEDES orders_ai INSERT INTO orders_audit (order_id, action) VALUES (NEW.id, 'first')",
		`CREATE TRIGGER orders_ad AFTER DELETE ON orders FOR EACH ROW BEGIN
  -- every delete is kept; with its id
  INSERT INTO orders_audit (order_id, action) VALUES (OLD.id, 'delete'); /* done */
END`,
	}
	// One trigger is created in another session's settings, which the
	// recreated one must keep.
	bumpVersion := []string{"SET NAMES latin1", "SET SESSION sql_mode = 'ANSI_QUOTES'",
		`CREATE TRIGGER orders_bu BEFORE UPDATE ON orders FOR EACH ROW SET NEW.version = OLD.version + 1`}
	onConn := func(db *sql.DB, stmts ...string) {
		t.Helper()
		conn, err := db.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for _, s := range stmts {
			if _, err := conn.ExecContext(context.Background(), s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
	vfyExec(t, src, tables...)
	vfyExec(t, src, triggers...)
	onConn(src, bumpVersion...)
	vfyExec(t, src, "INSERT INTO orders SELECT seq, CONCAT('c', seq % 7), seq * 1.25, 0 FROM seq_1_to_200")
	// The copy: rows first, then the triggers.
	vfyExec(t, dst, tables...)
	vfyExec(t, dst, "INSERT INTO orders SELECT * FROM vfy_trg_src.orders", "INSERT INTO orders_audit SELECT * FROM vfy_trg_src.orders_audit")
	vfyExec(t, dst, triggers...)
	onConn(dst, bumpVersion...)
	// Then the target drifts, its triggers acting.
	vfyExec(t, dst, "DELETE FROM orders WHERE id = 5", "UPDATE orders SET total = 1 WHERE id = 7",
		"INSERT INTO orders VALUES (201, 'c5', 9.99, 0)")
	before := triggerDefs(t, dst, "vfy_trg_dst")
	if len(before) != 4 {
		t.Fatalf("target triggers: got %d, want 4:\n%s", len(before), strings.Join(before, "\n"))
	}

	dir := t.TempDir()
	verifyJSON := func(args ...string) (code int, differing map[string]int64, stdout string) {
		t.Helper()
		jsonPath := filepath.Join(dir, "v.json")
		code, stdout, stderr := runCLI(context.Background(), append([]string{"verify", srcURL, dstURL, "--json", jsonPath}, args...)...)
		if code != ExitOK && code != ExitDifferences {
			t.Fatalf("verify %v: got exit %d\n%s%s", args, code, stdout, stderr)
		}
		var doc struct {
			Tables []struct {
				Table         string `json:"table"`
				DifferingRows int64  `json:"differing_rows"`
			} `json:"tables"`
		}
		b, err := os.ReadFile(jsonPath)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		differing = map[string]int64{}
		for _, tr := range doc.Tables {
			differing[strings.TrimPrefix(tr.Table, "vfy_trg_src.")] = tr.DifferingRows
		}
		return code, differing, stdout
	}
	want := func(what string, got map[string]int64, orders, audit int64) {
		t.Helper()
		if got["orders"] != orders || got["orders_audit"] != audit {
			t.Errorf("%s: got %d differing rows in orders and %d in orders_audit, want %d and %d", what, got["orders"], got["orders_audit"], orders, audit)
		}
	}

	// By default the file repairs orders_audit and leaves orders alone.
	skipPath := filepath.Join(dir, "skip.sql")
	code, differing, stdout := verifyJSON("--fix-sql", skipPath)
	if code != ExitDifferences {
		t.Fatalf("first verify: got exit %d, want 3", code)
	}
	want("before any repair", differing, 3, 3)
	if !strings.Contains(stdout, "note: the target's table has triggers (orders_ai_first, orders_ai, orders_bu, orders_ad)") {
		t.Errorf("the report does not say that orders is left unrepaired for its triggers:\n%s", stdout)
	}
	skip, err := os.ReadFile(skipPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"vfy_trg_dst.orders: orders_ai_first (AFTER INSERT), orders_ai (AFTER INSERT), orders_bu (BEFORE UPDATE), orders_ad (AFTER DELETE)",
		"NOT repaired", "--fix-sql-triggers=drop"} {
		if !strings.Contains(string(skip), s) {
			t.Errorf("the default repair file does not say %q:\n%s", s, skip)
		}
	}
	applyWithClient(t, dstURL, skipPath)
	code, differing, _ = verifyJSON()
	if code != ExitDifferences {
		t.Fatalf("after the default repair: got exit %d, want 3 (orders left as it was)", code)
	}
	want("after the default repair", differing, 3, 0)

	// With --fix-sql-triggers=drop the file repairs orders too.
	dropPath := filepath.Join(dir, "drop.sql")
	if code, _, _ := verifyJSON("--fix-sql", dropPath, "--fix-sql-triggers=drop"); code != ExitDifferences {
		t.Fatalf("verify --fix-sql-triggers=drop: got exit %d, want 3", code)
	}
	applyWithClient(t, dstURL, dropPath)
	code, differing, stdout = verifyJSON()
	if code != ExitOK {
		drop, _ := os.ReadFile(dropPath)
		t.Fatalf("after the repair with the triggers dropped: got exit %d, want 0\n%s\nrepair SQL:\n%s", code, stdout, drop)
	}
	want("after the repair with the triggers dropped", differing, 0, 0)
	if after := triggerDefs(t, dst, "vfy_trg_dst"); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Errorf("triggers after the repair:\n%s\nwant them as before:\n%s", strings.Join(after, "\n"), strings.Join(before, "\n"))
	}
}
