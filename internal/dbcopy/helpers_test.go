package dbcopy

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/escape"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// pair is a source and a target database on the shared test server.
type pair struct {
	src, dst     *target.Target
	srcDB, dstDB *sql.DB // plain pools, for building and reading the data
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
	if len(name) > 30 {
		name = name[:30]
	}
	prefix := fmt.Sprintf("c%d_%s", dbSeq.Add(1), name)
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
		mustExec(t, admin, "DROP DATABASE IF EXISTS "+escape.Ident(db), "CREATE DATABASE "+escape.Ident(db)+" CHARACTER SET utf8mb4")
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

func count(t *testing.T, db *sql.DB, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// shop makes a small application schema on db: customers, orders with a
// foreign key, a table without a primary key that a trigger fills, a view
// and a function. Values include the characters LOAD DATA escapes.
func shop(t *testing.T, db *sql.DB, customers, orders int) {
	t.Helper()
	mustExec(t, db,
		"CREATE TABLE customers (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(50) NOT NULL, note TEXT NULL, KEY name_ix (name))",
		`CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT NOT NULL, amount DECIMAL(10,2), created TIMESTAMP NULL,
			flags BIT(4), raw VARBINARY(16), KEY cust_ix (customer_id),
			CONSTRAINT fk_customer FOREIGN KEY (customer_id) REFERENCES customers (id))`,
		"CREATE TABLE audit (msg VARCHAR(100), at INT)",
		"CREATE VIEW big_orders AS SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.amount > 50",
		"CREATE FUNCTION twice(x INT) RETURNS INT DETERMINISTIC RETURN x * 2",
		"CREATE TRIGGER orders_ai AFTER INSERT ON orders FOR EACH ROW INSERT INTO audit VALUES (CONCAT('order ', NEW.id), NEW.customer_id)",
	)
	notes := []string{"NULL", "''", "'tab\\there'", "'new\\nline'", "'back\\\\slash'", "'quote''s'", "'null\\0byte'"}
	var vals []string
	for i := 1; i <= customers; i++ {
		vals = append(vals, fmt.Sprintf("(%d, 'customer %d', %s)", i, i, notes[i%len(notes)]))
	}
	mustExec(t, db, "INSERT INTO customers VALUES "+strings.Join(vals, ","))
	vals = vals[:0]
	for i := 1; i <= orders; i++ {
		vals = append(vals, fmt.Sprintf("(%d, %d, %d.%02d, FROM_UNIXTIME(%d), b'%04b', X'%02x00ff')", i, 1+i%customers, i%100, i%100, 1_700_000_000+i, i%16, i%256))
	}
	mustExec(t, db, "INSERT INTO orders VALUES "+strings.Join(vals, ","))
	mustExec(t, db, "INSERT INTO audit VALUES ('duplicate', 1), ('duplicate', 1), (NULL, NULL)")
}
