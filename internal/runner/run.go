package runner

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/shakedown/shakedown/internal/histogram"
	"github.com/shakedown/shakedown/internal/randgen"
	"github.com/shakedown/shakedown/internal/workload"
)

// run goes through four steps: connect every thread (connectThreads),
// start the load and the clock (start), measure until the threads end
// (measure), and sum what was measured (outcome). An interval is closed in
// one place, closeInterval: on every tick, and once more at the end.
func (r *run) run(parent context.Context) (*Outcome, error) {
	// hard is cancelled by the caller (Ctrl-C), by a fatal error, or after
	// the time limit plus a grace period for events in flight.
	hard, cancel := context.WithCancel(parent)
	defer cancel()
	r.cancel = cancel

	c, err := r.connectThreads(hard)
	if err != nil {
		return nil, err
	}
	defer c.release()
	if !r.cfg.StartAt.IsZero() && !r.waitUntil(parent, r.cfg.StartAt) {
		c.abandon()
		return nil, parent.Err()
	}
	m, allDone := r.start(hard, c)
	interrupted := r.measure(parent, m, allDone)
	return r.outcome(parent, m, c, interrupted), nil
}

// crew is a run's threads before they start: each one's connection (nil
// with a connection per event), worker and random stream, and the I/O
// loops they run on (nil without).
type crew struct {
	conns   []workload.Conn
	workers []workload.Worker
	rands   []*randgen.Rand
	loops   *loopSet
}

// context is ctx for thread i's code: with I/O loops, it carries the
// thread's task from its first connection on.
func (c *crew) context(ctx context.Context, i int) context.Context {
	if c.loops == nil {
		return ctx
	}
	return c.loops.context(ctx, i)
}

// abandon closes the connections of threads that will not start, and the
// loops that will not run.
func (c *crew) abandon() {
	for _, conn := range c.conns {
		if conn != nil {
			conn.Close()
		}
	}
	c.loops.close()
}

// release gives back what the loops hold (their processors, the CPUs they
// are bound to) once they have ended or been abandoned.
func (c *crew) release() {
	if c.loops != nil {
		c.loops.release()
	}
}

// connectThreads connects every thread before the clock starts, as
// sysbench does; with a connection per event there is nothing to keep:
// each event connects. On an error nothing is left open.
func (r *run) connectThreads(hard context.Context) (*crew, error) {
	loops, err := newLoopSet(r.cfg, len(r.threads))
	if err != nil {
		return nil, err
	}
	n := len(r.threads)
	c := &crew{conns: make([]workload.Conn, n), workers: make([]workload.Worker, n), rands: make([]*randgen.Rand, n), loops: loops}
	var wg sync.WaitGroup
	errs := make([]error, n)
	sem := make(chan struct{}, 64)
	for i := range r.threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			c.rands[i] = r.cfg.Rand.New(r.cfg.ThreadBase + i)
			if r.cfg.ConnectMode == PerEvent {
				return
			}
			c.conns[i], c.workers[i], errs[i] = r.connect(c.context(hard, i), i, c.rands[i])
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		c.abandon()
		c.release()
		return nil, firstErr(errs)
	}
	// The connections made before the clock are not part of the figures.
	r.flushConnects()
	r.connSink.Take(nil)
	return c, nil
}

// meter is a run's measurement as it goes: whether it measures yet (not
// during the warm-up), where it began, the interval open since prevAt and
// the totals at its start, and what the closed intervals add up to. Only
// the goroutine that runs measure and outcome touches it.
type meter struct {
	out       *Outcome
	measuring bool
	// start is when the load started, from when measuring did; base is
	// the totals at from, prev those at prevAt.
	start, from, prevAt time.Time
	base, prev          totals
	// load is the client's own load from from on.
	load *loadProbe
	// cum and connCum are the closed intervals' latencies and connect
	// latencies; spare is the last interval's histogram, reused.
	cum, connCum, spare *histogram.Histogram
}

// start starts the threads, each on a goroutine of its own or as a task of
// its loop, and the clock; allDone is closed once every thread has ended.
func (r *run) start(hard context.Context, c *crew) (m *meter, allDone <-chan struct{}) {
	// The counts start here, before any thread runs an event.
	base := r.totals()
	// The client's load is read on the wall clock, as its CPU time is, and
	// before the clock starts: reading it takes a moment with many threads.
	load := startLoad(time.Now())
	start := r.clock.Now()
	if r.cfg.Time > 0 {
		r.deadline = start.Add(r.cfg.Warmup + r.cfg.Time)
	}
	if r.cfg.Rate > 0 {
		r.sched = newSchedule(start, r.cfg.Rate, r.cfg.Rand.Seed, r.cfg.Stream)
		r.sched.from, r.sched.to = start.Add(r.cfg.Warmup), r.deadline
	}
	var done sync.WaitGroup
	if c.loops != nil {
		for i := range r.threads {
			l := c.loops.Of(i)
			l.Start(c.context(hard, i), c.loops.tasks[i], func(ctx context.Context) {
				r.loop(ctx, i, c.conns[i], c.workers[i], c.rands[i])
			})
		}
		c.loops.Go(&done)
	} else {
		for i := range r.threads {
			done.Add(1)
			go func() {
				defer done.Done()
				r.loop(hard, i, c.conns[i], c.workers[i], c.rands[i])
			}()
		}
	}
	all := make(chan struct{})
	go func() { done.Wait(); close(all) }()
	m = &meter{
		out: &Outcome{}, measuring: r.cfg.Warmup <= 0, start: start, from: start, prevAt: start,
		base: base, prev: base, load: load, cum: histogram.New(), connCum: histogram.New(),
	}
	return m, all
}

// measure closes an interval at every tick, starts measuring at the end of
// the warm-up, stops new events at the time limit and cancels those in
// flight after a grace period, until every thread has ended. It reports
// whether parent was cancelled first.
func (r *run) measure(parent context.Context, m *meter, allDone <-chan struct{}) (interrupted bool) {
	ticker := r.clock.NewTicker(r.cfg.Interval)
	defer ticker.Stop()
	var limit, warm, grace <-chan time.Time
	if r.cfg.Time > 0 {
		t := r.clock.NewTimer(r.cfg.Warmup + r.cfg.Time)
		defer t.Stop()
		limit = t.C
	}
	if r.cfg.Warmup > 0 {
		t := r.clock.NewTimer(r.cfg.Warmup)
		defer t.Stop()
		warm = t.C
	}
	stopped := parent.Done()
	for {
		select {
		case <-ticker.C:
			r.closeInterval(m, false, time.Time{})
		case <-warm:
			r.endWarmup(m)
			ticker.Reset(r.cfg.Interval)
			if r.cfg.OnWarmupDone != nil {
				r.cfg.OnWarmupDone()
			}
		case <-limit:
			r.stop.Store(true)
			g := r.clock.NewTimer(grace5s)
			defer g.Stop()
			grace = g.C
		case <-grace:
			r.cancel()
		case <-stopped:
			interrupted = true
			r.stop.Store(true)
			r.cancel()
			stopped = nil // fire once
		case <-allDone:
			return interrupted
		}
	}
}

// endWarmup starts measuring now: what the warm-up did is dropped.
func (r *run) endWarmup(m *meter) {
	r.flush()
	r.sink.Take(nil)
	r.flushConnects()
	r.connSink.Take(nil)
	if r.stmts != nil {
		r.stmts.Reset()
	}
	m.measuring = true
	m.load = startLoad(time.Now())
	m.from = r.clock.Now()
	m.base = r.totals()
	m.prev, m.prevAt = m.base, m.from
}

// closeInterval ends the interval open since m.prevAt with what the
// threads recorded in it: on a tick at the clock's reading once their
// latencies are flushed (not the tick's time, so that a late reporter
// still computes true rates), or at the run's end (last) at end. While
// measuring, it becomes one of the Outcome's intervals and goes to
// OnInterval; at the end, a sliver of an interval (under a tenth of one)
// or one in which no event ended is not an interval of its own, and a
// shorter one goes to OnLastInterval instead. Its latencies count either
// way.
func (r *run) closeInterval(m *meter, last bool, end time.Time) {
	r.flush()
	now := end
	if !last {
		now = r.clock.Now()
	}
	h := r.sink.Take(m.spare)
	cur := r.totals()
	if m.measuring {
		dur := now.Sub(m.prevAt)
		if !last || dur >= r.cfg.Interval/10 && cur.events != m.prev.events {
			iv := r.interval(m.prev, cur, h, dur, now.Sub(m.from))
			iv.Began, iv.Ended = m.prevAt, now
			if last {
				// The threads have all finished by now; show how many ran.
				iv.Threads = len(r.threads)
				if n := len(m.out.Intervals); n > 0 {
					iv.Threads = m.out.Intervals[n-1].Threads
				}
			}
			m.out.Intervals = append(m.out.Intervals, iv)
			iv.Latency = h
			switch {
			case !last || dur >= r.cfg.Interval-r.cfg.Interval/10:
				if r.cfg.OnInterval != nil {
					r.cfg.OnInterval(iv)
				}
			case r.cfg.OnLastInterval != nil:
				r.cfg.OnLastInterval(iv)
			}
		}
		m.cum.Merge(h)
		r.flushConnects()
		m.connCum.Merge(r.connSink.Take(nil))
	}
	m.spare = h
	m.prev, m.prevAt = cur, now
}

// outcome closes the last interval and sums what was measured, warm-up
// excluded, once every thread has ended; the run was interrupted when
// measure said so or ctx ended (the threads may all end before measure
// sees it).
func (r *run) outcome(ctx context.Context, m *meter, c *crew, interrupted bool) *Outcome {
	end := r.clock.Now()
	client := m.load.finish(time.Now())
	if c.loops != nil {
		client.ReplyLag = c.loops.Lag()
	}
	interrupted = interrupted || ctx.Err() != nil
	if m.measuring {
		r.closeInterval(m, true, end)
	} else {
		m.base = r.totals()
	}
	out, base, final := m.out, m.base, r.totals()
	out.Started, out.Measured = m.start, m.from
	out.Elapsed = end.Sub(m.from)
	out.Reads = final.reads - base.reads
	out.Writes = final.writes - base.writes
	out.Others = final.others - base.others
	out.Events = final.events - base.events
	out.Reconnects = final.reconnects - base.reconnects
	out.Availability = Availability{
		ReconnectAttempts: final.attempts - base.attempts,
		ReconnectFailures: final.failures - base.failures,
	}
	if out.Availability.ReconnectFailures > 0 {
		out.Availability.Unavailable, out.Availability.FirstError = r.outages.during(m.from, end)
	}
	out.ConnectMode = r.cfg.ConnectMode
	out.Connects = final.connects - base.connects
	out.ConnectLatency = m.connCum
	if r.stmts != nil {
		for _, t := range r.threads {
			t.stmts.Flush() // every thread has ended
		}
		if m.measuring {
			out.Statements = r.stmts.Outcome()
		}
	}
	out.Errors = map[uint16]int64{}
	for k, n := range final.errorsBy {
		d := n - base.errorsBy[k]
		if d <= 0 {
			continue
		}
		out.Errors[k.code] += d
		if k.stmt >= 0 && k.stmt < len(out.Statements) {
			out.Statements[k.stmt].Errors[k.code] += d
		}
	}
	out.Latency = m.cum
	if q := out.Queries(); q > 0 {
		client.QueryLatency = m.cum.Sum() / time.Duration(q)
	}
	if r.cfg.Rate > 0 {
		for _, iv := range out.Intervals {
			client.QueueLag = max(client.QueueLag, time.Duration(float64(iv.Queue)/r.cfg.Rate*float64(time.Second)))
		}
	}
	out.Client = client
	out.ThreadEvents = make([]int64, len(r.threads))
	out.ThreadTime = make([]time.Duration, len(r.threads))
	for i := range r.threads {
		out.ThreadEvents[i] = final.perThread[i] - base.perThread[i]
		out.ThreadTime[i] = time.Duration(final.busy[i] - base.busy[i])
	}
	if r.sched != nil && !r.deadline.IsZero() {
		out.Unstarted, out.Arrivals = r.sched.drain(minTime(end, r.deadline))
	}
	out.Interrupted = interrupted
	r.fatalMu.Lock()
	out.Err = r.fatalErr
	r.fatalMu.Unlock()
	return out
}
