package follow

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

func TestClassifyStatements(t *testing.T) {
	followed := map[string]string{"shop": "shop"}
	for _, c := range []struct {
		q, schema string
		kind      string
		followed  bool
	}{
		{"UPDATE items SET stock = 1", "shop", kindDML, true},
		{"/* app */ INSERT INTO shop.items VALUES (1)", "", kindDML, true},
		{"DELETE FROM other.t", "other", kindDML, false},
		{"LOAD DATA INFILE 'x' INTO TABLE items", "shop", kindDML, true},
		{"ALTER TABLE items ADD COLUMN c INT", "shop", kindTable, true},
		{"ALTER TABLE other.t ADD COLUMN c INT", "shop", kindTable, false},
		{"CREATE DATABASE shop", "", kindDatabase, true},
		{"GRANT SELECT ON shop.* TO u", "shop", kindOther, false},
		{"CREATE USER u", "shop", kindOther, false},
		{"CREATE TRIGGER tr BEFORE INSERT ON items FOR EACH ROW SET NEW.stock = 1", "shop", kindOther, true},
	} {
		d := classify(c.q, c.schema, followed)
		if d.kind != c.kind || d.followed != c.followed {
			t.Errorf("classify(%q in %q): kind %s followed %v, want %s %v", c.q, c.schema, d.kind, d.followed, c.kind, c.followed)
		}
	}
}

// A change a session logged as a statement is not skipped: the follower
// stops before it, and goes on after it with --from-next once it has been
// applied by hand.
func TestStatementChangeStops(t *testing.T) {
	inst := sandboxtest.Start(t, binlogSettings...)
	ctx := testCtx(t, 2*time.Minute)
	src, dst := withDB(t, inst.URL(), "shop"), withDB(t, inst.URL(), "shop_copy")
	admin := open(t, src)
	shop(t, admin, "shop", 5)
	from := copyDB(t, ctx, src, dst)
	conn, err := admin.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, s := range []string{"SET SESSION binlog_format = 'STATEMENT'", "UPDATE shop.items SET stock = 7 WHERE id = 2",
		"SET SESSION binlog_format = 'ROW'", "UPDATE shop.items SET stock = 8 WHERE id = 3"} {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	_, err = Run(ctx, src, dst, Options{AllowWrite: true, From: from, UntilCaughtUp: true})
	if !errors.Is(err, ErrStoppedAtDDL) || !strings.Contains(err.Error(), "logged as a statement") || !strings.Contains(err.Error(), "--from-next") {
		t.Fatalf("follow over a statement-based change: %v; want it stopped before it, naming --from-next", err)
	}
	mustExec(t, admin, "UPDATE shop_copy.items SET stock = 7 WHERE id = 2") // by hand
	if _, err := Run(ctx, src, dst, Options{AllowWrite: true, UntilCaughtUp: true, SkipDDL: true}); err != nil {
		t.Fatalf("follow --from-next: %v", err)
	}
	sameSums(t, checksums(t, admin, "shop"), checksums(t, admin, "shop_copy"))
}

// A transaction larger than the follower holds in memory is applied in
// parts as it is read, and ends equal.
func TestBigTransaction(t *testing.T) {
	inst := sandboxtest.Start(t, binlogSettings...)
	ctx := testCtx(t, 2*time.Minute)
	src, dst := withDB(t, inst.URL(), "shop"), withDB(t, inst.URL(), "shop_copy")
	admin := open(t, src)
	shop(t, admin, "shop", 5)
	from := copyDB(t, ctx, src, dst)
	n := bigTxnRows*2 + 123
	mustExec(t, admin, fmt.Sprintf("INSERT INTO shop.lines SELECT seq, 7, seq FROM shop.seq_1_to_%d", n))
	sum, err := Run(ctx, src, dst, Options{AllowWrite: true, From: from, UntilCaughtUp: true})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rows != int64(n) || sum.Txns != 1 {
		t.Errorf("applied %d rows in %d transactions, want %d in 1", sum.Rows, sum.Txns, n)
	}
	sameSums(t, checksums(t, admin, "shop"), checksums(t, admin, "shop_copy"))
}
