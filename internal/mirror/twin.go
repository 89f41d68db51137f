package mirror

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/fingerprint"
	"github.com/shakedown/shakedown/internal/replay"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/wire"
)

// candidate is one candidate's connection settings and health, shared by
// the twins of every session.
type candidate struct {
	name string
	cfg  *mysql.Config
	i    int

	mu       sync.Mutex
	failures int
	retryAt  time.Time
	down     bool
	lost     atomic.Int64 // times it went down
	back     atomic.Int64 // times it came back
}

// Back-off bounds between attempts at a candidate that failed.
const (
	firstBackoff = 100 * time.Millisecond
	maxBackoff   = 5 * time.Second
)

// mayTry reports whether a twin may connect now: always while the
// candidate is up, once per back-off period while it is down.
func (c *candidate) mayTry(now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.down {
		return true
	}
	if now.Before(c.retryAt) {
		return false
	}
	// One twin tries; the others wait for its outcome's period.
	c.retryAt = now.Add(c.backoff())
	return true
}

func (c *candidate) backoff() time.Duration {
	d := firstBackoff << min(c.failures, 6)
	return min(d, maxBackoff)
}

// failed marks the candidate down after a lost connection or a failed
// connect.
func (c *candidate) failed(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.down {
		c.down = true
		c.lost.Add(1)
	}
	c.failures++
	c.retryAt = now.Add(c.backoff())
}

// succeeded marks it up after a connect.
func (c *candidate) succeeded() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.down {
		c.down = false
		c.back.Add(1)
	}
	c.failures = 0
}

func (c *candidate) isDown() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.down
}

type itemKind uint8

const (
	itemRead itemKind = iota
	itemSession
	itemInitDB
	itemPrepare   // prepare sql as the control's statement stmt
	itemExec      // execute stmt (prepared from sql) with args
	itemClose     // close stmt
	itemStmtReset // reset stmt
	itemReset     // reset the session (COM_RESET_CONNECTION)
)

// compared reports whether the twin compares its result with the
// control's.
func (k itemKind) compared() bool { return k == itemRead || k == itemExec }

// item is one statement queued for a twin, with the control's result for
// a read or an execution of one.
type item struct {
	kind    itemKind
	sql     string
	info    *fingerprint.Info
	cl      *class
	control replay.Result
	db      string
	// stmt is the control's id of a prepared statement; args an
	// execution's parameters (nil for a statement without any).
	stmt uint32
	args *stmtArgs
	// seq numbers the items queued on a twin, from 1.
	seq uint64
}

// twin is a session's twin on one candidate. Its run goroutine owns conn
// and stmts; it ends when the session closes q (or ctx ends, which
// interrupts the connection).
type twin struct {
	s      *session
	cand   *candidate
	q      chan item
	resync atomic.Bool   // a session statement was dropped: start again
	closes pendingCloses // statements whose close was dropped
	// queued counts the items queued, for their seq (the session's
	// goroutine only).
	queued uint64
	conn   *wire.Conn
	// stmts are the statements prepared on conn, by the control's ids.
	stmts map[uint32]*twinStmt
	h     replay.Hasher
}

func (tw *twin) run(ctx context.Context) {
	defer func() {
		if tw.conn != nil {
			tw.conn.Close()
		}
	}()
	var closes []uint32
	for it := range tw.q {
		if ctx.Err() != nil {
			continue // drain: the session is closing
		}
		if closes = tw.closes.due(it.seq, closes); len(closes) > 0 && tw.conn != nil {
			for _, id := range closes {
				tw.closeStmt(id)
			}
		}
		if !tw.ready(ctx) {
			if it.kind.compared() {
				it.cl.cand[tw.cand.i].down.Add(1)
				tw.s.m.tally.dropped.Add(1)
			}
			continue
		}
		switch it.kind {
		case itemRead:
			tw.read(ctx, it)
		case itemExec:
			tw.exec(ctx, it)
		case itemPrepare:
			tw.prepare(ctx, it.stmt, it.sql)
		case itemClose:
			tw.closeStmt(it.stmt)
		case itemStmtReset:
			tw.resetStmt(ctx, it.stmt)
		case itemReset:
			tw.resetConn(ctx)
		default:
			q := it.sql
			if it.kind == itemInitDB {
				q = "USE `" + it.sql + "`"
			}
			if _, err := tw.conn.Query(q); err != nil {
				if tw.conn.Broken() || target.EndsSession(err) {
					tw.lose(ctx)
				}
				// A session statement the candidate refuses leaves the
				// twin's state apart: counted with its class.
				if it.cl != nil {
					it.cl.cand[tw.cand.i].sessionErrors.Add(1)
				}
			}
		}
	}
}

// ready connects the twin when it has no connection (or must start
// again), with the session's database and history; false while the
// candidate is down.
func (tw *twin) ready(ctx context.Context) bool {
	if tw.conn != nil && !tw.resync.Load() {
		return true
	}
	if tw.conn != nil {
		tw.conn.Close()
		tw.conn = nil
	}
	// The statements were the old connection's.
	clear(tw.stmts)
	if !tw.cand.mayTry(time.Now()) {
		return false
	}
	tw.resync.Store(false)
	db, history := tw.s.state()
	cfg := tw.cand.cfg.Clone()
	cfg.DBName = db
	c, err := client.DialWire(ctx, cfg, wire.Options{})
	if err != nil {
		tw.failed(ctx)
		return false
	}
	for _, q := range history {
		if _, err := c.Query(q); err != nil && c.Broken() {
			c.Close()
			tw.failed(ctx)
			return false
		}
	}
	tw.cand.succeeded()
	tw.conn = c
	return true
}

// lose drops a broken connection, and the statements prepared on it, and
// marks the candidate down.
func (tw *twin) lose(ctx context.Context) {
	tw.conn.Close()
	tw.conn = nil
	clear(tw.stmts)
	tw.failed(ctx)
}

// failed marks the candidate down, unless the failure is the mirror's own
// stop (ctx ended).
func (tw *twin) failed(ctx context.Context) {
	if ctx.Err() == nil {
		tw.cand.failed(time.Now())
	}
}

// read runs a mirrored read on the candidate and records the comparison.
func (tw *twin) read(ctx context.Context, it item) {
	c := tw.conn
	tw.h.Start(tw.s.m.seed, it.db, it.info)
	start := time.Now()
	var wr wire.Result
	err := c.SendQuery(it.sql)
	if err == nil {
		wr, err = c.ReadReply(&tw.h)
	}
	tw.finish(ctx, it, start, wr, err)
}

// finish ends a compared statement that the twin began at start, with wr
// and err what its reply ended with.
func (tw *twin) finish(ctx context.Context, it item, start time.Time, wr wire.Result, err error) {
	dur := time.Since(start)
	broken := err != nil && (tw.conn.Broken() || target.EndsSession(err))
	// Compared here, before the twin's next statement.
	res := tw.h.FinishLent(wr, err, broken, dur)
	if broken {
		tw.lose(ctx)
		if ctx.Err() == nil {
			it.cl.cand[tw.cand.i].lost.Add(1)
		}
		return
	}
	tw.s.m.tally.compare(tw.cand.i, it, &res)
}
