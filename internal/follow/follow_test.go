package follow

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

// A copy followed while the source takes writes ends equal to the source.
func TestFollowCatchesUp(t *testing.T) {
	inst := sandboxtest.Start(t, binlogSettings...)
	ctx := testCtx(t, 3*time.Minute)
	src, dst := withDB(t, inst.URL(), "shop"), withDB(t, inst.URL(), "shop_copy")
	admin := open(t, src)
	shop(t, admin, "shop", 60)
	from := copyDB(t, ctx, src, dst)

	lctx, stop := context.WithTimeout(ctx, 4*time.Second)
	defer stop()
	var wg sync.WaitGroup
	var txns int64
	wg.Add(1)
	go func() { defer wg.Done(); txns, _ = churn(lctx, admin, "shop", 1) }()
	sum, err := Run(ctx, src, dst, Options{AllowWrite: true, From: from, Duration: 2 * time.Second, Workers: 3})
	if err != nil {
		t.Fatalf("follow: %v", err)
	}
	wg.Wait()
	if sum.Rows == 0 {
		t.Fatalf("the follower applied no rows while %d transactions committed: %+v", txns, sum)
	}
	// Resume from the saved position until caught up.
	sum, err = Run(ctx, src, dst, Options{AllowWrite: true, UntilCaughtUp: true})
	if err != nil {
		t.Fatalf("follow again: %v", err)
	}
	if sum.State != StateCaughtUp {
		t.Errorf("state %q, want %q", sum.State, StateCaughtUp)
	}
	t.Logf("%d transactions; %s", txns, sum.Text())
	sameSums(t, checksums(t, admin, "shop"), checksums(t, admin, "shop_copy"))
}
