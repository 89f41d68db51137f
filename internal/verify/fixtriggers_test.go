package verify

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/escape"
)

// applyWithClient applies repair SQL to the target the way the file's
// header says: with the mariadb client, --comments, no default database.
func (p *pair) applyWithClient(t *testing.T, fix string) {
	t.Helper()
	client, err := exec.LookPath("mariadb")
	if err != nil {
		t.Fatalf("the mariadb client is needed to apply repair SQL: %v (run make deps)", err)
	}
	path := filepath.Join(t.TempDir(), "fix.sql")
	if err := os.WriteFile(path, []byte(fix), 0o644); err != nil {
		t.Fatal(err)
	}
	ep := p.dst.Endpoints()[0]
	args := []string{"--no-defaults", "--comments", "-h", ep.Host, "-P", strconv.Itoa(ep.Port), "-u", p.dst.User}
	if p.dst.Password != "" {
		args = append(args, "--password="+p.dst.Password)
	}
	ctx, cancel := context.WithTimeout(testCtx(t), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, client, args...)
	if cmd.Stdin, err = os.Open(path); err != nil {
		t.Fatal(err)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mariadb < repair SQL: %v\n%s\nrepair SQL:\n%s", err, out, fix)
	}
}

// triggers lists a database's triggers as information_schema holds them,
// everything a recreated trigger must keep, one line each.
func triggers(t *testing.T, db *sql.DB, schema string) []string {
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

// onConn runs statements on one connection, so that SET statements hold
// for the ones after them; the connection is then discarded, not handed
// back to the pool with its settings.
func onConn(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	conn, err := db.Conn(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	defer conn.Raw(func(any) error { return driver.ErrBadConn }) //nolint:errcheck // discards the connection
	for _, s := range stmts {
		if _, err := conn.ExecContext(testCtx(t), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// triggeredOrders builds orders, whose triggers write orders_audit and
// bump a version, on both sides; the target is copied (rows, then
// triggers) and then drifts with its triggers acting: orders has a row
// missing, one changed and one extra, orders_audit three extra rows.
func triggeredOrders(t *testing.T, p *pair) {
	t.Helper()
	tables := []string{
		"CREATE TABLE orders (id INT PRIMARY KEY, customer VARCHAR(20) NOT NULL, total DECIMAL(10,2) NOT NULL, version INT NOT NULL DEFAULT 0)",
		"CREATE TABLE orders_audit (id INT AUTO_INCREMENT PRIMARY KEY, order_id INT NOT NULL, action VARCHAR(10) NOT NULL)",
	}
	trigs := []string{
		"CREATE TRIGGER orders_ai AFTER INSERT ON orders FOR EACH ROW INSERT INTO orders_audit (order_id, action) VALUES (NEW.id, 'insert')",
		"CREATE TRIGGER orders_ai_first AFTER INSERT ON orders FOR EACH ROW PRECEDES orders_ai INSERT INTO orders_audit (order_id, action) VALUES (NEW.id, 'first')",
		`CREATE TRIGGER orders_ad AFTER DELETE ON orders FOR EACH ROW BEGIN
  -- every delete is kept; with its id
  INSERT INTO orders_audit (order_id, action) VALUES (OLD.id, 'delete'); /* done */
END`,
	}
	// One trigger is created with other session settings, which the
	// recreated one must keep.
	bump := []string{"SET NAMES latin1", "SET SESSION sql_mode = 'ANSI_QUOTES'",
		`CREATE TRIGGER orders_bu BEFORE UPDATE ON orders FOR EACH ROW SET NEW.version = OLD.version + 1`}
	mustExec(t, p.srcDB, tables...)
	mustExec(t, p.srcDB, trigs...)
	onConn(t, p.srcDB, bump...)
	mustExec(t, p.srcDB, "INSERT INTO orders SELECT seq, CONCAT('c', seq % 7), seq * 1.25, 0 FROM seq_1_to_200")
	p.copyTable(t, "orders")
	p.copyTable(t, "orders_audit")
	mustExec(t, p.dstDB, trigs...)
	onConn(t, p.dstDB, bump...)
	mustExec(t, p.dstDB, "DELETE FROM orders WHERE id = 5", "UPDATE orders SET total = 1 WHERE id = 7",
		"INSERT INTO orders VALUES (201, 'c5', 9.99, 0)")
}

// TestFixSQLTriggers: the repair SQL, applied as its header says, must not
// let the target's triggers act. By default it leaves a table with
// triggers unrepaired and says why; with FixTriggersDrop it repairs it
// with its triggers dropped meanwhile and recreated as they were.
func TestFixSQLTriggers(t *testing.T) {
	p := newPair(t)
	triggeredOrders(t, p)
	before := triggers(t, p.dstDB, p.dst.DB)
	if len(before) != 4 {
		t.Fatalf("target triggers: got %d, want 4:\n%s", len(before), strings.Join(before, "\n"))
	}
	differing := func(r *Report) (orders, audit int64) {
		return table(t, r, "orders").DifferingRows, table(t, r, "orders_audit").DifferingRows
	}

	var fix bytes.Buffer
	r := p.run(t, Options{Fix: &fix})
	if o, a := differing(r); o != 3 || a != 3 {
		t.Fatalf("before the repair: got %d differing rows in orders and %d in orders_audit, want 3 and 3", o, a)
	}
	for _, s := range []string{p.dst.DB + ".orders: orders_ai_first (AFTER INSERT), orders_ai (AFTER INSERT), orders_bu (BEFORE UPDATE), orders_ad (AFTER DELETE)",
		"NOT repaired", "--fix-sql-triggers=drop"} {
		if !strings.Contains(fix.String(), s) {
			t.Errorf("the repair SQL does not say %q:\n%s", s, fix.String())
		}
	}
	p.applyWithClient(t, fix.String())
	r = p.run(t, Options{})
	if o, a := differing(r); o != 3 || a != 0 {
		t.Errorf("after the default repair: got %d differing rows in orders and %d in orders_audit, want 3 (left as it was) and 0\nrepair SQL:\n%s",
			o, a, fix.String())
	}

	fix.Reset()
	r = p.run(t, Options{Fix: &fix, FixTriggers: FixTriggersDrop})
	if r.Equal {
		t.Fatal("verify with FixTriggersDrop: got equal, want orders to differ")
	}
	if !strings.Contains(fix.String(), "DROP TRIGGER") || !strings.Contains(fix.String(), "LOCK TABLES") {
		t.Errorf("the repair SQL does not drop the triggers under a lock:\n%s", fix.String())
	}
	p.applyWithClient(t, fix.String())
	if r = p.run(t, Options{}); !r.Equal {
		var b bytes.Buffer
		WriteText(&b, r, 20)
		t.Errorf("after the repair with the triggers dropped: not equal:\n%s\nrepair SQL:\n%s", b.String(), fix.String())
	}
	if after := triggers(t, p.dstDB, p.dst.DB); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Errorf("triggers after the repair:\n%s\nwant them as before:\n%s", strings.Join(after, "\n"), strings.Join(before, "\n"))
	}
}

func TestSplitQualified(t *testing.T) {
	for _, tt := range []struct{ db, table string }{{"shop", "orders"}, {"a.b", "c`d"}, {"", "x"}, {"`", "``"}} {
		db, table := splitQualified(escape.Qualified(tt.db, tt.table))
		if db != tt.db || table != tt.table {
			t.Errorf("splitQualified(%s.%s): got %q, %q, want %q, %q", escape.Ident(tt.db), escape.Ident(tt.table), db, table, tt.db, tt.table)
		}
	}
}

func TestDelimiter(t *testing.T) {
	tests := []struct{ name, stmt, want string }{
		{"plain", "CREATE TRIGGER a BEFORE INSERT ON t FOR EACH ROW SET NEW.x = 1", ";;"},
		{"holds ;;", "BEGIN SET @a = ';;'; END", "$$"},
		{"holds all", ";; $$ // $$$$ ;;;; $shakedown$", "$shakedown$$"},
	}
	for _, tt := range tests {
		if got := delimiter(tt.stmt); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}
