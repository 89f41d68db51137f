package dbcopy

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

// shopTables are shop's tables as a DBA might make them on a new server
// beforehand: without the customers' name index, the trigger, the view
// and the function.
var shopTables = []string{
	"CREATE TABLE customers (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(50) NOT NULL, note TEXT NULL)",
	`CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT NOT NULL, amount DECIMAL(10,2), created TIMESTAMP NULL,
		flags BIT(4), raw VARBINARY(16), KEY cust_ix (customer_id),
		CONSTRAINT fk_customer FOREIGN KEY (customer_id) REFERENCES customers (id))`,
	"CREATE TABLE audit (msg VARCHAR(100), at INT)",
}

// TestCopyExistingSchema loads rows into tables made on the target
// beforehand: their rows equal the source's, the index the target lacks
// stays missing, the trigger (not fired by the copy), the view and the
// function come from the source.
func TestCopyExistingSchema(t *testing.T) {
	p := newPair(t)
	shop(t, p.srcDB, 30, 120)
	mustExec(t, p.dstDB, shopTables...)
	ctx := testCtx(t)
	res, err := Run(ctx, p.src, p.dst, Options{AllowWrite: true, Schema: SchemaExisting, Threads: 2, ChunkRows: 40, NoAnalyze: true})
	if err != nil {
		t.Fatalf("copy: %v", err)
	}
	if res.Schema != SchemaExisting || res.Rows != 30+120+123 {
		t.Errorf("schema %q, rows %d: want existing, %d", res.Schema, res.Rows, 30+120+123)
	}
	if res.Verify == nil || res.Verify.DifferingRows != 0 || res.Verify.Tables != 3 {
		t.Fatalf("verify: got %+v, want no differing rows over 3 tables", res.Verify)
	}
	checks := []struct {
		name string
		q    string
		want int64
	}{
		{"rows of audit (the trigger did not fire)", "SELECT COUNT(*) FROM audit", 123},
		{"name index still missing", "SELECT COUNT(*) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND INDEX_NAME = 'name_ix'", 0},
		{"trigger", "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()", 1},
		{"view", "SELECT COUNT(*) FROM big_orders", count(t, p.srcDB, "SELECT COUNT(*) FROM big_orders")},
		{"function", "SELECT twice(21)", 42},
	}
	for _, c := range checks {
		if got := count(t, p.dstDB, c.q); got != c.want {
			t.Errorf("%s: %s on the target: got %d, want %d", c.name, c.q, got, c.want)
		}
	}

	refusals := []struct {
		name  string
		setup []string
		opts  Options
		want  error
	}{
		{"tables hold rows", nil, Options{}, ErrTargetNotEmpty},
		{"a target trigger would fire", []string{"DELETE FROM orders", "DELETE FROM customers", "DELETE FROM audit"}, Options{}, ErrBadOptions},
		{"a table is missing", []string{"DROP TRIGGER orders_ai", "DROP TABLE audit"}, Options{}, ErrBadOptions},
		{"unknown mode", nil, Options{Schema: "exist"}, ErrBadOptions},
	}
	for _, r := range refusals {
		t.Run(r.name, func(t *testing.T) {
			mustExec(t, p.dstDB, r.setup...)
			o := r.opts
			o.AllowWrite, o.NoAnalyze, o.NoVerify = true, true, true
			if o.Schema == "" {
				o.Schema = SchemaExisting
			}
			if _, err := Run(ctx, p.src, p.dst, o); !errors.Is(err, r.want) {
				t.Errorf("got %v, want %v", err, r.want)
			}
		})
	}
	t.Run("replace empties the tables", func(t *testing.T) {
		mustExec(t, p.dstDB, shopTables[2], "INSERT INTO customers (id, name) VALUES (999, 'stale')")
		res, err := Run(ctx, p.src, p.dst, Options{AllowWrite: true, Schema: SchemaExisting, Replace: true, NoAnalyze: true})
		if err != nil {
			t.Fatalf("copy with --replace: %v", err)
		}
		if res.Verify.DifferingRows != 0 {
			t.Errorf("differing rows after --replace: got %d, want 0", res.Verify.DifferingRows)
		}
		if got := count(t, p.dstDB, "SELECT COUNT(*) FROM customers WHERE id = 999"); got != 0 {
			t.Errorf("stale row after --replace: got %d, want 0", got)
		}
	})
}

// TestCopyRangeRolledBack: a range the target rolls back for a lock wait
// (a row of it locked by another session, the copy's lock wait timeout
// one second) is emptied and copied again once the lock is gone, and the
// log says so; the copy ends with every row, none twice.
func TestCopyRangeRolledBack(t *testing.T) {
	p := newPair(t)
	shop(t, p.srcDB, 30, 120)
	mustExec(t, p.dstDB, shopTables...)
	targetParams["innodb_lock_wait_timeout"] = "1"
	t.Cleanup(func() { delete(targetParams, "innodb_lock_wait_timeout") })
	ctx := testCtx(t)
	holder, err := p.dstDB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	for _, q := range []string{"SET foreign_key_checks = 0", "BEGIN", "INSERT INTO orders (id, customer_id) VALUES (50, 1)"} {
		if _, err := holder.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// The lock goes once the copy has waited for it past its timeout and
	// says it will copy the range again.
	log := &signalLog{match: "copying the range again", seen: make(chan struct{})}
	released := make(chan error, 1)
	go func() {
		select {
		case <-log.seen:
		case <-ctx.Done():
		}
		_, err := holder.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		released <- err
	}()
	res, err := Run(ctx, p.src, p.dst, Options{AllowWrite: true, Schema: SchemaExisting, Threads: 2, ChunkRows: 40, NoAnalyze: true, Log: log})
	if rerr := <-released; rerr != nil {
		t.Fatalf("the other session: %v", rerr)
	}
	t.Logf("log:\n%s", log.String())
	if err != nil {
		t.Fatalf("copy: %v", err)
	}
	if !strings.Contains(log.String(), "Lock wait timeout exceeded; try restarting transaction: copying the range again (try 2 of 5)") {
		t.Errorf("the log does not say the range was copied again after the lock wait")
	}
	if res.Rows != 30+120+123 || res.Verify == nil || res.Verify.DifferingRows != 0 {
		t.Errorf("got %d rows, verify %+v; want %d rows and no differing row", res.Rows, res.Verify, 30+120+123)
	}
}

// signalLog is a copy's log that closes seen at the first line holding
// match.
type signalLog struct {
	mu    sync.Mutex
	b     strings.Builder
	match string
	seen  chan struct{}
	once  sync.Once
}

func (l *signalLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if strings.Contains(string(p), l.match) {
		l.once.Do(func() { close(l.seen) })
	}
	return l.b.Write(p)
}

func (l *signalLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
