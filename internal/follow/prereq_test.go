package follow

import (
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

// Each test here gives Run what it cannot follow and wants it refused
// before anything is written to the target: the error says what is wrong
// and what to do, and the target has no shakedown_follow database.

// TestPrereqBinlogFormat: a source logging statements, not rows.
func TestPrereqBinlogFormat(t *testing.T) {
	inst := sandboxtest.Start(t, binlogSettings...)
	ctx := testCtx(t, time.Minute)
	src, dst := withDB(t, inst.URL(), "shop"), withDB(t, inst.URL(), "shop_copy")
	admin := open(t, src)
	shop(t, admin, "shop", 3)
	from := sourceAt(t, admin)
	mustExec(t, admin, "SET GLOBAL binlog_format = 'STATEMENT'")
	t.Cleanup(func() { admin.Exec("SET GLOBAL binlog_format = 'ROW'") })

	_, err := Run(ctx, src, dst, Options{AllowWrite: true, From: from, UntilCaughtUp: true})
	wantRefused(t, err, ErrPrerequisites, "binlog_format", "STATEMENT", "ROW", "fix:", "nothing was written")
	noFollowSchema(t, admin)
}

// TestPrereqKeyless: a followed table without a key to find its rows by.
func TestPrereqKeyless(t *testing.T) {
	inst := sandboxtest.Start(t, binlogSettings...)
	ctx := testCtx(t, time.Minute)
	src, dst := withDB(t, inst.URL(), "shop"), withDB(t, inst.URL(), "shop_copy")
	admin := open(t, src)
	shop(t, admin, "shop", 3)
	mustExec(t, admin, "CREATE TABLE shop.audit (at DATETIME, what TEXT)", "INSERT INTO shop.audit VALUES (NOW(), 'x')")
	from := sourceAt(t, admin)

	_, err := Run(ctx, src, dst, Options{AllowWrite: true, From: from, UntilCaughtUp: true})
	wantRefused(t, err, ErrPrerequisites, "shop.audit", "primary key", "fix:")
	for _, other := range []string{"shop.items", "shop.lines", "shop.users"} {
		if strings.Contains(err.Error(), other) {
			t.Errorf("the error names %s, which has a key:\n%v", other, err)
		}
	}
	noFollowSchema(t, admin)
}

// TestPrereqTargetTriggers: a trigger on a followed table of the target
// would fire again for every applied row.
func TestPrereqTargetTriggers(t *testing.T) {
	inst := sandboxtest.Start(t, binlogSettings...)
	ctx := testCtx(t, time.Minute)
	src, dst := withDB(t, inst.URL(), "shop"), withDB(t, inst.URL(), "shop_copy")
	admin := open(t, src)
	shop(t, admin, "shop", 3)
	shop(t, admin, "shop_copy", 3)
	mustExec(t, admin, "CREATE TRIGGER shop_copy.count_visits BEFORE UPDATE ON shop_copy.users FOR EACH ROW SET NEW.visits = OLD.visits + 1")
	from := sourceAt(t, admin)

	_, err := Run(ctx, src, dst, Options{AllowWrite: true, From: from, UntilCaughtUp: true})
	wantRefused(t, err, ErrPrerequisites, "count_visits", "shop_copy.users", "DROP TRIGGER `shop_copy`.`count_visits`", "SHOW CREATE TRIGGER `shop_copy`.`count_visits` on the target", "create it again")
	noFollowSchema(t, admin)
}

// TestPrereqNoPosition: without --from, the position is the one a copy
// saved on the target; a target that has none is refused.
func TestPrereqNoPosition(t *testing.T) {
	inst := sandboxtest.Start(t, binlogSettings...)
	ctx := testCtx(t, time.Minute)
	src, dst := withDB(t, inst.URL(), "shop"), withDB(t, inst.URL(), "shop_copy")
	admin := open(t, src)
	shop(t, admin, "shop", 3)
	shop(t, admin, "shop_copy", 3)

	_, err := Run(ctx, src, dst, Options{AllowWrite: true, UntilCaughtUp: true})
	wantRefused(t, err, ErrNoPosition, "shop_copy", "copy --follow", "--from")
	noFollowSchema(t, admin)
}

// sourceAt is where the source's binary log ends now.
func sourceAt(t *testing.T, db *sql.DB) Position {
	t.Helper()
	p, err := SourcePosition(testCtx(t, 10*time.Second), db)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// wantRefused fails unless err is want and its message holds every one
// of says.
func wantRefused(t *testing.T, err, want error, says ...string) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("got error %v, want %v", err, want)
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("the error does not say %q:\n%v", s, err)
		}
	}
	t.Logf("refused as it should be:\n%v", err)
}

// noFollowSchema fails if the follower wrote its schema on the server.
func noFollowSchema(t *testing.T, db *sql.DB) {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", Schema).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("the target has database %s: the follower wrote before it refused", Schema)
	}
}
