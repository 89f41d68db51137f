package runner_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/randgen"
	"github.com/shakedown/shakedown/internal/runner"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/wire"
	"github.com/shakedown/shakedown/internal/workload"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// stmtLoad runs one statement per event; failFirst makes the first try of
// every event fail with the given statement instead.
type stmtLoad struct {
	query     string
	failFirst string
	every     int64 // fail on every Nth event only (0 = each)
	n         atomic.Int64
}

type stmtWorker struct {
	l     *stmtLoad
	conn  *workload.Conn
	tried bool
}

func (l *stmtLoad) NewWorker(ctx context.Context, env *workload.WorkerEnv) (workload.Worker, error) {
	return &stmtWorker{l: l, conn: env.Conn}, nil
}

func (w *stmtWorker) Event(ctx context.Context) error {
	// The count is the load's, not the worker's, and counts first tries
	// only, so that every Nth event fails whatever the threads' order: a
	// reconnect makes a new worker, and the event must then succeed.
	if w.l.failFirst != "" && !w.tried {
		if k := w.l.n.Add(1); w.l.every == 0 || k%w.l.every == 0 {
			w.tried = true
			_, err := w.conn.Exec(ctx, w.l.failFirst)
			if err != nil {
				return err
			}
		}
	}
	w.tried = false
	return w.conn.Query(ctx, w.l.query)
}

func config(t *testing.T, threads int) runner.Config {
	t.Helper()
	tg, err := target.Parse(sandboxtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	d := runner.NewDialer(tg, true, wire.Options{Blocking: true})
	t.Cleanup(d.Close)
	return runner.Config{
		Threads:    threads,
		Connect:    d.Connect,
		Percentile: 95,
		Rand:       randgen.Config{Type: "uniform", Seed: 1},
	}
}

func TestEventsLimit(t *testing.T) {
	cfg := config(t, 4)
	cfg.Events = 500
	o, err := runner.Run(context.Background(), cfg, &stmtLoad{query: "SELECT 1"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Events != 500 || o.Reads != 500 || o.Latency.Count() != 500 {
		t.Errorf("got events %d reads %d latencies %d, want 500 each", o.Events, o.Reads, o.Latency.Count())
	}
	var sum int64
	for _, n := range o.ThreadEvents {
		sum += n
	}
	if sum != 500 {
		t.Errorf("per-thread events add up to %d, want 500", sum)
	}
	if o.Err != nil || o.Interrupted {
		t.Errorf("got err %v interrupted %v, want neither", o.Err, o.Interrupted)
	}
}

func TestRateAndIntervals(t *testing.T) {
	cfg := config(t, 2)
	cfg.Time = 2 * time.Second
	cfg.Rate = 200
	cfg.Interval = 500 * time.Millisecond
	var calls atomic.Int64
	cfg.OnInterval = func(runner.Interval) { calls.Add(1) }
	o, err := runner.Run(context.Background(), cfg, &stmtLoad{query: "SELECT 1"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Events < 300 || o.Events > 500 {
		t.Errorf("at 200/s for 2s: got %d events, want about 400", o.Events)
	}
	if n := len(o.Intervals); n < 3 || n > 5 {
		t.Errorf("got %d intervals, want about 4", n)
	}
	if calls.Load() < 3 {
		t.Errorf("OnInterval called %d times, want >= 3", calls.Load())
	}
}

// With a rate the threads cannot keep up with, latency must include the
// time events waited for a free thread: no coordinated omission.
func TestRateLatencyIncludesQueueing(t *testing.T) {
	cfg := config(t, 1)
	cfg.Time = time.Second
	cfg.Rate = 50
	o, err := runner.Run(context.Background(), cfg, &stmtLoad{query: "SELECT SLEEP(0.04)"})
	if err != nil {
		t.Fatal(err)
	}
	// 50/s offered, 25/s served: the queue grows, so late events wait long.
	if p := o.Latency.Percentile(95); p < 200*time.Millisecond {
		t.Errorf("p95 under overload: got %v, want well above the 40ms service time", p)
	}
}

func TestIgnoredErrorsRetryTheEvent(t *testing.T) {
	cfg := config(t, 2)
	cfg.Events = 100
	cfg.Ignore = map[uint16]bool{1213: true}
	load := &stmtLoad{
		query:     "SELECT 1",
		failFirst: "BEGIN NOT ATOMIC SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1213; END",
		every:     2,
	}
	o, err := runner.Run(context.Background(), cfg, load)
	if err != nil {
		t.Fatal(err)
	}
	if o.Err != nil {
		t.Fatalf("ignored error ended the run: %v", o.Err)
	}
	if o.Events != 100 {
		t.Errorf("got %d events, want 100", o.Events)
	}
	if got := o.Errors[1213]; got < 40 || got > 60 {
		t.Errorf("errors[1213]: got %d, want about 50 (every other event)", got)
	}
}

func TestOtherErrorsStopTheRun(t *testing.T) {
	cfg := config(t, 2)
	cfg.Time = 30 * time.Second
	start := time.Now()
	o, err := runner.Run(context.Background(), cfg, &stmtLoad{query: "SELECT * FROM no_such_table_here"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Err == nil || target.Code(o.Err) != 1146 {
		t.Errorf("got err %v, want error 1146", o.Err)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("run went on for %v after a fatal error", time.Since(start))
	}
}

func TestKilledConnectionReconnects(t *testing.T) {
	cfg := config(t, 1)
	cfg.Events = 20
	load := &stmtLoad{query: "SELECT 1", failFirst: "KILL CONNECTION CONNECTION_ID()", every: 5}
	o, err := runner.Run(context.Background(), cfg, load)
	if err != nil {
		t.Fatal(err)
	}
	if o.Err != nil {
		t.Fatalf("run failed: %v", o.Err)
	}
	if o.Events != 20 {
		t.Errorf("got %d events, want 20", o.Events)
	}
	if o.Reconnects < 3 {
		t.Errorf("got %d reconnects, want at least 3", o.Reconnects)
	}
}

func TestCancelStopsWithinASecond(t *testing.T) {
	cfg := config(t, 4)
	cfg.Time = time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	cfg.Interval = 100 * time.Millisecond
	var once atomic.Bool
	var cancelled time.Time
	cfg.OnInterval = func(iv runner.Interval) {
		if iv.AtS >= 0.3 && once.CompareAndSwap(false, true) {
			cancelled = time.Now()
			cancel()
		}
	}
	o, err := runner.Run(ctx, cfg, &stmtLoad{query: "SELECT SLEEP(0.01)"})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(cancelled); d > time.Second {
		t.Errorf("stopped %v after cancel, want < 1s", d)
	}
	if !o.Interrupted || o.Events == 0 {
		t.Errorf("got interrupted %v with %d events, want true and > 0", o.Interrupted, o.Events)
	}
}

func TestWarmupExcluded(t *testing.T) {
	cfg := config(t, 1)
	cfg.Warmup = 500 * time.Millisecond
	cfg.Time = 500 * time.Millisecond
	cfg.Rate = 100
	o, err := runner.Run(context.Background(), cfg, &stmtLoad{query: "SELECT 1"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Elapsed > 900*time.Millisecond {
		t.Errorf("elapsed %v includes the warm-up", o.Elapsed)
	}
	if o.Events > 75 {
		t.Errorf("got %d events in 0.5s at 100/s, want about 50: warm-up counted", o.Events)
	}
}

func TestNoLimit(t *testing.T) {
	_, err := runner.Run(context.Background(), runner.Config{Threads: 1}, &stmtLoad{})
	if !errors.Is(err, runner.ErrNoLimit) {
		t.Errorf("got %v, want ErrNoLimit", err)
	}
}

func TestConnectModesCountConnections(t *testing.T) {
	cases := []struct {
		mode runner.ConnectMode
		want int64
	}{
		{runner.Persistent, 0}, // before the clock: not counted
		{runner.PerEvent, 30},
		{runner.PerStatement, 30}, // one statement an event
	}
	for _, tc := range cases {
		t.Run(tc.mode.String(), func(t *testing.T) {
			cfg := config(t, 2)
			cfg.Events = 30
			cfg.ConnectMode = tc.mode
			o, err := runner.Run(context.Background(), cfg, &stmtLoad{query: "SELECT 1"})
			if err != nil {
				t.Fatal(err)
			}
			if o.Err != nil {
				t.Fatal(o.Err)
			}
			if o.Events != 30 || o.Reads != 30 {
				t.Errorf("got %d events and %d reads, want 30 each", o.Events, o.Reads)
			}
			if o.Connects != tc.want || o.ConnectLatency.Count() != tc.want {
				t.Errorf("got %d connects and %d connect latencies, want %d", o.Connects, o.ConnectLatency.Count(), tc.want)
			}
		})
	}
}

func TestParseConnectMode(t *testing.T) {
	for _, s := range []string{"persistent", "transaction", "query"} {
		m, err := runner.ParseConnectMode(s)
		if err != nil || m.String() != s {
			t.Errorf("ParseConnectMode(%q): got %v, %v, want %s", s, m, err, s)
		}
	}
	if _, err := runner.ParseConnectMode("pooled"); err == nil || !strings.Contains(err.Error(), "--connect-mode must be persistent, transaction or query") {
		t.Errorf("got %v, want an error naming the modes", err)
	}
}
