// Command gmsserver serves go-mysql-server's in-memory database on a free
// loopback port, for tests: it prints the target URL on its first line of
// output and serves until its standard input closes, so it never outlives
// the test that started it.
//
// The in-memory engine keeps no concurrency control of its own: a statement
// works on the tables as they were when it began and puts them back whole
// when it commits, so two statements that overlap lose one's writes (a
// prepare that loads a table on four connections kept three chunks of four).
// gmsserver therefore runs one statement at a time. Statements in explicit
// transactions can still overwrite each other at COMMIT; tests that check
// data write it in autocommit.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/memory"
	"github.com/dolthub/go-mysql-server/server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/sirupsen/logrus"
)

func main() {
	if err := serve(); err != nil {
		fmt.Fprintln(os.Stderr, "gmsserver:", err)
		os.Exit(1)
	}
}

func serve() error {
	logrus.SetLevel(logrus.WarnLevel)
	db := memory.NewDatabase("sbtest")
	db.BaseDatabase.EnablePrimaryKeyIndexes()
	pro := memory.NewDBProvider(db)
	engine := sqle.NewDefault(pro)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	cfg := server.Config{Protocol: "tcp", Listener: ln, Version: "8.0.31-go-mysql-server"}
	srv, err := server.NewServerWithHandler(cfg, engine, sql.NewContext, memory.NewSessionBuilder(pro), nil,
		func(h mysql.Handler) (mysql.Handler, error) { return &serial{Handler: h}, nil })
	if err != nil {
		return fmt.Errorf("new server: %w", err)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Start() }()
	fmt.Printf("mysql://shakedown@127.0.0.1:%d/sbtest\n", ln.Addr().(*net.TCPAddr).Port)
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(eof)
	}()
	select {
	case <-eof:
		srv.Close()
		return nil
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	}
}

// serial runs the statements of all connections one at a time. KILL runs at
// once, so that it can stop a statement that holds the turn.
type serial struct {
	mysql.Handler
	mu sync.Mutex
}

func (s *serial) turn(query string) func() {
	if f := strings.Fields(query); len(f) > 0 && strings.EqualFold(f[0], "kill") {
		return func() {}
	}
	s.mu.Lock()
	return s.mu.Unlock
}

func (s *serial) ComQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) error {
	defer s.turn(query)()
	return s.Handler.ComQuery(ctx, c, query, callback)
}

func (s *serial) ComMultiQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) (string, error) {
	defer s.turn(query)()
	return s.Handler.ComMultiQuery(ctx, c, query, callback)
}

func (s *serial) ComStmtExecute(ctx context.Context, c *mysql.Conn, prepare *mysql.PrepareData, callback func(*sqltypes.Result) error) error {
	defer s.turn(prepare.PrepareStmt)()
	return s.Handler.ComStmtExecute(ctx, c, prepare, callback)
}
