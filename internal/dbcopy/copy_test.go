package dbcopy

import (
	"errors"
	"strings"
	"testing"
)

// TestCopyWholeSchema copies a schema with a view, a routine, a trigger,
// a foreign key and a table without a primary key; verify finds nothing.
func TestCopyWholeSchema(t *testing.T) {
	p := newPair(t)
	shop(t, p.srcDB, 60, 200)
	mustExec(t, p.srcDB, "CREATE EVENT purge_audit ON SCHEDULE EVERY 1 DAY DO DELETE FROM audit WHERE at < 0")
	ctx := testCtx(t)
	const objects = "SELECT (SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()) * 1000000 + " +
		"(SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE()) * 1000 + " +
		"(SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE())"
	srcObjects := count(t, p.srcDB, objects)
	// Every table's secondary indexes wait for its rows.
	res, err := Run(ctx, p.src, p.dst, Options{AllowWrite: true, Threads: 2, ChunkRows: 40, deferRows: -1})
	if err != nil {
		t.Fatalf("copy: %v", err)
	}
	if res.Verify == nil || !res.Verify.Equal || res.Verify.Tables != 3 {
		t.Fatalf("verify: got %+v, want equal over 3 tables", res.Verify)
	}
	if res.Rows != 60+200+203 {
		t.Errorf("rows copied: got %d, want %d", res.Rows, 60+200+203)
	}
	if res.Events != 1 || !strings.Contains(strings.Join(res.Notes, "\n"), "1 events created disabled") {
		t.Errorf("events %d, notes %q: want 1 and a note that it was created disabled", res.Events, res.Notes)
	}
	if res.Consistency == "" || res.Loader != "load data local" {
		t.Errorf("consistency %q, loader %q: want a lock and load data local", res.Consistency, res.Loader)
	}
	if got := count(t, p.srcDB, objects); got != srcObjects {
		t.Errorf("source objects (tables x 1e6 + routines x 1e3 + triggers) after the copy: got %d, want %d: the source is only read", got, srcObjects)
	}
	checks := []struct {
		name string
		q    string
		want int64
	}{
		{"view", "SELECT COUNT(*) FROM big_orders", count(t, p.srcDB, "SELECT COUNT(*) FROM big_orders")},
		{"function", "SELECT twice(21)", 42},
		{"foreign key", "SELECT COUNT(*) FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = DATABASE()", 1},
		{"secondary indexes", "SELECT COUNT(DISTINCT INDEX_NAME) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND INDEX_NAME IN ('name_ix', 'cust_ix')", 2},
		{"trigger", "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()", 1},
		{"event, disabled", "SELECT COUNT(*) FROM information_schema.EVENTS WHERE EVENT_SCHEMA = DATABASE() AND STATUS = 'DISABLED'", 1},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if got := count(t, p.dstDB, c.q); got != c.want {
				t.Errorf("%s on the target: got %d, want %d", c.q, got, c.want)
			}
		})
	}
	// The trigger was not fired by the copy, and fires on the target.
	before := count(t, p.dstDB, "SELECT COUNT(*) FROM audit")
	mustExec(t, p.dstDB, "INSERT INTO orders (id, customer_id) VALUES (100000, 1)")
	if got := count(t, p.dstDB, "SELECT COUNT(*) FROM audit"); got != before+1 {
		t.Errorf("audit rows after an insert on the target: got %d, want %d", got, before+1)
	}

	safety := []struct {
		name string
		opts Options
		want error
	}{
		{"without --allow-write", Options{}, ErrWriteNotAllowed},
		{"target holds tables", Options{AllowWrite: true}, ErrTargetNotEmpty},
	}
	for _, s := range safety {
		t.Run(s.name, func(t *testing.T) {
			if _, err := Run(ctx, p.src, p.dst, s.opts); !errors.Is(err, s.want) {
				t.Errorf("got %v, want %v", err, s.want)
			}
		})
	}
	t.Run("replace", func(t *testing.T) {
		res, err := Run(ctx, p.src, p.dst, Options{AllowWrite: true, Replace: true, Consistency: ConsistencyNone, NoAnalyze: true})
		if err != nil || !res.Verify.Equal {
			t.Fatalf("copy with --replace: got %v, verify %+v; want no error, equal", err, res.Verify)
		}
	})
}
