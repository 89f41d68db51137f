package gmstest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := Remove(); err != nil {
		fmt.Fprintln(os.Stderr, "gmstest:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// open starts a server and connects to it.
func open(t *testing.T) *sql.DB {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and starts a server")
	}
	s := Start(t)
	addr := strings.TrimPrefix(s.URL, "mysql://"+User+"@")
	addr = addr[:strings.Index(addr, "/")]
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = User, "tcp", addr, Database
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestStart(t *testing.T) {
	db := open(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO t VALUES (1, 'a'), (2, 'b')"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM t").Scan(&n); err != nil || n != 2 {
		t.Fatalf("count: got %d, %v; want 2", n, err)
	}
}

// TestConcurrentWrites: rows that several connections insert into one table
// at once are all kept. The engine alone loses the writes of statements that
// overlap; a prepare that loaded a table on four connections once kept three
// chunks of four.
func TestConcurrentWrites(t *testing.T) {
	db := open(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := db.ExecContext(ctx, "CREATE TABLE t (id INT PRIMARY KEY, v INT)"); err != nil {
		t.Fatal(err)
	}
	const conns, rows = 8, 100
	db.SetMaxOpenConns(conns)
	errs := make(chan error, conns)
	for c := 0; c < conns; c++ {
		go func(c int) {
			for i := 0; i < rows; i++ {
				if _, err := db.ExecContext(ctx, "INSERT INTO t VALUES (?, ?)", c*rows+i, c); err != nil {
					errs <- err
					return
				}
				// Reads commit the tables they saw, too.
				var n int
				if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM t").Scan(&n); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}(c)
	}
	for c := 0; c < conns; c++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM t").Scan(&n); err != nil || n != conns*rows {
		t.Fatalf("count: got %d, %v; want %d", n, err, conns*rows)
	}
}
