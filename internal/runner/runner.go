// Package runner drives a workload: it owns the threads, the time and event
// limits, the arrival rate, warm-up, per-interval reporting and the error
// policy. Workloads only say what one event is.
package runner

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/clock"
	"github.com/shakedown/shakedown/internal/histogram"
	"github.com/shakedown/shakedown/internal/randgen"
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
	// Policy says which errors are counted and retried instead of ending
	// the run. A lost connection is always reconnected, whatever Policy
	// says: the run goes on through a server restart.
	Policy client.Policy
	// Connect opens thread i's connection, counting into counts. The runner
	// closes it. Cancelling ctx must interrupt whatever the connection waits for.
	Connect func(ctx context.Context, thread int, counts *workload.Counts) (workload.Conn, error)
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
	// Clock is the clock; nil means the system's.
	Clock clock.Clock
	// IO is how the threads wait for replies (client.IOChoice.ForRun).
	// With I/O loops the threads run as tasks of the loops the plan makes
	// (client.IOPlan.Group) instead of a goroutine each, and Connect must
	// dial as the plan says (a client.Dialer given the same plan); that
	// needs the system's clock. Without, IO is not read.
	IO client.IOPlan

	// The fields below make the run one runner's share of a load split
	// over many processes (package segment); their zero values are a run
	// alone.

	// StartAt, when set, is when the load starts: every thread connects
	// first, then the run waits until StartAt, so that runners that
	// connect at different speeds still start together.
	StartAt time.Time
	// ThreadBase numbers this run's threads in the whole load: thread i is
	// the whole's thread ThreadBase+i, and gets that thread's random
	// stream and worker ID, so that the runners together send what one
	// process with every thread would.
	ThreadBase int
	// TotalThreads is the whole load's thread count, which workloads that
	// share key ranges among threads divide by; 0 means Threads.
	TotalThreads int
	// Stream tells the arrival schedules of the runners of one load apart:
	// each draws independent Poisson arrivals at its share of the rate,
	// and independent Poisson streams add up to one at the whole rate.
	Stream uint64
	// OnLastInterval, when set, is called with the shorter interval a run
	// ends with, which OnInterval does not see; its Latency is valid only
	// during the call. A last interval of at least nine tenths of Interval
	// is a whole one whose tick lost its race with the run's end (a run of
	// 1 s at 1-s intervals), and goes to OnInterval like the others.
	OnLastInterval func(Interval)
}

// Interval is what happened during one reporting interval. It is the
// runner's own: the stored form is package result's.
type Interval struct {
	// At is the end of the interval, measured from the start of
	// measurement; AtS is the same in seconds, rounded to milliseconds.
	At         time.Duration
	AtS        float64
	Threads    int
	TPS        float64
	QPS        float64
	ReadQPS    float64
	WriteQPS   float64
	OtherQPS   float64
	LatencyPct float64 // milliseconds, at Config.Percentile
	LatencyAvg float64
	LatencyMax float64
	// Latency is the interval's latency distribution, set only while
	// OnInterval runs: the runner reuses it afterwards, so a caller that
	// wants it merges it there and then.
	Latency  *histogram.Histogram
	ErrorsPS float64
	ReconnPS float64
	// ConnPS is connections opened per second (--connect-mode other than
	// persistent, or a workload that connects).
	ConnPS float64
	// Queue is how many events were behind schedule at the end of the
	// interval (rate-limited runs only).
	Queue int64
	// Began and Ended are the interval's bounds on the run's clock (wall
	// time), so that intervals of runners on different machines can be
	// lined up.
	Began, Ended time.Time
	// The interval's exact counts, which its rates are made of.
	Events, Reads, Writes, Others, Errors, Reconnects int64
}

// Outcome is what a run measured, warm-up excluded.
type Outcome struct {
	// Started is when the load started (warm-up included) and Measured
	// when measuring started, on the run's clock.
	Started, Measured time.Time
	Elapsed           time.Duration
	Reads             int64
	Writes            int64
	Others            int64
	Events            int64
	Errors            map[uint16]int64
	Reconnects        int64
	Latency           *histogram.Histogram
	// ConnectMode is the Config's; Connects and ConnectLatency cover the
	// connections opened while measuring (not those opened before the
	// clock started).
	ConnectMode    ConnectMode
	Connects       int64
	ConnectLatency *histogram.Histogram
	// Statements holds per-statement figures of a workload that is a
	// workload.StatementNamer, in the order of its names. Their errors
	// come from the same count as Errors, which counts every error: an
	// error of a statement is in both.
	Statements   []workload.StmtOutcome
	Intervals    []Interval
	ThreadEvents []int64
	ThreadTime   []time.Duration
	// Availability is what the run saw of the server going away.
	Availability Availability
	// Client is what the client itself spent while measuring, and
	// Client.Bound says whether it limited the run.
	Client ClientLoad
	// Arrivals is, under a rate, how many arrivals of the schedule fell
	// due while measuring (from the end of the warm-up to the time
	// limit): the load actually offered, which with Poisson arrivals
	// differs from Rate times Elapsed by chance.
	Arrivals int64
	// Unstarted is, under a rate with a time limit, how many arrivals
	// fell due before the run ended that no thread started: the backlog
	// at the end, which grows when the threads or the server cannot keep
	// up.
	Unstarted int64
	// Interrupted is set when the context was cancelled before the limits
	// were reached.
	Interrupted bool
	// Err is the error that ended the run early, if any; what was measured
	// until then is still here.
	Err error
}

// Availability is what a run saw, while measuring, of the server going
// away: attempts to open a lost connection (or, with a connection per
// event, to open one after a refused connect) and how many failed, how
// long some thread could not reach the server, and the first failure.
type Availability struct {
	ReconnectAttempts int64
	ReconnectFailures int64
	// Unavailable is the time during which at least one thread had lost
	// its connection and could not open another.
	Unavailable time.Duration
	// FirstError is the first failed attempt's error.
	FirstError error
}

// Degraded reports whether the server could not be reached for a while
// during the run: its figures are not a measurement of the server.
func (o *Outcome) Degraded() bool { return o.Availability.ReconnectFailures > 0 }

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
	attempts   atomic.Int64 // to reconnect, failed or not
	failures   atomic.Int64 // attempts to reconnect that failed
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
	errors map[errKey]int64
}

// errKey counts errors by code and by the statement they are the failure
// of (-1: none), so that the run's totals and the figures per statement are
// one count.
type errKey struct {
	stmt int
	code uint16
}

// addError counts err, the failure of statement stmt (-1: none).
func (t *thread) addError(code uint16, stmt int) {
	t.mu.Lock()
	t.errors[errKey{stmt, code}]++
	t.mu.Unlock()
}

// totals is a sum over threads at one instant.
type totals struct {
	reads, writes, others, events, reconnects, errors, connects int64
	attempts, failures                                          int64
	errorsBy                                                    map[errKey]int64
	busy                                                        []int64
	perThread                                                   []int64
}

type run struct {
	cfg     Config
	w       workload.Opser
	clock   clock.Clock
	policy  client.Policy
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
	outages  outages
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
	r := &run{cfg: cfg, w: w, clock: cfg.Clock, policy: cfg.Policy, sink: histogram.NewSink(), connSink: histogram.NewSink()}
	if r.clock == nil {
		r.clock = clock.Real{}
	}
	r.policy.ReconnectLost = true
	if sn, ok := w.(workload.StatementNamer); ok {
		r.stmts = workload.NewStmtStats(sn.StatementNames())
	}
	r.threads = make([]*thread, cfg.Threads)
	for i := range r.threads {
		t := &thread{rec: histogram.NewRecorder(r.sink), connRec: histogram.NewRecorder(r.connSink), errors: map[errKey]int64{}}
		if r.stmts != nil {
			t.stmts = r.stmts.Recorder()
		}
		r.threads[i] = t
	}
	return r.run(ctx)
}

// waitUntil waits on the run's clock until t; it returns false when ctx
// ended first. A clock that wakes early is waited on again.
func (r *run) waitUntil(ctx context.Context, t time.Time) bool {
	for {
		d := t.Sub(r.clock.Now())
		if d <= 0 {
			return ctx.Err() == nil
		}
		if !clock.Sleep(ctx, r.clock, d) {
			return false
		}
	}
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
	s := totals{errorsBy: map[errKey]int64{}, busy: make([]int64, len(r.threads)), perThread: make([]int64, len(r.threads))}
	for i, t := range r.threads {
		s.reads += t.counts.Reads.Load()
		s.writes += t.counts.Writes.Load()
		s.others += t.counts.Others.Load()
		ev := t.events.Load()
		s.events += ev
		s.perThread[i] = ev
		s.busy[i] = t.busy.Load()
		s.reconnects += t.reconnects.Load()
		s.attempts += t.attempts.Load()
		s.failures += t.failures.Load()
		s.connects += t.connects.Load()
		t.mu.Lock()
		for k, n := range t.errors {
			s.errorsBy[k] += n
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
	iv.Events, iv.Reads, iv.Writes, iv.Others = cur.events-prev.events, cur.reads-prev.reads, cur.writes-prev.writes, cur.others-prev.others
	iv.Errors, iv.Reconnects = cur.errors-prev.errors, cur.reconnects-prev.reconnects
	if r.sched != nil {
		iv.Queue = r.sched.behind(r.clock.Now())
	}
	return iv
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
