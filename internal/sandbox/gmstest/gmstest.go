// Package gmstest gives tests a second, independent implementation of the
// MySQL protocol and SQL: go-mysql-server, run in process on loopback with an
// in-memory database. It stands in for servers that are not MariaDB (TiDB,
// cloud services): no InnoDB status, fewer variables, no LOAD DATA LOCAL
// unless enabled, other error texts.
//
// Start returns a URL like a sandbox's; the server stops when the test ends.
package gmstest

import (
	"fmt"
	"net"
	"testing"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/memory"
	"github.com/dolthub/go-mysql-server/server"
	"github.com/dolthub/go-mysql-server/sql"
)

// Database is the database every server starts with, as sandboxes do.
const Database = "sbtest"

// User is the account the URL names. The server runs without the mysql
// database, so it takes any user without a password.
const User = "shakedown"

// Server is one running go-mysql-server.
type Server struct {
	// URL is the target URL, mysql://shakedown@127.0.0.1:PORT/sbtest.
	URL  string
	Port int
	srv  *server.Server
}

// Start starts a server on a free loopback port and stops it at the end of
// t. It fails t when the server cannot start.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := start()
	if err != nil {
		t.Fatalf("gmstest: %v", err)
	}
	t.Cleanup(func() { s.srv.Close() })
	return s
}

func start() (*Server, error) {
	db := memory.NewDatabase(Database)
	db.BaseDatabase.EnablePrimaryKeyIndexes()
	pro := memory.NewDBProvider(db)
	engine := sqle.NewDefault(pro)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	cfg := server.Config{Protocol: "tcp", Listener: ln, Version: "8.0.31-go-mysql-server"}
	srv, err := server.NewServer(cfg, engine, sql.NewContext, memory.NewSessionBuilder(pro), nil)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("new server: %w", err)
	}
	go srv.Start() //nolint:errcheck // ends with Close
	port := ln.Addr().(*net.TCPAddr).Port
	return &Server{
		URL:  fmt.Sprintf("mysql://%s@127.0.0.1:%d/%s", User, port, Database),
		Port: port,
		srv:  srv,
	}, nil
}
