package follow

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

// A MariaDB source that writes under another GTID domain than the saved
// position knows is another history: the follower refuses it.
func TestFaultGTIDDomainChanged(t *testing.T) {
	inst := sandboxtest.Start(t, binlogSettings...)
	ctx := testCtx(t, 2*time.Minute)
	src, dst := withDB(t, inst.URL(), "shop"), withDB(t, inst.URL(), "shop_copy")
	admin := open(t, src)
	shop(t, admin, "shop", 5)
	from := copyDB(t, ctx, src, dst)
	if !strings.Contains(from.GTID, "-") {
		t.Fatalf("the copy recorded no GTID set (%q): the test needs one", from.GTID)
	}
	if _, err := Run(ctx, src, dst, Options{AllowWrite: true, From: from, UntilCaughtUp: true}); err != nil {
		t.Fatal(err)
	}
	mustExec(t, admin, "SET GLOBAL gtid_domain_id = 7")
	t.Cleanup(func() { admin.Exec("SET GLOBAL gtid_domain_id = 0") })
	mustExec(t, admin, "UPDATE shop.items SET stock = stock + 1 WHERE id = 1")
	_, err := Run(ctx, src, dst, Options{AllowWrite: true, UntilCaughtUp: true})
	if !errors.Is(err, ErrPositionGone) || !strings.Contains(err.Error(), "GTID domain 7") || !strings.Contains(err.Error(), "copy again") {
		t.Fatalf("follow after the domain changed: %v; want ErrPositionGone naming domain 7 and saying to copy again", err)
	}
}
