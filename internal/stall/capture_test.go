package stall

import (
	"context"
	"database/sql"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// TestCaptureLabelsALockWait: a session holds a row lock in an open
// transaction and another waits for it. The capture labels the holder as
// blocking and the waiter as waiting for a row lock held by the holder,
// and only the holder is a blocker that waits for nothing.
func TestCaptureLabelsALockWait(t *testing.T) {
	ctx := context.Background()
	tg, err := target.Parse(sandboxtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	db, err := tg.OpenNoDB(tg.Endpoints()[0], 3)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn := func() *sql.Conn {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	exec := func(c *sql.Conn, q string) {
		t.Helper()
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	id := func(c *sql.Conn) string {
		var n int64
		if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return strconv.FormatInt(n, 10)
	}
	holder, waiter, reader := conn(), conn(), conn()
	defer holder.Close()
	defer waiter.Close()
	defer reader.Close()
	exec(holder, "CREATE DATABASE IF NOT EXISTS stall_lockwait")
	exec(holder, "CREATE TABLE IF NOT EXISTS stall_lockwait.t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB")
	exec(holder, "REPLACE INTO stall_lockwait.t VALUES (1, 0)")
	t.Cleanup(func() { db.ExecContext(ctx, "DROP DATABASE IF EXISTS stall_lockwait") })
	holderID, waiterID := id(holder), id(waiter)

	exec(holder, "BEGIN")
	exec(holder, "SELECT v FROM stall_lockwait.t WHERE id = 1 FOR UPDATE")
	held := true
	release := func() {
		if held {
			held = false
			exec(holder, "ROLLBACK")
		}
	}
	defer release()
	exec(waiter, "SET SESSION innodb_lock_wait_timeout = 60")
	done := make(chan error, 1)
	go func() { // ends when the holder rolls back, or at the lock wait timeout
		_, err := waiter.ExecContext(ctx, "UPDATE stall_lockwait.t SET v = v + 1 WHERE id = 1")
		done <- err
	}()

	// Wait for the waiter's transaction to show LOCK WAIT. InnoDB fills
	// INNODB_TRX again only when it was not read for 100 ms: a quicker
	// poll would read the same old rows for ever.
	deadline := time.Now().Add(20 * time.Second)
	for {
		var n int
		if err := reader.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT' AND trx_mysql_thread_id = "+waiterID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s never showed LOCK WAIT in INNODB_TRX", waiterID)
		}
		select {
		case err := <-done:
			t.Fatalf("the waiting UPDATE ended before it waited: %v", err)
		case <-time.After(150 * time.Millisecond):
		}
	}

	secs := Capture(ctx, reader, Bounds{})
	labels := map[string]string{}
	for _, sec := range secs {
		if sec.Name != "processlist" {
			continue
		}
		if sec.Error != "" {
			t.Fatalf("processlist: %s", sec.Error)
		}
		ii, li := column(&sec, "Id"), column(&sec, waitsCol)
		if ii < 0 || li < 0 {
			t.Fatalf("processlist columns: got %q, want Id and %s", sec.Columns, waitsCol)
		}
		for _, r := range sec.Rows {
			labels[r[ii]] = r[li]
		}
	}
	if got := labels[holderID]; got != "blocking 1 sessions" {
		t.Errorf("holder %s: got %q, want %q", holderID, got, "blocking 1 sessions")
	}
	if want := "waiting for a row lock held by " + holderID; !strings.HasPrefix(labels[waiterID], want) || strings.Contains(labels[waiterID], "blocking") {
		t.Errorf("waiter %s: got %q, want it to start %q and block no one", waiterID, labels[waiterID], want)
	}
	blockers := Blockers(secs)
	if len(blockers) != 1 || !strings.HasPrefix(blockers[0], holderID+" (RUNNING") {
		t.Errorf("blockers waiting for nothing: got %q, want the holder %s alone", blockers, holderID)
	}

	release()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the waiting UPDATE, once the lock was released: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the waiting UPDATE did not end after the holder rolled back")
	}
}
