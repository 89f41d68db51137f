package follow

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
)

// The fault tests break a follower's servers or connections under load
// and check that it goes on (or stops, saying why) and that the copy ends
// equal to the source.

// A follower whose Binlog Dump thread is killed on the source starts a new
// stream, each time, and loses nothing. The second kill comes after more
// than RetryFor of good work since the first: a follower that had worked
// since its last failure must not count that time as failing.
func TestFaultSourceConnectionKilled(t *testing.T) {
	inst := sandboxtest.Start(t, binlogSettings...)
	ctx := testCtx(t, 2*time.Minute)
	src, dst := withDB(t, inst.URL(), "shop"), withDB(t, inst.URL(), "shop_copy")
	admin := open(t, src)
	shop(t, admin, "shop", 60)
	from := copyDB(t, ctx, src, dst)

	load := startLoad(ctx, admin, "shop", 11)
	log := &logBuf{}
	const retryFor = 2 * time.Second
	fl := startFollow(t, ctx, src, dst, Options{AllowWrite: true, From: from, Workers: 3, RetryFor: retryFor, Log: log})
	name := nameOf([]Pair{{"shop", "shop_copy"}})
	var killed []int64
	var first time.Time
	for i := range 2 {
		id := waitDump(t, fl, admin, killed)
		before := savedAt(admin, name)
		if _, err := admin.Exec(fmt.Sprintf("KILL %d", id)); err != nil {
			t.Fatalf("kill the binlog dump thread %d: %v", id, err)
		}
		killed = append(killed, id)
		if i == 0 {
			first = time.Now()
		}
		fl.waitFor(t, "the follower to apply changes after the kill", func() bool {
			return savedAt(admin, name) != before && time.Since(first) > retryFor+500*time.Millisecond
		})
	}
	waitDump(t, fl, admin, killed)
	txns := load.stop()
	sum, took, err := fl.stop(t)
	if err != nil {
		t.Fatalf("follow with its dump thread killed twice: %v\nlog:\n%s", err, log)
	}
	if sum.Reconnects < 2 {
		t.Errorf("reconnects: got %d, want >= 2", sum.Reconnects)
	}
	if n := strings.Count(log.String(), "starting again from"); n < 2 {
		t.Errorf("log: got %d lines saying the stream starts again, want >= 2:\n%s", n, log)
	}
	t.Logf("%d transactions; stopped in %s; %s", txns, took, sum.Text())
	catchUp(t, ctx, src, dst)
	sameSums(t, checksums(t, admin, "shop"), checksums(t, admin, "shop_copy"))
}

// A follower whose target connections are killed while a batch is being
// applied applies the batch again. A lock held on the target keeps the
// batch in flight until the connections are killed.
func TestFaultTargetConnectionsKilled(t *testing.T) {
	insts := sandboxtest.StartAll(t, binlogSettings, nil)
	ctx := testCtx(t, 2*time.Minute)
	src, dst := withDB(t, insts[0].URL(), "shop"), withDB(t, insts[1].URL(), "shop")
	srcDB, dstDB := open(t, src), open(t, dst)
	// Two connections of ours on the target: one holds the lock, the
	// other kills; every other connection of the user is the follower's.
	dstDB.SetMaxOpenConns(2)
	shop(t, srcDB, "shop", 60)
	from := copyDB(t, ctx, src, dst)

	load := startLoad(ctx, srcDB, "shop", 12)
	log := &logBuf{}
	fl := startFollow(t, ctx, src, dst, Options{AllowWrite: true, From: from, Workers: 3, Log: log})
	name := nameOf([]Pair{{"shop", "shop"}})
	start := savedAt(dstDB, name)
	fl.waitFor(t, "the follower to apply changes", func() bool { return savedAt(dstDB, name) != start })

	lock, lockID := conn(t, ctx, dstDB)
	mustConnExec(t, ctx, lock, "BEGIN", "SELECT COUNT(*) FROM shop.items FOR UPDATE")
	fl.waitFor(t, "a follower connection to wait for the lock", func() bool {
		var n int
		err := dstDB.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND = 'Query' AND INFO LIKE '%items%' AND ID NOT IN (CONNECTION_ID(), ?)", lockID).Scan(&n)
		return err == nil && n > 0
	})
	held := savedAt(dstDB, name)
	ids := ids(t, dstDB, "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = SUBSTRING_INDEX(USER(), '@', 1) AND ID NOT IN (CONNECTION_ID(), ?)", lockID)
	if len(ids) == 0 {
		t.Fatal("no follower connection on the target to kill")
	}
	for _, id := range ids {
		if _, err := dstDB.Exec(fmt.Sprintf("KILL %d", id)); err != nil && target.Code(err) != erNoSuchThread {
			t.Fatalf("kill connection %d: %v", id, err)
		}
	}
	mustConnExec(t, ctx, lock, "ROLLBACK")
	lock.Close()
	fl.waitFor(t, "the follower to apply the batch again and go on", func() bool {
		return strings.Contains(log.String(), "applying the batch again") && savedAt(dstDB, name) != held
	})
	txns := load.stop()
	sum, _, err := fl.stop(t)
	if err != nil {
		t.Fatalf("follow with its target connections killed: %v\nlog:\n%s", err, log)
	}
	if sum.Reconnects < 1 {
		t.Errorf("reconnects: got %d, want >= 1", sum.Reconnects)
	}
	t.Logf("killed %d connections; %d transactions; %s", len(ids), txns, sum.Text())
	catchUp(t, ctx, src, dst)
	sameSums(t, checksums(t, srcDB, "shop"), checksums(t, dstDB, "shop"))
}

// A follower rides out a restart of the target, or of the source, under
// load, and the copy ends equal.
func TestFaultTargetRestarted(t *testing.T) { restartMidStream(t, false) }

func TestFaultSourceRestarted(t *testing.T) { restartMidStream(t, true) }

func restartMidStream(t *testing.T, source bool) {
	insts := sandboxtest.StartAll(t, binlogSettings, nil)
	ctx := testCtx(t, 3*time.Minute)
	src, dst := withDB(t, insts[0].URL(), "shop"), withDB(t, insts[1].URL(), "shop")
	srcDB, dstDB := open(t, src), open(t, dst)
	shop(t, srcDB, "shop", 60)
	from := copyDB(t, ctx, src, dst)

	load := startLoad(ctx, srcDB, "shop", 13)
	log := &logBuf{}
	fl := startFollow(t, ctx, src, dst, Options{AllowWrite: true, From: from, Workers: 3, Log: log, RetryFor: time.Minute})
	name := nameOf([]Pair{{"shop", "shop"}})
	start := savedAt(dstDB, name)
	fl.waitFor(t, "the follower to apply changes", func() bool { return savedAt(dstDB, name) != start })

	down := insts[1]
	if source {
		down = insts[0]
	}
	began := time.Now()
	if _, err := sandbox.Restart(ctx, down.Home, down.Name, down.Settings); err != nil {
		t.Fatalf("restart: %v", err)
	}
	took := time.Since(began)
	txns := load.stop()
	if source {
		// The load broke off while the source was down.
		load = startLoad(ctx, srcDB, "shop", 14)
	}
	// The source's position now is past the restart (a new binary log file
	// for a restarted source): the follower must get there.
	qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	after, err := SourcePosition(qctx, srcDB)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	fl.waitFor(t, "the follower to apply what the source wrote after the restart", func() bool {
		return savedAt(dstDB, name).Reached(after)
	})
	txns += load.stop()
	sum, _, err := fl.stop(t)
	if err != nil {
		t.Fatalf("follow through a restart: %v\nlog:\n%s", err, log)
	}
	if sum.Reconnects < 1 || log.String() == "" {
		t.Errorf("reconnects: got %d and log %q, want >= 1 and a line per retry", sum.Reconnects, log)
	}
	t.Logf("restart in %s; %d transactions; %s; log:\n%s", took, txns, sum.Text(), log)
	catchUp(t, ctx, src, dst)
	sameSums(t, checksums(t, srcDB, "shop"), checksums(t, dstDB, "shop"))
}

// A follower whose target is down when the first change of a table comes
// (it reads the table's definition from the target then, and again after
// DDL) waits for the target as it does for a batch.
func TestFaultTargetDownAtFirstChange(t *testing.T) {
	insts := sandboxtest.StartAll(t, binlogSettings, nil)
	ctx := testCtx(t, 2*time.Minute)
	src, dst := withDB(t, insts[0].URL(), "shop"), withDB(t, insts[1].URL(), "shop")
	srcDB, dstDB := open(t, src), open(t, dst)
	shop(t, srcDB, "shop", 60)
	from := copyDB(t, ctx, src, dst)

	log := &logBuf{}
	fl := startFollow(t, ctx, src, dst, Options{AllowWrite: true, From: from, Workers: 3, Log: log, RetryFor: time.Minute})
	waitDump(t, fl, srcDB, nil)
	down := insts[1]
	if err := sandbox.Stop(ctx, down.Home, down.Name); err != nil {
		t.Fatal(err)
	}
	load := startLoad(ctx, srcDB, "shop", 16)
	fl.waitFor(t, "the follower to fail to reach the target", func() bool {
		return strings.Contains(log.String(), "starting again from")
	})
	if _, err := sandbox.Start(ctx, down.Home, down.Name); err != nil {
		t.Fatal(err)
	}
	txns := load.stop()
	qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	end, err := SourcePosition(qctx, srcDB)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	name := nameOf([]Pair{{"shop", "shop"}})
	fl.waitFor(t, "the follower to apply the load once the target is back", func() bool {
		return savedAt(dstDB, name).Reached(end)
	})
	sum, _, err := fl.stop(t)
	if err != nil {
		t.Fatalf("follow with the target down at the first change: %v\nlog:\n%s", err, log)
	}
	t.Logf("%d transactions; %s; log:\n%s", txns, sum.Text(), log)
	sameSums(t, checksums(t, srcDB, "shop"), checksums(t, dstDB, "shop"))
}

// A saved position in a binary log the source purged is refused at once,
// and nothing is written.
func TestFaultPositionPurged(t *testing.T) {
	inst := sandboxtest.Start(t, binlogSettings...)
	ctx := testCtx(t, time.Minute)
	src, dst := withDB(t, inst.URL(), "shop"), withDB(t, inst.URL(), "shop_copy")
	admin := open(t, src)
	shop(t, admin, "shop", 10)
	from := copyDB(t, ctx, src, dst)
	saveAndStop(t, ctx, src, dst, from)
	name := nameOf([]Pair{{"shop", "shop_copy"}})
	before := mustLoad(t, ctx, admin, name)

	mustExec(t, admin, "FLUSH BINARY LOGS")
	now, err := SourcePosition(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	// The source keeps a file its dump thread for the stopped follower
	// still has open, until that thread notices the follower is gone.
	deadline := time.Now().Add(15 * time.Second)
	for {
		mustExec(t, admin, "PURGE BINARY LOGS TO '"+now.File+"'")
		files := ids(t, admin, "SHOW BINARY LOGS")
		if len(files) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after PURGE BINARY LOGS TO %s: %d files, want 1", now.File, len(files))
		}
		time.Sleep(100 * time.Millisecond)
	}

	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	began := time.Now()
	_, err = Run(rctx, src, dst, Options{AllowWrite: true, UntilCaughtUp: true})
	took := time.Since(began)
	if !errors.Is(err, ErrPositionGone) {
		t.Fatalf("follow from a purged position: got %v, want ErrPositionGone", err)
	}
	for _, want := range []string{before.Position.File, now.File, "gone", "copy again"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if took > 10*time.Second {
		t.Errorf("refusing a purged position took %s, want a few seconds at most", took)
	}
	if after := mustLoad(t, ctx, admin, name); after.Position != before.Position || after.State != before.State {
		t.Errorf("saved row after the refusal: got %s %q, want it untouched: %s %q", after.Position, after.State, before.Position, before.State)
	}
}

// A saved position read from a server whose server_id has since changed is
// refused, naming both ids.
func TestFaultServerIDChanged(t *testing.T) {
	inst := sandboxtest.Start(t, binlogSettings...)
	ctx := testCtx(t, time.Minute)
	src, dst := withDB(t, inst.URL(), "shop"), withDB(t, inst.URL(), "shop_copy")
	admin := open(t, src)
	shop(t, admin, "shop", 10)
	from := copyDB(t, ctx, src, dst)
	saveAndStop(t, ctx, src, dst, from)
	saved := mustLoad(t, ctx, admin, nameOf([]Pair{{"shop", "shop_copy"}}))

	other := saved.ServerID + 1000
	mustExec(t, admin, fmt.Sprintf("SET GLOBAL server_id = %d", other))
	_, err := Run(ctx, src, dst, Options{AllowWrite: true, UntilCaughtUp: true})
	if !errors.Is(err, ErrPositionGone) {
		t.Fatalf("follow after server_id changed: got %v, want ErrPositionGone", err)
	}
	for _, want := range []string{fmt.Sprintf("server_id %d", saved.ServerID), fmt.Sprintf("server_id %d", other)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}

// A follower interrupted (the Ctrl-C path), whether it was waiting for the
// source or applying a batch, stops at once without an error, saves state
// "stopped" at the position it reports, and the next run goes on from
// there.
func TestFaultInterrupted(t *testing.T) {
	inst := sandboxtest.Start(t, binlogSettings...)
	ctx := testCtx(t, 2*time.Minute)
	src, dst := withDB(t, inst.URL(), "shop"), withDB(t, inst.URL(), "shop_copy")
	admin := open(t, src)
	shop(t, admin, "shop", 60)
	from := copyDB(t, ctx, src, dst)
	saveAndStop(t, ctx, src, dst, from)
	name := nameOf([]Pair{{"shop", "shop_copy"}})

	load := startLoad(ctx, admin, "shop", 15)
	for _, applying := range []bool{false, true} {
		t.Logf("interrupted while applying: %v", applying)
		start := mustLoad(t, ctx, admin, name).Position
		fl := startFollow(t, ctx, src, dst, Options{AllowWrite: true, Workers: 3})
		fl.waitFor(t, "the follower to apply changes", func() bool { return savedAt(admin, name) != start })
		var lock *sql.Conn
		if applying {
			var lockID int64
			lock, lockID = conn(t, ctx, admin)
			mustConnExec(t, ctx, lock, "BEGIN", "SELECT COUNT(*) FROM shop_copy.items FOR UPDATE")
			fl.waitFor(t, "a follower connection to wait for the lock", func() bool {
				var n int
				err := admin.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND = 'Query' AND INFO LIKE '%shop_copy%items%' AND ID NOT IN (CONNECTION_ID(), ?)", lockID).Scan(&n)
				return err == nil && n > 0
			})
		}
		sum, took, err := fl.stop(t)
		if lock != nil {
			mustConnExec(t, ctx, lock, "ROLLBACK")
			lock.Close()
		}
		if err != nil {
			t.Fatalf("interrupted follow: got error %v, want none", err)
		}
		if took > 6*time.Second {
			t.Errorf("interrupted follow took %s to return, want a few seconds at most", took)
		}
		if sum.State != StateStopped {
			t.Errorf("summary state: got %q, want %q", sum.State, StateStopped)
		}
		saved := mustLoad(t, ctx, admin, name)
		if saved.State != StateStopped || saved.Position != sum.To {
			t.Errorf("saved row: got %q at %s, want %q at %s (the summary's end)", saved.State, saved.Position, StateStopped, sum.To)
		}
		t.Logf("stopped in %s at %s", took, sum.To)
	}
	txns := load.stop()
	stopped := mustLoad(t, ctx, admin, name).Position
	sum := catchUp(t, ctx, src, dst)
	if sum.From != stopped {
		t.Errorf("the run after the interruption started at %s, want the saved %s", sum.From, stopped)
	}
	t.Logf("%d transactions; %s", txns, sum.Text())
	sameSums(t, checksums(t, admin, "shop"), checksums(t, admin, "shop_copy"))
}

// erNoSuchThread is ER_NO_SUCH_THREAD: the connection ended before KILL.
const erNoSuchThread = 1094

// bgFollow is Run in a goroutine of its own; stop interrupts it as a
// Ctrl-C does. The test's cleanup stops it if the test did not.
type bgFollow struct {
	cancel context.CancelFunc
	done   chan struct{}
	sum    *Summary
	err    error
}

func startFollow(t *testing.T, ctx context.Context, src, dst *target.Target, opts Options) *bgFollow {
	fctx, cancel := context.WithCancel(ctx)
	b := &bgFollow{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(b.done)
		b.sum, b.err = Run(fctx, src, dst, opts)
	}()
	t.Cleanup(func() { cancel(); <-b.done })
	return b
}

// stop interrupts the follower and waits for it (20s at most), returning
// what Run returned and how long it took to.
func (b *bgFollow) stop(t *testing.T) (*Summary, time.Duration, error) {
	t.Helper()
	began := time.Now()
	b.cancel()
	select {
	case <-b.done:
	case <-time.After(20 * time.Second):
		t.Fatal("the follower did not return within 20s of being interrupted")
	}
	if b.sum == nil {
		t.Fatalf("follow returned no summary: %v", b.err)
	}
	return b.sum, time.Since(began), b.err
}

// waitFor polls cond until it holds, failing the test after 30s or when
// the follower ends first.
func (b *bgFollow) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		select {
		case <-b.done:
			t.Fatalf("waiting for %s: the follower ended: %v", what, b.err)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: not within 30s", what)
		}
	}
}

// bgLoad is churn in a goroutine of its own until stop.
type bgLoad struct {
	cancel context.CancelFunc
	done   chan struct{}
	txns   int64
}

func startLoad(ctx context.Context, db *sql.DB, name string, seed uint64) *bgLoad {
	lctx, cancel := context.WithCancel(ctx)
	l := &bgLoad{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		l.txns, _ = churn(lctx, db, name, seed)
	}()
	return l
}

// stop ends the load and returns how many transactions it committed.
func (l *bgLoad) stop() int64 {
	l.cancel()
	<-l.done
	return l.txns
}

// savedAt is the follower's saved position, or the zero one when it cannot
// be read (the target is down).
func savedAt(db *sql.DB, name string) Position {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := Load(ctx, db, name)
	if err != nil {
		return Position{}
	}
	return s.Position
}

func mustLoad(t *testing.T, ctx context.Context, db *sql.DB, name string) *Saved {
	t.Helper()
	s, err := Load(ctx, db, name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// saveAndStop runs a follower from the copy's position for a moment, so
// that the target has a saved position.
func saveAndStop(t *testing.T, ctx context.Context, src, dst *target.Target, from Position) {
	t.Helper()
	if _, err := Run(ctx, src, dst, Options{AllowWrite: true, From: from, Duration: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
}

func catchUp(t *testing.T, ctx context.Context, src, dst *target.Target) *Summary {
	t.Helper()
	sum, err := Run(ctx, src, dst, Options{AllowWrite: true, UntilCaughtUp: true})
	if err != nil {
		t.Fatalf("follow until caught up: %v", err)
	}
	if sum.State != StateCaughtUp {
		t.Errorf("state after catching up: got %q, want %q", sum.State, StateCaughtUp)
	}
	return sum
}

// waitDump returns the id of a Binlog Dump thread on the source that is
// not in old.
func waitDump(t *testing.T, fl *bgFollow, db *sql.DB, old []int64) int64 {
	t.Helper()
	var id int64
	fl.waitFor(t, "a new binlog dump thread", func() bool {
		for _, x := range ids(t, db, "SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'") {
			if !contains(old, x) {
				id = x
				return true
			}
		}
		return false
	})
	return id
}

func contains(xs []int64, x int64) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// ids runs query and returns its first column as numbers (or, for a
// column that is not a number, 0 for each row).
func ids(t *testing.T, db *sql.DB, query string, args ...any) []int64 {
	t.Helper()
	rows, err := db.Query(query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []int64
	for rows.Next() {
		vals := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var n int64
		fmt.Sscan(string(vals[0]), &n)
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// conn is a connection of db's own and its CONNECTION_ID().
func conn(t *testing.T, ctx context.Context, db *sql.DB) (*sql.Conn, int64) {
	t.Helper()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	return c, id
}

func mustConnExec(t *testing.T, ctx context.Context, c *sql.Conn, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := c.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// logBuf is an Options.Log safe to read while the follower writes.
type logBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
