// Package runner drives a workload: it owns the threads, the time and event
// limits, the arrival rate, warm-up, per-interval reporting and the error
// policy. Workloads only say what one event is.
package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shakedown/shakedown/internal/histogram"
	"github.com/shakedown/shakedown/internal/randgen"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/workload"
)

// Config says how to run.
type Config struct {
	Threads int
	// Time is how long to measure; 0 means no limit (Events must then be set).
	Time time.Duration
	// Events caps the number of events over all threads; 0 means no limit.
	Events int64
	// Rate is the target number of events per second over all threads, with
	// Poisson arrivals; 0 runs as fast as the threads can. With a rate,
	// latency counts from each event's intended start.
	Rate float64
	// Warmup runs the load this long before measuring; nothing it does is in
	// the results.
	Warmup time.Duration
	// Interval is how often an Interval is taken (and passed to OnInterval).
	Interval time.Duration
	// Percentile is the latency percentile shown per interval (sysbench's --percentile).
	Percentile float64
	// Ignore lists error codes that are counted and retried instead of ending
	// the run; IgnoreAll ignores every server error.
	Ignore    map[uint16]bool
	IgnoreAll bool
	// Connect opens thread i's connection, counting into counts. The runner
	// closes it. Cancelling ctx must interrupt whatever the connection waits for.
	Connect func(ctx context.Context, thread int, counts *workload.Counts) (*workload.Conn, error)
	// ConnectMode says when threads connect: once (Persistent, the
	// default), for every event, or for every statement. Connect time is
	// measured apart from event latency.
	ConnectMode ConnectMode
	Rand        randgen.Config
	// OnInterval, when set, is called from the reporting goroutine after each
	// interval; it must not block for long.
	OnInterval func(Interval)
	// OnWarmupDone, when set, is called once measurement starts after a warm-up.
	OnWarmupDone func()
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Interval is what happened during one reporting interval.
type Interval struct {
	// At is the end of the interval, measured from the start of measurement.
	At         time.Duration `json:"-"`
	AtS        float64       `json:"t_s"`
	Threads    int           `json:"threads"`
	TPS        float64       `json:"tps"`
	QPS        float64       `json:"qps"`
	ReadQPS    float64       `json:"read_qps"`
	WriteQPS   float64       `json:"write_qps"`
	OtherQPS   float64       `json:"other_qps"`
	LatencyPct float64       `json:"latency_pct_ms"`
	LatencyAvg float64       `json:"latency_avg_ms"`
	LatencyMax float64       `json:"latency_max_ms"`
	// Latency is the interval's latency distribution, set only while
	// OnInterval runs: the runner reuses it afterwards, so a caller that
	// wants it merges it there and then.
	Latency  *histogram.Histogram `json:"-"`
	ErrorsPS float64              `json:"err_ps"`
	ReconnPS float64              `json:"reconn_ps"`
	// ConnPS is connections opened per second (--connect-mode other than
	// persistent, or a workload that connects).
	ConnPS float64 `json:"conn_ps,omitempty"`
	// Queue is how many events were behind schedule at the end of the
	// interval (rate-limited runs only).
	Queue int64 `json:"queue,omitempty"`
}

// Outcome is what a run measured, warm-up excluded.
type Outcome struct {
	Elapsed    time.Duration
	Reads      int64
	Writes     int64
	Others     int64
	Events     int64
	Errors     map[uint16]int64
	Reconnects int64
	Latency    *histogram.Histogram
	// ConnectMode is the Config's; Connects and ConnectLatency cover the
	// connections opened while measuring (not those opened before the
	// clock started).
	ConnectMode    ConnectMode
	Connects       int64
	ConnectLatency *histogram.Histogram
	// Statements holds per-statement figures of a workload that is a
	// workload.StatementNamer, in the order of its names.
	Statements   []workload.StmtOutcome
	Intervals    []Interval
	ThreadEvents []int64
	ThreadTime   []time.Duration
	// Interrupted is set when the context was cancelled before the limits
	// were reached.
	Interrupted bool
	// Err is the error that ended the run early, if any; what was measured
	// until then is still here.
	Err error
}

// Queries is the total number of statements.
func (o *Outcome) Queries() int64 { return o.Reads + o.Writes + o.Others }

// ErrorCount is the total number of errors.
func (o *Outcome) ErrorCount() int64 {
	var n int64
	for _, c := range o.Errors {
		n += c
	}
	return n
}

// ErrNoLimit is returned when neither a time nor an event limit is set.
var ErrNoLimit = errors.New("set --time or --events: a run needs a limit")

// thread is one worker's state that the reporter reads.
type thread struct {
	counts     workload.Counts
	events     atomic.Int64
	reconnects atomic.Int64
	busy       atomic.Int64 // ns spent in events
	rec        *histogram.Recorder
	connects   atomic.Int64
	connRec    *histogram.Recorder
	stmts      *workload.StmtRecorder
	// connNS is the time spent connecting (and, per statement,
	// disconnecting) within the current event, which its latency leaves
	// out. Owned by the thread's goroutine.
	connNS int64

	mu     sync.Mutex
	errors map[uint16]int64
}

func (t *thread) addError(code uint16) {
	t.mu.Lock()
	t.errors[code]++
	t.mu.Unlock()
}

// totals is a sum over threads at one instant.
type totals struct {
	reads, writes, others, events, reconnects, errors, connects int64
	errorsBy                                                    map[uint16]int64
	busy                                                        []int64
	perThread                                                   []int64
}

type run struct {
	cfg     Config
	w       workload.Opser
	now     func() time.Time
	threads []*thread
	sink    *histogram.Sink

	stop     atomic.Bool // no new events
	deadline time.Time   // set before the threads start; zero without --time
	issued   atomic.Int64
	sched    *schedule
	connSink *histogram.Sink
	stmts    *workload.StmtStats
	fatalMu  sync.Mutex
	fatalErr error
	cancel   context.CancelFunc
	active   atomic.Int64
}

// Run runs w under cfg until a limit is reached, ctx is cancelled, or an
// error that is not ignored occurs. It always returns an Outcome with what
// was measured.
func Run(ctx context.Context, cfg Config, w workload.Opser) (*Outcome, error) {
	if cfg.Time <= 0 && cfg.Events <= 0 {
		return nil, ErrNoLimit
	}
	if cfg.Threads < 1 {
		return nil, errors.New("--threads must be >= 1")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.Percentile <= 0 || cfg.Percentile > 100 {
		cfg.Percentile = 95
	}
	r := &run{cfg: cfg, w: w, now: cfg.Now, sink: histogram.NewSink(), connSink: histogram.NewSink()}
	if r.now == nil {
		r.now = time.Now
	}
	if sn, ok := w.(workload.StatementNamer); ok {
		r.stmts = workload.NewStmtStats(sn.StatementNames())
	}
	r.threads = make([]*thread, cfg.Threads)
	for i := range r.threads {
		t := &thread{rec: histogram.NewRecorder(r.sink), connRec: histogram.NewRecorder(r.connSink), errors: map[uint16]int64{}}
		if r.stmts != nil {
			t.stmts = r.stmts.Recorder()
		}
		r.threads[i] = t
	}
	return r.run(ctx)
}

func (r *run) run(parent context.Context) (*Outcome, error) {
	ctx := parent // parent is replaced once it has fired
	// hard is cancelled by the caller (Ctrl-C), by a fatal error, or after
	// the time limit plus a grace period for events in flight.
	hard, cancel := context.WithCancel(parent)
	defer cancel()
	r.cancel = cancel

	// Connect every thread before the clock starts, as sysbench does. With
	// a connection per event there is nothing to keep: each event connects.
	workers := make([]workload.Worker, len(r.threads))
	conns := make([]*workload.Conn, len(r.threads))
	rands := make([]*randgen.Rand, len(r.threads))
	var wg sync.WaitGroup
	errs := make([]error, len(r.threads))
	sem := make(chan struct{}, 64)
	for i := range r.threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			rands[i] = r.cfg.Rand.New(i)
			if r.cfg.ConnectMode == PerEvent {
				return
			}
			conns[i], workers[i], errs[i] = r.connect(hard, i, rands[i])
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
		return nil, firstErr(errs)
	}

	// The connections made before the clock are not part of the figures,
	// and the counts start here, before any thread runs an event.
	r.flushConnects()
	r.connSink.Take(nil)
	base := r.totals()

	start := r.now()
	measureFrom := start
	if r.cfg.Time > 0 {
		r.deadline = start.Add(r.cfg.Warmup + r.cfg.Time)
	}
	if r.cfg.Rate > 0 {
		r.sched = newSchedule(start, r.cfg.Rate, r.cfg.Rand.Seed)
	}
	var done sync.WaitGroup
	for i := range r.threads {
		done.Add(1)
		go func() {
			defer done.Done()
			r.loop(hard, i, conns[i], workers[i], rands[i])
		}()
	}
	allDone := make(chan struct{})
	go func() { done.Wait(); close(allDone) }()

	out := &Outcome{}
	ticker := time.NewTicker(r.cfg.Interval)
	defer ticker.Stop()

	var limit <-chan time.Time
	if r.cfg.Time > 0 {
		t := time.NewTimer(r.cfg.Warmup + r.cfg.Time)
		defer t.Stop()
		limit = t.C
	}
	var warm <-chan time.Time
	if r.cfg.Warmup > 0 {
		t := time.NewTimer(r.cfg.Warmup)
		defer t.Stop()
		warm = t.C
	}
	measuring := warm == nil
	prev := base
	prevAt := start
	cum := histogram.New()
	connCum := histogram.New()
	var spare *histogram.Histogram
	var grace <-chan time.Time
	interrupted := false

	// take closes an interval. The clock is read here, not taken from the
	// ticker, so a late reporter still computes true rates.
	take := func() {
		r.flush()
		now := r.now()
		h := r.sink.Take(spare)
		cur := r.totals()
		if measuring {
			iv := r.interval(prev, cur, h, now.Sub(prevAt), now.Sub(measureFrom))
			out.Intervals = append(out.Intervals, iv)
			if r.cfg.OnInterval != nil {
				iv.Latency = h
				r.cfg.OnInterval(iv)
			}
			cum.Merge(h)
			r.flushConnects()
			connCum.Merge(r.connSink.Take(nil))
		}
		spare = h
		prev, prevAt = cur, now
	}

loop:
	for {
		select {
		case <-ticker.C:
			take()
		case <-warm:
			// Measurement starts now: what the warm-up did is dropped.
			r.flush()
			r.sink.Take(nil)
			r.flushConnects()
			r.connSink.Take(nil)
			if r.stmts != nil {
				r.stmts.Reset()
			}
			measuring = true
			measureFrom = r.now()
			base = r.totals()
			prev, prevAt = base, measureFrom
			ticker.Reset(r.cfg.Interval)
			if r.cfg.OnWarmupDone != nil {
				r.cfg.OnWarmupDone()
			}
		case <-limit:
			r.stop.Store(true)
			grace = time.After(5 * time.Second)
		case <-grace:
			cancel()
		case <-parent.Done():
			interrupted = true
			r.stop.Store(true)
			cancel()
			parent = context.Background() // fire once
		case <-allDone:
			break loop
		}
	}
	end := r.now()
	// Cancelled, the threads may all end before the loop above sees it.
	interrupted = interrupted || ctx.Err() != nil
	if measuring {
		r.flush()
		h := r.sink.Take(nil)
		cur := r.totals()
		if end.Sub(prevAt) >= r.cfg.Interval/10 && cur.events != prev.events {
			iv := r.interval(prev, cur, h, end.Sub(prevAt), end.Sub(measureFrom))
			// The threads have all finished by now; show how many ran.
			iv.Threads = len(r.threads)
			if n := len(out.Intervals); n > 0 {
				iv.Threads = out.Intervals[n-1].Threads
			}
			out.Intervals = append(out.Intervals, iv)
		}
		cum.Merge(h)
		r.flushConnects()
		connCum.Merge(r.connSink.Take(nil))
	} else {
		base = r.totals()
	}
	final := r.totals()
	out.Elapsed = end.Sub(measureFrom)
	out.Reads = final.reads - base.reads
	out.Writes = final.writes - base.writes
	out.Others = final.others - base.others
	out.Events = final.events - base.events
	out.Reconnects = final.reconnects - base.reconnects
	out.ConnectMode = r.cfg.ConnectMode
	out.Connects = final.connects - base.connects
	out.ConnectLatency = connCum
	if r.stmts != nil {
		for _, t := range r.threads {
			t.stmts.Flush() // every thread has ended
		}
		if measuring {
			out.Statements = r.stmts.Outcome()
		}
	}
	out.Errors = map[uint16]int64{}
	for code, n := range final.errorsBy {
		if d := n - base.errorsBy[code]; d > 0 {
			out.Errors[code] = d
		}
	}
	out.Latency = cum
	out.ThreadEvents = make([]int64, len(r.threads))
	out.ThreadTime = make([]time.Duration, len(r.threads))
	for i := range r.threads {
		out.ThreadEvents[i] = final.perThread[i] - base.perThread[i]
		out.ThreadTime[i] = time.Duration(final.busy[i] - base.busy[i])
	}
	out.Interrupted = interrupted
	r.fatalMu.Lock()
	out.Err = r.fatalErr
	r.fatalMu.Unlock()
	return out, nil
}

func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *run) flush() {
	for _, t := range r.threads {
		t.rec.Flush()
	}
}

func (r *run) flushConnects() {
	for _, t := range r.threads {
		t.connRec.Flush()
	}
}

func (r *run) totals() totals {
	s := totals{errorsBy: map[uint16]int64{}, busy: make([]int64, len(r.threads)), perThread: make([]int64, len(r.threads))}
	for i, t := range r.threads {
		s.reads += t.counts.Reads.Load()
		s.writes += t.counts.Writes.Load()
		s.others += t.counts.Others.Load()
		ev := t.events.Load()
		s.events += ev
		s.perThread[i] = ev
		s.busy[i] = t.busy.Load()
		s.reconnects += t.reconnects.Load()
		s.connects += t.connects.Load()
		t.mu.Lock()
		for code, n := range t.errors {
			s.errorsBy[code] += n
			s.errors += n
		}
		t.mu.Unlock()
	}
	return s
}

func (r *run) interval(prev, cur totals, h *histogram.Histogram, dur, at time.Duration) Interval {
	sec := dur.Seconds()
	if sec <= 0 {
		sec = math.SmallestNonzeroFloat64
	}
	rate := func(a, b int64) float64 { return float64(b-a) / sec }
	iv := Interval{
		At:         at,
		AtS:        math.Round(at.Seconds()*1000) / 1000,
		Threads:    int(r.active.Load()),
		TPS:        rate(prev.events, cur.events),
		ReadQPS:    rate(prev.reads, cur.reads),
		WriteQPS:   rate(prev.writes, cur.writes),
		OtherQPS:   rate(prev.others, cur.others),
		LatencyPct: ms(h.Percentile(r.cfg.Percentile)),
		LatencyAvg: ms(h.Mean()),
		LatencyMax: ms(h.Max()),
		ErrorsPS:   rate(prev.errors, cur.errors),
		ReconnPS:   rate(prev.reconnects, cur.reconnects),
		ConnPS:     rate(prev.connects, cur.connects),
	}
	iv.QPS = iv.ReadQPS + iv.WriteQPS + iv.OtherQPS
	if r.sched != nil {
		iv.Queue = r.sched.behind(r.now())
	}
	return iv
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// dial opens a connection for thread i and records how long it took. With
// inEvent set the time is left out of the current event's latency.
func (r *run) dial(ctx context.Context, i int, inEvent bool) (*workload.Conn, error) {
	t := r.threads[i]
	start := r.now()
	c, err := r.cfg.Connect(ctx, i, &t.counts)
	if err != nil {
		return nil, err
	}
	d := r.now().Sub(start)
	t.connRec.Record(d)
	t.connects.Add(1)
	if inEvent {
		t.connNS += int64(d)
	}
	return c, nil
}

// connect opens thread i's connection and its worker. With a connection per
// statement, the connection is one that dials for each statement.
func (r *run) connect(ctx context.Context, i int, rnd *randgen.Rand) (*workload.Conn, workload.Worker, error) {
	var c *workload.Conn
	if r.cfg.ConnectMode == PerStatement {
		t := r.threads[i]
		c = workload.NewPerStatementConn(func(ctx context.Context) (*workload.Conn, error) {
			return r.dial(ctx, i, true)
		}, func(c *workload.Conn) {
			// Disconnecting is left out of the event's latency too.
			start := r.now()
			c.Close()
			t.connNS += int64(r.now().Sub(start))
		})
	} else {
		var err error
		if c, err = r.dial(ctx, i, r.cfg.ConnectMode == PerEvent); err != nil {
			return nil, nil, err
		}
	}
	w, err := r.w.NewWorker(ctx, &workload.WorkerEnv{
		ID:      i,
		Threads: len(r.threads),
		Conn:    c,
		Rand:    rnd,
		Dial:    func(ctx context.Context) (*workload.Conn, error) { return r.dial(ctx, i, false) },
		Stmts:   r.threads[i].stmts,
	})
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("thread %d: %w", i, explainSetup(err))
	}
	return c, w, nil
}

// ErrMissingTables means the workload's tables are not there.
var ErrMissingTables = errors.New("the workload's tables do not exist: run prepare first")

func explainSetup(err error) error {
	if target.Code(err) == 1146 { // ER_NO_SUCH_TABLE
		return fmt.Errorf("%w (%v)", ErrMissingTables, err)
	}
	return err
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
		now := r.now()
		if r.pastDeadline(now) {
			return time.Time{}, false
		}
		return now, true
	}
	at := r.sched.take()
	if r.pastDeadline(at) {
		return time.Time{}, false
	}
	if wait := at.Sub(r.now()); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return time.Time{}, false
		}
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

func (r *run) loop(ctx context.Context, i int, conn *workload.Conn, w workload.Worker, rnd *randgen.Rand) {
	t := r.threads[i]
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	r.active.Add(1)
	defer r.active.Add(-1)
	perEvent := r.cfg.ConnectMode == PerEvent
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
			code := target.Code(err)
			if target.IsConnLost(err) {
				t.addError(code)
				conn.Close()
				conn, w = r.reconnect(ctx, i, rnd)
				if conn == nil {
					return
				}
				t.reconnects.Add(1)
				continue
			}
			if code != 0 && (r.cfg.IgnoreAll || r.cfg.Ignore[code]) {
				t.addError(code)
				continue
			}
			t.addError(code)
			r.fatal(fmt.Errorf("thread %d: %w", i, err))
			return
		}
		lat := r.now().Sub(start)
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
// A lost or refused connection, or an error the run ignores (too many
// connections, say), is counted and tried again after a pause; any other
// error ends the run. It returns nil when it gave up.
func (r *run) eventConnect(ctx context.Context, i int, rnd *randgen.Rand) (*workload.Conn, workload.Worker) {
	t := r.threads[i]
	backoff := time.Millisecond
	for !r.stop.Load() && ctx.Err() == nil {
		c, w, err := r.connect(ctx, i, rnd)
		if err == nil {
			return c, w
		}
		if ctx.Err() != nil {
			return nil, nil
		}
		code := target.Code(err)
		if errors.Is(err, ErrMissingTables) || !target.IsConnLost(err) && !(code != 0 && (r.cfg.IgnoreAll || r.cfg.Ignore[code])) {
			t.addError(code)
			r.fatal(fmt.Errorf("thread %d: %w", i, err))
			return nil, nil
		}
		t.addError(code)
		tm := time.NewTimer(backoff)
		select {
		case <-tm.C:
		case <-ctx.Done():
			tm.Stop()
		}
		if backoff < 100*time.Millisecond {
			backoff *= 2
		}
	}
	return nil, nil
}

// reconnect retries until the connection is back, the run stops, or the
// context ends. It returns nil when it gave up.
func (r *run) reconnect(ctx context.Context, i int, rnd *randgen.Rand) (*workload.Conn, workload.Worker) {
	backoff := 10 * time.Millisecond
	lost := r.now()
	for !r.stop.Load() && ctx.Err() == nil && !r.pastDeadline(r.now()) {
		c, w, err := r.connect(ctx, i, rnd)
		if err == nil {
			return c, w
		}
		if errors.Is(err, ErrMissingTables) {
			r.fatal(err)
			return nil, nil
		}
		// A run limited by --time goes on trying until the time is up; one
		// limited by events alone would wait for ever.
		if r.deadline.IsZero() && r.now().Sub(lost) > reconnectGiveUp {
			r.fatal(fmt.Errorf("thread %d: lost the server and could not reconnect for %s: %w", i, reconnectGiveUp, err))
			return nil, nil
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
		if backoff < 500*time.Millisecond {
			backoff *= 2
		}
	}
	return nil, nil
}

// reconnectGiveUp bounds reconnecting in runs without a time limit.
const reconnectGiveUp = time.Minute

// schedule hands out Poisson arrival times shared by all threads, so events
// queue (and their latency grows) when the threads cannot keep up.
type schedule struct {
	mu    sync.Mutex
	next  time.Time
	mean  float64 // seconds between arrivals
	rnd   *rand.Rand
	taken atomic.Int64
	start time.Time
	rate  float64
}

func newSchedule(start time.Time, rate float64, seed int64) *schedule {
	s := &schedule{next: start, mean: 1 / rate, start: start, rate: rate}
	s.rnd = rand.New(rand.NewPCG(uint64(seed), 0x5eed))
	return s
}

func (s *schedule) take() time.Time {
	s.mu.Lock()
	at := s.next
	s.next = at.Add(time.Duration(s.rnd.ExpFloat64() * s.mean * float64(time.Second)))
	s.mu.Unlock()
	s.taken.Add(1)
	return at
}

// behind estimates how many arrivals are due but not yet taken.
func (s *schedule) behind(now time.Time) int64 {
	due := int64(now.Sub(s.start).Seconds() * s.rate)
	if n := due - s.taken.Load(); n > 0 {
		return n
	}
	return 0
}
