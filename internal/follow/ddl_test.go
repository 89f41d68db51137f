package follow

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

// TestDDLApplied: table DDL in the followed database, run on the source
// while it is followed and under load, is applied on the target in its
// place among the row changes; DDL of a database not followed is not.
// Source and target are servers of their own, so that statements naming
// the database (shop.t) are applied as they are.
func TestDDLApplied(t *testing.T) {
	insts := sandboxtest.StartAll(t, binlogSettings, nil)
	ctx := testCtx(t, 2*time.Minute)
	src, dst := withDB(t, insts[0].URL(), "shop"), withDB(t, insts[1].URL(), "shop")
	admin, tdb := open(t, src), open(t, dst)
	shop(t, admin, "shop", 40)
	mustExec(t, admin, "CREATE TABLE shop.old (id INT PRIMARY KEY)", "INSERT INTO shop.old VALUES (1), (2)")
	from := copyDB(t, ctx, src, dst)

	fctx, stopFollow := context.WithCancel(ctx)
	defer stopFollow()
	followed := make(chan followResult, 1)
	go func() {
		sum, err := Run(fctx, src, dst, Options{AllowWrite: true, From: from, Workers: 3})
		followed <- followResult{sum, err}
	}()
	// It has started (saved its first position) before the source changes.
	waitApplied(t, ctx, tdb, "shop", from, followed)

	lctx, stopLoad := context.WithTimeout(ctx, 3*time.Second)
	defer stopLoad()
	var wg sync.WaitGroup
	var txns int64
	wg.Add(1)
	go func() { defer wg.Done(); txns, _ = churn(lctx, admin, "shop", 3) }()
	conn := useDB(t, ctx, admin, "shop")
	ddl := []string{
		"ALTER TABLE items ADD COLUMN extra INT DEFAULT 7",
		"CREATE TABLE newt (id INT PRIMARY KEY, v TEXT)",
		"RENAME TABLE newt TO newt2",
		"TRUNCATE TABLE `lines`",
		"DROP TABLE shop.old",
	}
	steps := []string{
		"INSERT INTO items (id, name, stock) VALUES (9001, 'before extra', 1)",
		ddl[0],
		"INSERT INTO items (id, name, stock, extra) VALUES (9002, 'with extra', 1, 43), (9003, 'default', 1, DEFAULT)",
		"UPDATE items SET extra = extra + 1 WHERE id <= 10",
		ddl[1],
		"INSERT INTO newt VALUES (1, 'one'), (2, REPEAT('two', 1000))",
		ddl[2],
		"INSERT INTO newt2 VALUES (3, 'three')",
		"UPDATE newt2 SET v = 'uno' WHERE id = 1",
		ddl[3],
		"INSERT INTO `lines` VALUES (60001, 1, 10), (60002, 1, 20)",
		ddl[4],
		// Not followed: skipped, and never seen on the target.
		"CREATE DATABASE other",
		"CREATE TABLE other.x (id INT PRIMARY KEY)",
		"INSERT INTO other.x VALUES (1)",
	}
	for _, s := range steps {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			t.Fatalf("source: %s: %v", s, err)
		}
	}
	wg.Wait()
	end := sourceAt(t, admin)
	waitApplied(t, ctx, tdb, "shop", end, followed)
	stopFollow()
	r := <-followed
	if r.err != nil {
		t.Fatalf("follow: %v", r.err)
	}
	t.Logf("%d transactions of load; the follower: %s", txns, r.sum.Text())
	if r.sum.DDL != int64(len(ddl)) {
		t.Errorf("Summary.DDL %d, want %d (%s)", r.sum.DDL, len(ddl), strings.Join(ddl, "; "))
	}
	if r.sum.Skipped < 3 {
		t.Errorf("Summary.Skipped %d, want >= 3 (CREATE DATABASE other, CREATE TABLE other.x, its row)", r.sum.Skipped)
	}
	sum, err := Run(ctx, src, dst, Options{AllowWrite: true, UntilCaughtUp: true})
	if err != nil {
		t.Fatalf("follow until caught up: %v", err)
	}
	if sum.State != StateCaughtUp || sum.DDL != 0 {
		t.Errorf("the second follower: state %q and %d DDL, want %q and 0", sum.State, sum.DDL, StateCaughtUp)
	}

	want := tableSums(t, admin, "shop")
	if _, ok := want["newt2"]; !ok || len(want) != 4 {
		t.Fatalf("the source's tables are %v, want items, lines, users, newt2", want)
	}
	got := tableSums(t, tdb, "shop")
	if len(got) != len(want) {
		t.Errorf("the target's tables are %v, want the source's %v", got, want)
	}
	sameSums(t, want, got)
	var n int
	if err := tdb.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'other'").Scan(&n); err != nil || n != 0 {
		t.Errorf("the target has database other (%d, %v), which is not followed", n, err)
	}
	var extra sql.NullInt64
	if err := tdb.QueryRow("SELECT extra FROM shop.items WHERE id = 9003").Scan(&extra); err != nil || extra.Int64 != 7 {
		t.Errorf("target items 9003: extra %v (%v), want the default 7", extra, err)
	}
}

// TestDDLStops: a DDL statement the target refuses stops the follower
// before it, with the changes before it applied and none after; run again
// it stops at the same place, and with SkipDDL it goes on past it.
func TestDDLStops(t *testing.T) {
	inst := sandboxtest.Start(t, binlogSettings...)
	ctx := testCtx(t, 2*time.Minute)
	src, dst := withDB(t, inst.URL(), "shop"), withDB(t, inst.URL(), "shop_copy")
	admin := open(t, src)
	shop(t, admin, "shop", 20)
	from := copyDB(t, ctx, src, dst)
	// A DBA made the table on the target already.
	mustExec(t, admin, "CREATE TABLE shop_copy.clash (id INT PRIMARY KEY, v INT)")

	conn := useDB(t, ctx, admin, "shop")
	for _, s := range []string{
		"INSERT INTO items (id, name, stock) VALUES (8001, 'before', 1)",
		"UPDATE users SET visits = 5 WHERE id = 1",
		"CREATE TABLE clash (id INT PRIMARY KEY, v INT)",
		"INSERT INTO clash VALUES (1, 10)",
		"INSERT INTO items (id, name, stock) VALUES (8002, 'after', 1)",
	} {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			t.Fatalf("source: %s: %v", s, err)
		}
	}
	name := nameOf([]Pair{{"shop", "shop_copy"}})

	_, err := Run(ctx, src, dst, Options{AllowWrite: true, From: from, UntilCaughtUp: true})
	wantRefused(t, err, ErrStoppedAtDDL, "CREATE TABLE clash", "--skip-ddl", "already exists")
	saved, lerr := Load(ctx, admin, name)
	if lerr != nil {
		t.Fatal(lerr)
	}
	if saved.State != StateDDL {
		t.Errorf("saved state %q, want %q", saved.State, StateDDL)
	}
	if saved.DDL.IsZero() || !strings.Contains(err.Error(), saved.DDL.String()) {
		t.Errorf("the error does not name the saved DDL position %s:\n%v", saved.DDL, err)
	}
	if saved.Position.Reached(saved.DDL) || !saved.Position.Reached(from) || saved.Position == from {
		t.Errorf("saved position %s, want after the copy's %s and before the DDL's end %s", saved.Position, from, saved.DDL)
	}
	if !strings.Contains(saved.DDLText, "CREATE TABLE clash") {
		t.Errorf("saved DDL statement %q, want the CREATE TABLE", saved.DDLText)
	}
	// Before: applied. After: not, and nothing of the DDL.
	wantRows(t, admin, "SELECT COUNT(*) FROM shop_copy.items WHERE id = 8001", 1)
	wantRows(t, admin, "SELECT visits FROM shop_copy.users WHERE id = 1", 5)
	wantRows(t, admin, "SELECT COUNT(*) FROM shop_copy.items WHERE id = 8002", 0)
	wantRows(t, admin, "SELECT COUNT(*) FROM shop_copy.clash", 0)

	// Again, from the saved position: the same stop.
	_, err = Run(ctx, src, dst, Options{AllowWrite: true, UntilCaughtUp: true})
	wantRefused(t, err, ErrStoppedAtDDL, saved.DDL.String(), "CREATE TABLE clash")
	again, lerr := Load(ctx, admin, name)
	if lerr != nil {
		t.Fatal(lerr)
	}
	if again.Position != saved.Position || again.DDL != saved.DDL || again.State != StateDDL {
		t.Errorf("the second stop saved %s before %s (%s), want %s before %s", again.Position, again.DDL, again.State, saved.Position, saved.DDL)
	}
	wantRows(t, admin, "SELECT COUNT(*) FROM shop_copy.items WHERE id = 8002", 0)

	// Past it: what follows is applied.
	sum, err := Run(ctx, src, dst, Options{AllowWrite: true, UntilCaughtUp: true, SkipDDL: true})
	if err != nil {
		t.Fatalf("follow with SkipDDL: %v", err)
	}
	if sum.State != StateCaughtUp || sum.DDL != 0 {
		t.Errorf("with SkipDDL: state %q and %d DDL applied, want %q and 0", sum.State, sum.DDL, StateCaughtUp)
	}
	after, lerr := Load(ctx, admin, name)
	if lerr != nil {
		t.Fatal(lerr)
	}
	if !after.DDL.IsZero() || after.DDLText != "" {
		t.Errorf("after the skip the saved DDL is %s %q, want none", after.DDL, after.DDLText)
	}
	wantRows(t, admin, "SELECT COUNT(*) FROM shop_copy.items WHERE id = 8002", 1)
	wantRows(t, admin, "SELECT v FROM shop_copy.clash WHERE id = 1", 10)
	sameSums(t, checksums(t, admin, "shop"), checksums(t, admin, "shop_copy"))
}

// TestDDLRenamedDatabase: into a target database of another name, a
// statement that names no database is applied there; one that names the
// source's database stops the follower with the names to use.
func TestDDLRenamedDatabase(t *testing.T) {
	inst := sandboxtest.Start(t, binlogSettings...)
	ctx := testCtx(t, 2*time.Minute)
	src, dst := withDB(t, inst.URL(), "shop"), withDB(t, inst.URL(), "shop_copy")
	admin := open(t, src)
	shop(t, admin, "shop", 20)
	from := copyDB(t, ctx, src, dst)

	conn := useDB(t, ctx, admin, "shop")
	for _, s := range []string{
		"ALTER TABLE items ADD COLUMN extra INT DEFAULT 7",
		"INSERT INTO items (id, name, stock, extra) VALUES (7001, 'x', 1, 70)",
		"ALTER TABLE shop.items ADD COLUMN more INT",
		"INSERT INTO items (id, name, stock, more) VALUES (7002, 'y', 1, 1)",
	} {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			t.Fatalf("source: %s: %v", s, err)
		}
	}
	sum, err := Run(ctx, src, dst, Options{AllowWrite: true, From: from, UntilCaughtUp: true})
	wantRefused(t, err, ErrStoppedAtDDL, "ALTER TABLE shop.items ADD COLUMN more INT", "database shop (shop_copy on the target)", "--skip-ddl")
	if sum == nil || sum.DDL != 1 {
		t.Errorf("Summary %+v, want 1 DDL applied (the unqualified ALTER)", sum)
	}
	wantRows(t, admin, "SELECT extra FROM shop_copy.items WHERE id = 7001", 70)
	wantRows(t, admin, "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'shop_copy' AND TABLE_NAME = 'items' AND COLUMN_NAME = 'more'", 0)

	// The DBA applies it by hand, as the message says, and skips it.
	mustExec(t, admin, "ALTER TABLE shop_copy.items ADD COLUMN more INT")
	if _, err := Run(ctx, src, dst, Options{AllowWrite: true, UntilCaughtUp: true, SkipDDL: true}); err != nil {
		t.Fatalf("follow with SkipDDL: %v", err)
	}
	wantRows(t, admin, "SELECT more FROM shop_copy.items WHERE id = 7002", 1)
	sameSums(t, checksums(t, admin, "shop"), checksums(t, admin, "shop_copy"))
}

// useDB is a connection of db's pool in database name.
func useDB(t *testing.T, ctx context.Context, db *sql.DB, name string) *sql.Conn {
	t.Helper()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.ExecContext(ctx, "USE `"+name+"`"); err != nil {
		t.Fatal(err)
	}
	return conn
}

// followResult is what a Run in a goroutine of its own returned.
type followResult struct {
	sum *Summary
	err error
}

// waitApplied polls the position saved on the target until it reaches p;
// a follower that ends first (on done) fails the test.
func waitApplied(t *testing.T, ctx context.Context, db *sql.DB, name string, p Position, done <-chan followResult) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, err := Load(ctx, db, name)
		if err == nil && s.Position.Reached(p) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the follower did not reach %s in 30s: saved %+v, %v", p, s, err)
		}
		select {
		case r := <-done:
			t.Fatalf("the follower ended before it reached %s: %v", p, r.err)
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// wantRows fails unless the query's one integer is want.
func wantRows(t *testing.T, db *sql.DB, q string, want int64) {
	t.Helper()
	var got sql.NullInt64
	if err := db.QueryRow(q).Scan(&got); err != nil && !errors.Is(err, sql.ErrNoRows) {
		t.Fatalf("%s: %v", q, err)
	}
	if got.Int64 != want {
		t.Errorf("%s: got %d, want %d", q, got.Int64, want)
	}
}

// tableSums is CHECKSUM TABLE of every base table of database name, and
// its row count.
func tableSums(t *testing.T, db *sql.DB, name string) map[string]string {
	t.Helper()
	rows, err := db.Query("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE'", name)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	rows.Close()
	sort.Strings(names)
	out := map[string]string{}
	for _, n := range names {
		var tbl string
		var sum sql.NullString
		var count int64
		q := "`" + name + "`.`" + n + "`"
		if err := db.QueryRow("CHECKSUM TABLE "+q).Scan(&tbl, &sum); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow("SELECT COUNT(*) FROM " + q).Scan(&count); err != nil {
			t.Fatal(err)
		}
		out[n] = fmt.Sprintf("%s (%d rows)", sum.String, count)
	}
	return out
}
