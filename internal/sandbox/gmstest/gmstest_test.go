package gmstest

import (
	"context"
	"database/sql"
	"strconv"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

func TestStart(t *testing.T) {
	s := Start(t)
	cfg := mysql.NewConfig()
	cfg.User = User
	cfg.Net = "tcp"
	cfg.Addr = "127.0.0.1:" + itoa(s.Port)
	cfg.DBName = Database
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var v string
	if err := db.QueryRowContext(ctx, "SELECT @@version").Scan(&v); err != nil {
		t.Fatalf("select version: %v", err)
	}
	if v == "" {
		t.Fatalf("got empty version")
	}
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

func itoa(n int) string { return strconv.Itoa(n) }
