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
)

// item is one statement queued for a twin, with the control's result for
// a read.
type item struct {
	kind    itemKind
	sql     string
	info    *fingerprint.Info
	cl      *class
	control replay.Result
	db      string
}

// twin is a session's twin on one candidate. Its run goroutine owns conn;
// it ends when the session closes q (or ctx ends, which interrupts the
// connection).
type twin struct {
	s      *session
	cand   *candidate
	q      chan item
	resync atomic.Bool // a session statement was dropped: start again
	conn   *wire.Conn
	h      replay.Hasher
}

func (tw *twin) run(ctx context.Context) {
	defer func() {
		if tw.conn != nil {
			tw.conn.Close()
		}
	}()
	for it := range tw.q {
		if ctx.Err() != nil {
			continue // drain: the session is closing
		}
		if !tw.ready(ctx) {
			if it.kind == itemRead {
				it.cl.cand[tw.cand.i].down.Add(1)
				tw.s.m.tally.dropped.Add(1)
			}
			continue
		}
		switch it.kind {
		case itemRead:
			tw.read(ctx, it)
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

// lose drops a broken connection and marks the candidate down.
func (tw *twin) lose(ctx context.Context) {
	tw.conn.Close()
	tw.conn = nil
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
	dur := time.Since(start)
	broken := err != nil && (c.Broken() || target.EndsSession(err))
	res := tw.h.Finish(wr, err, broken, dur)
	if broken {
		tw.lose(ctx)
		if ctx.Err() == nil {
			it.cl.cand[tw.cand.i].lost.Add(1)
		}
		return
	}
	tw.s.m.tally.compare(tw.cand.i, it, &res)
}
