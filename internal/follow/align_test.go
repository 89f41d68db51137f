package follow

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/verify"
)

// Verify beside a follower while the source takes writes: chunks that
// differ only because the follower is behind are compared again with both
// sides read at one position of the source's binary log, and match; a row
// lost on the target is still reported.
func TestVerifyWhileFollowing(t *testing.T) {
	insts := sandboxtest.StartAll(t, binlogSettings, nil)
	ctx := testCtx(t, 3*time.Minute)
	src, dst := withDB(t, insts[0].URL(), "shop"), withDB(t, insts[1].URL(), "shop")
	admin := open(t, src)
	shop(t, admin, "shop", 60)
	from := copyDB(t, ctx, src, dst)

	fctx, stopFollower := context.WithCancel(ctx)
	defer stopFollower()
	followed := make(chan error, 1)
	go func() {
		_, err := Run(fctx, src, dst, Options{AllowWrite: true, From: from, Workers: 2})
		followed <- err
	}()
	lctx, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); churn(lctx, admin, "shop", 4) }()
	defer func() { stopLoad(); wg.Wait() }()

	ss, ds, err := verify.Sides(ctx, src, dst, 6)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.DB.Close()
	defer ds.DB.Close()
	w := NewWatcher(ss.DB, ds.DB, []string{"shop"})
	deadline := time.Now().Add(time.Minute)
	for !w.Alive(ctx) {
		if time.Now().After(deadline) {
			t.Fatal("the follower did not start within a minute")
		}
		time.Sleep(20 * time.Millisecond)
	}
	opts := verify.Options{Threads: 2, Rechecks: 3, Settle: w.Settle, Align: w.Align}
	rep, err := verify.Run(ctx, ss, ds, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("under load: equal %v, %d chunks rechecked, %d aligned rechecks, %d still differ",
		rep.Equal, rep.ChunksRechecked, rep.AlignedRechecks, rep.ChunksStillDiffering)
	if !rep.Equal {
		t.Fatalf("verify beside a follower found %d differing rows in a copy that has none", rep.DifferingRows)
	}
	if rep.ChunksRechecked > 0 && rep.AlignedRechecks == 0 {
		t.Errorf("%d chunks were rechecked, none at one position: Align was not used", rep.ChunksRechecked)
	}

	// A row lost on the target, in a table the load does not delete from:
	// still a difference after every recheck.
	if _, err := open(t, dst).Exec("DELETE FROM shop.users WHERE id = 55"); err != nil {
		t.Fatal(err)
	}
	rep, err = verify.Run(ctx, ss, ds, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Equal || rep.DifferingRows < 1 || rep.ChunksStillDiffering < 1 {
		t.Errorf("a deleted target row: equal %v, %d differing rows, %d chunks still differing; want it reported", rep.Equal, rep.DifferingRows, rep.ChunksStillDiffering)
	}
	stopFollower()
	if err := <-followed; err != nil {
		t.Errorf("follower: %v", err)
	}
}
