package follow

import (
	"bytes"
	"context"
	"database/sql"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
)

// A rehearsed cutover under load makes the source read-only, waits for the
// follower to apply the final position, verifies, and makes the source
// writable again; its window is timed.
func TestCutoverRehearsal(t *testing.T) {
	ctx := testCtx(t, 3*time.Minute)
	src, dst, admin, srcURL := followedShop(t, ctx, 40)
	// The application's account: read_only stops it (not an account with
	// SUPER or READ_ONLY ADMIN).
	mustExec(t, admin, "CREATE USER app@'%'", "GRANT ALL ON shop.* TO app@'%'")
	appT := withDB(t, srcURL, "shop")
	appT.User = "app"
	app := open(t, appT)
	lctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var txns int64
	wg.Add(1)
	go func() { defer wg.Done(); txns, _ = churn(lctx, app, "shop", 3) }()
	var log bytes.Buffer
	res, err := Cutover(ctx, src, dst, CutoverOptions{
		AllowSetGlobal: true, Rehearse: true, Log: &log,
		Follow: Options{AllowWrite: true, Workers: 2},
	})
	stop()
	wg.Wait()
	if err != nil {
		t.Fatalf("cutover: %v\n%s", err, log.String())
	}
	t.Logf("%d transactions during the cutover\n%s", txns, res.Text())
	var names []string
	for _, s := range res.Steps {
		names = append(names, s.Name)
	}
	if got, want := strings.Join(names, " "), "follower lag read_only final_position caught_up verify restore"; got != want {
		t.Errorf("steps %q, want %q", got, want)
	}
	if !res.Equal || !res.Verified || !res.ReadOnlyRestored {
		t.Errorf("equal %v, verified %v, read_only restored %v: want all true", res.Equal, res.Verified, res.ReadOnlyRestored)
	}
	if res.WriteUnavailable <= 0 || res.WriteUnavailable > 60 {
		t.Errorf("write-unavailable window %.3f s: want a positive figure under a minute", res.WriteUnavailable)
	}
	var ro string
	if err := admin.QueryRow("SELECT @@GLOBAL.read_only").Scan(&ro); err != nil || ro != "0" {
		t.Errorf("the source's read_only is %q (%v) after the rehearsal, want 0", ro, err)
	}
	if !strings.Contains(res.Text(), "write-unavailable window:") {
		t.Errorf("the text lacks the window:\n%s", res.Text())
	}
}

// --kill-writers ends a session that holds an open write transaction once
// the source is read-only; a reading session is left alone.
func TestCutoverKillWriters(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	src, dst, admin, srcURL := followedShop(t, ctx, 5)
	mustExec(t, admin, "CREATE USER app@'%'", "GRANT ALL ON shop.* TO app@'%'")
	appT := withDB(t, srcURL, "shop")
	appT.User = "app"
	app := open(t, appT)
	writer, err := app.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	reader, err := app.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	for _, s := range []string{"BEGIN", "UPDATE shop.items SET stock = 0 WHERE id = 1"} {
		if _, err := writer.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := reader.ExecContext(ctx, "BEGIN"); err == nil {
		_, err = reader.ExecContext(ctx, "SELECT COUNT(*) FROM shop.items")
		if err != nil {
			t.Fatal(err)
		}
	}
	res, err := Cutover(ctx, src, dst, CutoverOptions{AllowSetGlobal: true, Rehearse: true, KillWriters: true,
		Follow: Options{AllowWrite: true, Workers: 1}})
	if err != nil {
		t.Fatalf("cutover: %v", err)
	}
	if res.KilledWriters != 1 {
		t.Errorf("killed %d writers, want the one open write transaction\n%s", res.KilledWriters, res.Text())
	}
	if _, err := writer.ExecContext(ctx, "COMMIT"); err == nil {
		t.Error("the killed writer's COMMIT succeeded")
	}
	if _, err := reader.ExecContext(ctx, "SELECT 1"); err != nil {
		t.Errorf("the reading session was ended too: %v", err)
	}
	if !res.Equal {
		t.Errorf("the data did not match after the writer was ended:\n%s", res.Text())
	}
}

// An account that read_only does not stop (the sandbox's own, with
// SUPER) goes on writing through the cutover: the source's position moves
// past the final one, and the cutover says so, with the position, in a
// step and a note.
func TestCutoverSourceWrittenUnderReadOnly(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	src, dst, admin, _ := followedShop(t, ctx, 5)
	lctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var txns int64
	wg.Add(1)
	go func() { defer wg.Done(); txns, _ = churn(lctx, admin, "shop", 5) }()
	res, err := Cutover(ctx, src, dst, CutoverOptions{AllowSetGlobal: true, Rehearse: true, Verify: VerifyNone,
		Follow: Options{AllowWrite: true, Workers: 1}})
	stop()
	wg.Wait()
	if err != nil {
		t.Fatalf("cutover: %v", err)
	}
	if txns == 0 {
		t.Fatal("the writer made no transaction")
	}
	if res.WrittenAfter == nil || *res.WrittenAfter == res.FinalPosition {
		t.Fatalf("written after read_only: %v (final %v), want a later position\n%s", res.WrittenAfter, res.FinalPosition, res.Text())
	}
	if text := res.Text(); !strings.Contains(text, "moved on to "+res.WrittenAfter.String()) || !strings.Contains(text, "note: the source was written after read_only = ON") {
		t.Errorf("the text does not say the source was written:\n%s", text)
	}
}

// followedShop starts both sandboxes, makes the shop database of rows
// items on the source, copies it to the target and follows it there
// once, so that a position is saved: what a cutover starts from. admin is
// the source's sandbox account, which has SUPER; srcURL its URL.
func followedShop(t *testing.T, ctx context.Context, rows int) (src, dst *target.Target, admin *sql.DB, srcURL string) {
	t.Helper()
	insts := sandboxtest.StartAll(t, binlogSettings, nil)
	src, dst = withDB(t, insts[0].URL(), "shop"), withDB(t, insts[1].URL(), "shop")
	admin = open(t, src)
	shop(t, admin, "shop", rows)
	from := copyDB(t, ctx, src, dst)
	if _, err := Run(ctx, src, dst, Options{AllowWrite: true, From: from, Duration: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	return src, dst, admin, insts[0].URL()
}
