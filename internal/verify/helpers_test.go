package verify

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/escape"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/schema"
	"github.com/shakedown/shakedown/internal/target"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// pair is a source and a target database, two databases on the shared
// test server.
type pair struct {
	src, dst       *target.Target
	srcDB, dstDB   *sql.DB // plain pools, for building the data
	srcSide, dstSd *schema.Side
}

var dbSeq atomic.Int64

var nonWord = regexp.MustCompile(`[^a-z0-9]+`)

// newPair creates two empty databases for one test and drops them after.
func newPair(t *testing.T) *pair {
	t.Helper()
	base, err := target.Parse(sandboxtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	name := nonWord.ReplaceAllString(strings.ToLower(t.Name()), "_")
	if len(name) > 40 {
		name = name[:40]
	}
	prefix := fmt.Sprintf("v%d_%s", dbSeq.Add(1), name)
	admin, err := base.OpenNoDB(base.Endpoints()[0], 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	p := &pair{}
	for _, side := range []struct {
		suffix string
		tg     **target.Target
		db     **sql.DB
	}{{"_s", &p.src, &p.srcDB}, {"_t", &p.dst, &p.dstDB}} {
		db := prefix + side.suffix
		mustExec(t, admin, "DROP DATABASE IF EXISTS "+escape.Ident(db))
		mustExec(t, admin, "CREATE DATABASE "+escape.Ident(db)+" CHARACTER SET utf8mb4")
		t.Cleanup(func() { admin.Exec("DROP DATABASE IF EXISTS " + escape.Ident(db)) })
		tg := *base
		tg.DB = db
		*side.tg = &tg
		pool, err := tg.Open(tg.Endpoints()[0], 4)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pool.Close() })
		*side.db = pool
	}
	ctx := testCtx(t)
	if p.srcSide, err = Connect(ctx, "source", p.src, 8); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.srcSide.DB.Close() })
	if p.dstSd, err = Connect(ctx, "target", p.dst, 8); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.dstSd.DB.Close() })
	return p
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func mustExec(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// both runs the statements on the source and the target.
func (p *pair) both(t *testing.T, stmts ...string) {
	t.Helper()
	mustExec(t, p.srcDB, stmts...)
	mustExec(t, p.dstDB, stmts...)
}

// copyTable makes the target's table a copy of the source's.
func (p *pair) copyTable(t *testing.T, table string) {
	t.Helper()
	var name, ddl string
	if err := p.srcDB.QueryRow("SHOW CREATE TABLE "+escape.Ident(table)).Scan(&name, &ddl); err != nil {
		t.Fatal(err)
	}
	mustExec(t, p.dstDB, ddl)
	mustExec(t, p.dstDB, fmt.Sprintf("INSERT INTO %s SELECT * FROM %s.%s", escape.Ident(table), escape.Ident(p.src.DB), escape.Ident(table)))
}

// run verifies with test-friendly defaults.
func (p *pair) run(t *testing.T, opts Options) *Report {
	t.Helper()
	rep, err := Run(testCtx(t), p.srcSide, p.dstSd, opts)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	return rep
}

// table finds a table's report.
func table(t *testing.T, r *Report, name string) *TableReport {
	t.Helper()
	for _, tr := range r.Tables {
		if tr.Table == name || strings.HasSuffix(tr.Table, "."+name) {
			return tr
		}
	}
	t.Fatalf("no table %s in the report", name)
	return nil
}

// rowSet renders a table's differing rows as sorted "kind key [cols]"
// strings.
func rowSet(tr *TableReport) []string {
	out := []string{}
	for _, d := range tr.Rows {
		s := d.Kind + " " + d.KeyString()
		if len(d.Columns) > 0 {
			s += " [" + strings.Join(d.Columns, ",") + "]"
		}
		if d.Count > 1 {
			s += fmt.Sprintf(" x%d", d.Count)
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func wantRows(t *testing.T, tr *TableReport, want ...string) {
	t.Helper()
	sort.Strings(want)
	got := rowSet(tr)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s: got differing rows\n  %s\nwant\n  %s", tr.Table, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// applyFix runs repair SQL on the target, statement by statement (one per
// line, comments skipped), on one connection so that its SET statements
// hold.
func (p *pair) applyFix(t *testing.T, fix string) {
	t.Helper()
	ctx := testCtx(t)
	conn, err := p.dstDB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, line := range strings.Split(fix, "\n") {
		if line == "" || strings.HasPrefix(line, "--") {
			continue
		}
		if _, err := conn.ExecContext(ctx, line); err != nil {
			t.Fatalf("apply repair SQL %q: %v", line, err)
		}
	}
}

// naive is the checksum this package must beat: COUNT(*) and BIT_XOR of
// CRC32 over CONCAT_WS of expressions, as pt-table-checksum and
// sync-diff-inspector build it. It runs on the given pool with the given
// session time zone.
func naive(t *testing.T, db *sql.DB, table, exprs, tz string) string {
	t.Helper()
	ctx := testCtx(t)
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET time_zone = '"+tz+"'"); err != nil {
		t.Fatal(err)
	}
	var n, x int64
	q := "SELECT COUNT(*), COALESCE(BIT_XOR(CAST(CRC32(CONCAT_WS('#'," + exprs + ")) AS UNSIGNED)),0) FROM " + escape.Ident(table)
	if err := conn.QueryRowContext(ctx, q).Scan(&n, &x); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return fmt.Sprintf("%d/%d", n, x)
}

// naiveEqual asserts that the naive checksum calls the two sides equal.
func (p *pair) naiveEqual(t *testing.T, table, exprs string) {
	t.Helper()
	p.naiveEqualTZ(t, table, exprs, "+00:00", "+00:00")
}

func (p *pair) naiveEqualTZ(t *testing.T, table, exprs, srcTZ, dstTZ string) {
	t.Helper()
	if s, d := naive(t, p.srcDB, table, exprs, srcTZ), naive(t, p.dstDB, table, exprs, dstTZ); s != d {
		t.Fatalf("test data does not fool the naive checksum on %s: source %s, target %s", table, s, d)
	}
}
