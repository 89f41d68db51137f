// Command gmsserver serves go-mysql-server's in-memory database on a free
// loopback port, for tests: it prints the target URL on its first line of
// output and serves until its standard input closes, so it never outlives
// the test that started it.
package main

import (
	"fmt"
	"io"
	"net"
	"os"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/memory"
	"github.com/dolthub/go-mysql-server/server"
	"github.com/dolthub/go-mysql-server/sql"
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
	srv, err := server.NewServer(cfg, engine, sql.NewContext, memory.NewSessionBuilder(pro), nil)
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
