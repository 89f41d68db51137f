// Command wirefloor is a benchmark aid, not part of shakedown: the least a
// Go client can do for oltp_point_select. Each of --threads goroutines
// holds one connection over shakedown's wire package in blocking mode and
// runs the prepared point select on random ids in a loop until --seconds
// pass: no runner, no histogram, no workload code. scripts/bench.sh runs it
// beside sysbench and shakedown (case "floor") to show how much of
// shakedown's CPU per query is its own and how much is the Go runtime's
// and the kernel's.
//
//	go run ./scripts/wirefloor --addr 127.0.0.1:3306 --user shakedown
//
// The password, if any, comes from MYSQL_PWD. It prints one line in
// sysbench's form: "    queries: N (Q per sec.)".
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/wire"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:3306", "server host:port")
	user := flag.String("user", "shakedown", "user (password from MYSQL_PWD)")
	db := flag.String("db", "sbtest", "database holding sbtest1")
	threads := flag.Int("threads", 16, "connections, one goroutine each")
	seconds := flag.Int("seconds", 10, "how long to run")
	rows := flag.Int("table-size", 100000, "ids are drawn from 1..table-size")
	flag.Parse()

	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = *user, os.Getenv("MYSQL_PWD"), "tcp", *addr, *db
	var total atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, *threads)
	deadline := time.Now().Add(time.Duration(*seconds) * time.Second)
	for range *threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := loop(cfg, deadline, *rows)
			total.Add(n)
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		fmt.Fprintln(os.Stderr, "wirefloor:", err)
		os.Exit(1)
	}
	fmt.Printf("    queries: %d (%.2f per sec.)\n", total.Load(), float64(total.Load())/float64(*seconds))
}

func loop(cfg *mysql.Config, deadline time.Time, rows int) (int64, error) {
	c, err := wire.Dial(context.Background(), cfg, wire.Options{Blocking: true})
	if err != nil {
		return 0, err
	}
	defer c.Close()
	st, err := c.Prepare("SELECT c FROM sbtest1 WHERE id=?")
	if err != nil {
		return 0, err
	}
	var n int64
	for time.Now().Before(deadline) {
		if _, err := st.Exec(int64(rand.IntN(rows) + 1)); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
