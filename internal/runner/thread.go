package runner

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/clock"
	"github.com/shakedown/shakedown/internal/randgen"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/workload"
)

// grace5s is how long events in flight may run past the time limit before
// they are cancelled.
const grace5s = 5 * time.Second

// Backoffs between attempts to connect: an event's own connection
// (--connect-mode=transaction) is tried again soon; a lost one waits
// longer, and without a time limit the run gives up after reconnectGiveUp.
var (
	eventBackoff     = client.Backoff{First: time.Millisecond, Max: 100 * time.Millisecond}
	reconnectBackoff = client.Backoff{First: 10 * time.Millisecond, Max: 500 * time.Millisecond}
)

// reconnectGiveUp bounds reconnecting in runs without a time limit.
const reconnectGiveUp = time.Minute

// dial opens a connection for thread i and records how long it took. With
// inEvent set the time is left out of the current event's latency.
func (r *run) dial(ctx context.Context, i int, inEvent bool) (workload.Conn, error) {
	t := r.threads[i]
	start := r.clock.Now()
	c, err := r.cfg.Connect(ctx, i, &t.counts)
	if err != nil {
		return nil, err
	}
	d := r.clock.Now().Sub(start)
	t.connRec.Record(d)
	t.connects.Add(1)
	if inEvent {
		t.connNS += int64(d)
	}
	return c, nil
}

// connect opens thread i's connection and its worker. With a connection per
// statement, the connection is one that dials for each statement.
func (r *run) connect(ctx context.Context, i int, rnd *randgen.Rand) (workload.Conn, workload.Worker, error) {
	var c workload.Conn
	t := r.threads[i]
	if r.cfg.ConnectMode == PerStatement {
		c = client.NewPerStatement(func(ctx context.Context) (workload.Conn, error) {
			return r.dial(ctx, i, true)
		}, func(c workload.Conn) {
			// Disconnecting is left out of the event's latency too.
			start := r.clock.Now()
			c.Close()
			t.connNS += int64(r.clock.Now().Sub(start))
		})
	} else {
		var err error
		if c, err = r.dial(ctx, i, r.cfg.ConnectMode == PerEvent); err != nil {
			return nil, nil, err
		}
	}
	w, err := r.w.NewWorker(ctx, &workload.WorkerEnv{
		ID:      r.cfg.ThreadBase + i,
		Threads: r.totalThreads(),
		Conn:    c,
		Rand:    rnd,
		Dial:    func(ctx context.Context) (workload.Conn, error) { return r.dial(ctx, i, false) },
		Counts:  &t.counts,
		Stmts:   t.stmts,
	})
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("thread %d: %w", i, client.ExplainSetup(err))
	}
	return c, w, nil
}

// totalThreads is the whole load's thread count: the workers of a runner
// of a split load divide key ranges as the whole's threads would.
func (r *run) totalThreads() int {
	if r.cfg.TotalThreads > 0 {
		return r.cfg.TotalThreads
	}
	return len(r.threads)
}

func (r *run) fatal(err error) {
	r.fatalMu.Lock()
	if r.fatalErr == nil {
		r.fatalErr = err
	}
	r.fatalMu.Unlock()
	r.stop.Store(true)
	r.cancel()
}

// next waits for thread's next event and returns its intended start.
func (r *run) next(ctx context.Context) (time.Time, bool) {
	if r.stop.Load() {
		return time.Time{}, false
	}
	if r.cfg.Events > 0 && r.issued.Add(1) > r.cfg.Events {
		r.stop.Store(true)
		return time.Time{}, false
	}
	if r.sched == nil {
		now := r.clock.Now()
		if r.pastDeadline(now) {
			return time.Time{}, false
		}
		return now, true
	}
	at := r.sched.take()
	if !r.deadline.IsZero() && !at.Before(r.deadline) {
		// This thread's next arrival falls past the limit, so it ends;
		// the run does not stop (r.stop): the other threads still run the
		// arrivals they took before it, which fall within the limit.
		// Stopping here dropped them, and with more threads than arrivals
		// in flight the run came out short of its rate.
		return time.Time{}, false
	}
	if !clock.Sleep(ctx, r.clock, at.Sub(r.clock.Now())) {
		return time.Time{}, false
	}
	if r.stop.Load() {
		return time.Time{}, false
	}
	return at, true
}

// pastDeadline reports whether t is past the time limit, and stops the run
// if so. The threads check it themselves: a reporter goroutine starved of
// CPU by thousands of busy threads must not stretch the run.
func (r *run) pastDeadline(t time.Time) bool {
	if r.deadline.IsZero() || t.Before(r.deadline) {
		return false
	}
	r.stop.Store(true)
	return true
}

func (r *run) loop(ctx context.Context, i int, conn workload.Conn, w workload.Worker, rnd *randgen.Rand) {
	t := r.threads[i]
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	r.active.Add(1)
	defer r.active.Add(-1)
	perEvent := r.cfg.ConnectMode == PerEvent
events:
	for {
		start, ok := r.next(ctx)
		if !ok {
			break
		}
		t.connNS = 0
		if perEvent {
			if conn, w = r.eventConnect(ctx, i, rnd); conn == nil {
				return
			}
		}
		for {
			err := w.Event(ctx)
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				return // interrupted: the event in flight does not count
			}
			// The one place a statement's error is counted: in the run's
			// totals and, for a statement of a StatementNamer, in its own.
			t.addError(target.Code(err), workload.StatementOf(err))
			switch r.policy.OnStatement(err, conn.Broken()) {
			case client.Retry:
				// Retried as sysbench does, until the run's time is up:
				// a statement that always fails must not hold the thread
				// past --time. The event is not counted. (Under an event
				// limit alone the events in flight still finish.)
				if r.pastDeadline(r.clock.Now()) {
					break events
				}
				continue
			case client.Reconnect:
				conn.Close()
				if conn, w = r.reconnect(ctx, i, rnd); conn == nil {
					return
				}
				continue
			}
			r.fatal(fmt.Errorf("thread %d: %w", i, err))
			return
		}
		lat := r.clock.Now().Sub(start)
		if r.cfg.ConnectMode != Persistent {
			lat -= time.Duration(t.connNS)
		}
		t.rec.Record(lat)
		t.busy.Add(int64(lat))
		t.events.Add(1)
		if perEvent {
			r.finish(ctx, i, w)
			conn.Close()
			conn, w = nil, nil
		}
	}
	if w != nil {
		r.finish(ctx, i, w)
	}
}

// finish lets a worker that has something to do at the end do it.
func (r *run) finish(ctx context.Context, i int, w workload.Worker) {
	if f, ok := w.(workload.Finisher); ok {
		if err := f.Finish(ctx); err != nil && ctx.Err() == nil {
			r.fatal(fmt.Errorf("thread %d: finish: %w", i, err))
		}
	}
}

// eventConnect opens the connection of one event (--connect-mode=transaction).
// A failed connect that the policy tries again (a lost or refused
// connection, an ignored code such as too many connections) is counted and
// tried again after a pause; any other error ends the run. It returns nil
// when it gave up.
func (r *run) eventConnect(ctx context.Context, i int, rnd *randgen.Rand) (workload.Conn, workload.Worker) {
	t := r.threads[i]
	var c workload.Conn
	var w workload.Worker
	down := r.downtime(i)
	err := r.policy.Redial(ctx, r.clock, eventBackoff, r.stop.Load, func(ctx context.Context) (err error) {
		c, w, err = r.connect(ctx, i, rnd)
		if err == nil && down.failed != nil {
			t.attempts.Add(1) // the attempt that found the server back
		}
		return err
	}, func(err error) {
		t.addError(target.Code(err), -1)
		if target.IsConnLost(err) {
			down.fail(err)
		}
	})
	down.end()
	if err == nil {
		return c, w
	}
	if !errors.Is(err, client.ErrStopped) {
		r.fatal(fmt.Errorf("thread %d: %w", i, err))
	}
	return nil, nil
}

// reconnect tries until the connection is back, the run stops, or the
// context ends. It returns nil when it gave up.
func (r *run) reconnect(ctx context.Context, i int, rnd *randgen.Rand) (workload.Conn, workload.Worker) {
	t := r.threads[i]
	b := reconnectBackoff
	b.Until = r.deadline
	if r.deadline.IsZero() {
		// A run limited by --time goes on trying until the time is up;
		// one limited by events alone would wait for ever.
		b.Within = reconnectGiveUp
	}
	var c workload.Conn
	var w workload.Worker
	stop := func() bool { return r.stop.Load() || r.pastDeadline(r.clock.Now()) }
	down := r.downtime(i)
	err := r.policy.Redial(ctx, r.clock, b, stop, func(ctx context.Context) (err error) {
		if c, w, err = r.connect(ctx, i, rnd); err == nil {
			t.attempts.Add(1)
		}
		return err
	}, down.fail)
	down.end()
	switch {
	case err == nil:
		t.reconnects.Add(1)
		return c, w
	case errors.Is(err, client.ErrStopped):
	case errors.Is(err, client.ErrMissingTables):
		r.fatal(err)
	default:
		r.fatal(fmt.Errorf("thread %d: lost the server: %w", i, err))
	}
	return nil, nil
}

// downtime follows one thread's attempts to reach the server after it lost
// it. Owned by the thread's goroutine.
type downtime struct {
	r      *run
	t      *thread
	from   time.Time
	failed error // the first failed attempt
}

func (r *run) downtime(i int) *downtime {
	return &downtime{r: r, t: r.threads[i], from: r.clock.Now()}
}

// fail counts a failed attempt.
func (d *downtime) fail(err error) {
	d.t.attempts.Add(1)
	d.t.failures.Add(1)
	if d.failed == nil {
		d.failed = err
	}
}

// end records the downtime, if an attempt failed: the server was
// unavailable to this thread from its loss until now.
func (d *downtime) end() {
	if d.failed != nil {
		d.r.outages.add(d.from, d.r.clock.Now(), d.failed)
	}
}

// outages are the spans during which some thread had lost its connection
// and failed to open another: the server was unavailable to it.
type outages struct {
	mu    sync.Mutex
	spans []span
}

type span struct {
	from, to time.Time
	err      error // the span's first failed attempt
}

// add records that a thread could not reach the server from from to to,
// err being its first failed attempt.
func (o *outages) add(from, to time.Time, err error) {
	o.mu.Lock()
	o.spans = append(o.spans, span{from, to, err})
	o.mu.Unlock()
}

// during returns how long, between from and to, some thread could not
// reach the server (overlapping spans counted once), and the first failure
// in that time.
func (o *outages) during(from, to time.Time) (time.Duration, error) {
	o.mu.Lock()
	spans := append([]span(nil), o.spans...)
	o.mu.Unlock()
	sort.Slice(spans, func(i, j int) bool { return spans[i].from.Before(spans[j].from) })
	var total time.Duration
	var first error
	var end time.Time // of the union so far
	for _, s := range spans {
		lo, hi := maxTime(s.from, from), minTime(s.to, to)
		if !hi.After(lo) {
			continue
		}
		if first == nil {
			first = s.err
		}
		if lo.Before(end) {
			lo = end
		}
		if hi.After(lo) {
			total += hi.Sub(lo)
			end = hi
		}
	}
	return total, first
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
