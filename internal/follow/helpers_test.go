package follow

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/dbcopy"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(child())
	}
	os.Exit(sandboxtest.Main(m))
}

// binlogSettings make a sandbox a source a follower can read.
var binlogSettings = []string{"log_bin=ON", "binlog_format=ROW", "binlog_row_image=FULL"}

func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

func mustParse(t *testing.T, u string) *target.Target {
	t.Helper()
	tg, err := target.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// withDB is u with database db.
func withDB(t *testing.T, u, db string) *target.Target {
	tg := mustParse(t, u)
	tg.DB = db
	return tg
}

func open(t *testing.T, tg *target.Target) *sql.DB {
	t.Helper()
	db, err := tg.OpenNoDB(tg.Endpoints()[0], 8)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustExec(t testing.TB, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// shop creates database db with tables of the kinds the follower keys
// differently: a plain primary key, a composite one, one with a second
// unique key, and values that need care (unsigned, decimal, text, times).
func shop(t *testing.T, db *sql.DB, name string, rows int) {
	t.Helper()
	q := "`" + name + "`"
	mustExec(t, db, "DROP DATABASE IF EXISTS "+q, "CREATE DATABASE "+q+" CHARACTER SET utf8mb4",
		"CREATE TABLE "+q+".items (id INT PRIMARY KEY, name VARCHAR(64) CHARACTER SET latin1, stock INT UNSIGNED NOT NULL, price DECIMAL(12,2), big BIGINT UNSIGNED, small TINYINT UNSIGNED, at TIMESTAMP(3) NULL, note TEXT, doc JSON, tag ENUM('a','b','c'), f FLOAT, bits BIT(5)) ENGINE=InnoDB",
		"CREATE TABLE "+q+".lines (order_id INT NOT NULL, line INT NOT NULL, qty INT, PRIMARY KEY (order_id, line))",
		"CREATE TABLE "+q+".users (id INT PRIMARY KEY, email VARCHAR(100) NOT NULL, UNIQUE KEY (email), visits INT)",
	)
	for i := 1; i <= rows; i++ {
		mustExec(t, db,
			fmt.Sprintf("INSERT INTO %s.items VALUES (%d, 'café %d', %d, %d.25, 18446744073709551000, 250, '2024-01-02 03:04:05.678', 'n%d', '{\"k\": %d}', 'b', 1.5, b'10101')", q, i, i, 4000000000+i, i, i, i),
			fmt.Sprintf("INSERT INTO %s.lines VALUES (%d, 1, %d), (%d, 2, %d)", q, i, i, i, i*2),
			fmt.Sprintf("INSERT INTO %s.users VALUES (%d, 'u%d@x', 0)", q, i, i))
	}
}

// churn writes random transactions to database name until ctx ends:
// inserts, updates (some of keys), deletes, in all three tables. It
// returns how many transactions committed.
func churn(ctx context.Context, db *sql.DB, name string, seed uint64) (int64, error) {
	rng := rand.New(rand.NewPCG(seed, 1))
	q := "`" + name + "`"
	var n atomic.Int64
	next := 100000 + int(seed%1000)*100000
	for ctx.Err() == nil {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			break
		}
		id := 1 + rng.IntN(50)
		stmts := []string{}
		switch rng.IntN(6) {
		case 0:
			next++
			stmts = append(stmts,
				fmt.Sprintf("INSERT INTO %s.items (id, name, stock, price, big, small, note) VALUES (%d, 'new', 5, 1.10, 1, 2, REPEAT('x', %d))", q, next, rng.IntN(3000)),
				fmt.Sprintf("INSERT INTO %s.lines VALUES (%d, 1, 1)", q, next))
		case 1:
			stmts = append(stmts, fmt.Sprintf("UPDATE %s.items SET stock = stock - 1, price = price + 0.01, at = NOW(3) WHERE id = %d", q, id))
		case 2:
			next++
			stmts = append(stmts, fmt.Sprintf("UPDATE %s.lines SET line = %d WHERE order_id = %d ORDER BY line DESC LIMIT 1", q, next, id))
		case 3:
			stmts = append(stmts, fmt.Sprintf("DELETE FROM %s.lines WHERE order_id = %d AND line = 1", q, id),
				fmt.Sprintf("INSERT IGNORE INTO %s.lines VALUES (%d, 1, %d)", q, id, rng.IntN(9)))
		case 4:
			// Swap two users' e-mails through a third value: the unique
			// key sees every step.
			a, b := 1+rng.IntN(20), 21+rng.IntN(20)
			stmts = append(stmts,
				fmt.Sprintf("UPDATE %s.users SET email = CONCAT('tmp', id) WHERE id = %d", q, a),
				fmt.Sprintf("UPDATE %s.users SET email = CONCAT('u', %d, '@x') WHERE id = %d", q, a, b),
				fmt.Sprintf("UPDATE %s.users SET email = CONCAT('u', %d, '@x'), visits = visits + 1 WHERE id = %d", q, b, a))
		case 5:
			stmts = append(stmts, fmt.Sprintf("DELETE FROM %s.items WHERE id > 100000 ORDER BY id LIMIT 1", q))
		}
		ok := true
		for _, s := range stmts {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				ok = false
				break
			}
		}
		if !ok {
			tx.Rollback()
			continue
		}
		if tx.Commit() == nil {
			n.Add(1)
		}
	}
	return n.Load(), nil
}

// checksums are CHECKSUM TABLE of each table of db.
func checksums(t *testing.T, db *sql.DB, name string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, tbl := range []string{"items", "lines", "users"} {
		var n string
		var sum sql.NullString
		if err := db.QueryRow("CHECKSUM TABLE `"+name+"`."+tbl).Scan(&n, &sum); err != nil {
			t.Fatal(err)
		}
		out[tbl] = sum.String
	}
	var rows int
	db.QueryRow("SELECT COUNT(*) FROM `" + name + "`.items").Scan(&rows)
	out["items rows"] = fmt.Sprint(rows)
	return out
}

// copyDB copies database from on src into to on dst and returns the
// position the copy read at.
func copyDB(t *testing.T, ctx context.Context, src, dst *target.Target) Position {
	t.Helper()
	res, err := dbcopy.Run(ctx, src, dst, dbcopy.Options{AllowWrite: true, Replace: true, NoVerify: true, NoAnalyze: true, Threads: 2})
	if err != nil {
		t.Fatalf("copy: %v", err)
	}
	if res.BinlogFile == "" {
		t.Fatalf("copy recorded no binary log position: %+v", res)
	}
	return Position{File: res.BinlogFile, Pos: uint32(res.BinlogPos), GTID: res.GTID}
}

func sameSums(t *testing.T, a, b map[string]string) {
	t.Helper()
	var diffs []string
	for k, v := range a {
		if b[k] != v {
			diffs = append(diffs, fmt.Sprintf("%s: source %s, target %s", k, v, b[k]))
		}
	}
	if len(diffs) > 0 {
		t.Fatalf("the target differs from the source:\n%s", strings.Join(diffs, "\n"))
	}
}
