package runner_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/client/fakeconn"
	"github.com/shakedown/shakedown/internal/clock"
	"github.com/shakedown/shakedown/internal/randgen"
	"github.com/shakedown/shakedown/internal/runner"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/workload"
)

// simulate runs fn on a fake clock inside a synctest bubble: whenever
// every goroutine of the bubble waits, the clock moves to its next timer.
// A run of minutes takes milliseconds, and its figures are exact.
func simulate(t *testing.T, fn func(ctx context.Context, clk *clock.Fake)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewFake(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
		done := make(chan struct{})
		go func() {
			defer close(done)
			fn(t.Context(), clk)
		}()
		for {
			synctest.Wait()
			select {
			case <-done:
				return
			default:
			}
			if !clk.AdvanceToNext() {
				t.Fatal("every goroutine waits and no timer is pending: deadlock")
			}
		}
	})
}

// oneStatement runs one statement per event.
type oneStatement struct{ query string }

type oneWorker struct {
	conn  workload.Conn
	query string
}

func (l oneStatement) NewWorker(ctx context.Context, env *workload.WorkerEnv) (workload.Worker, error) {
	return oneWorker{env.Conn, l.query}, nil
}

func (w oneWorker) Event(ctx context.Context) error { return w.conn.Query(ctx, w.query) }

// config is a run of threads on srv, timed by clk.
func config(srv *fakeconn.Server, clk clock.Clock, threads int) runner.Config {
	srv.Clock = clk
	return runner.Config{
		Threads:    threads,
		Connect:    srv.Connect,
		Percentile: 95,
		Rand:       randgen.Config{Type: "uniform", Seed: 1},
		Clock:      clk,
	}
}

func TestEventsLimit(t *testing.T) {
	simulate(t, func(ctx context.Context, clk *clock.Fake) {
		srv := &fakeconn.Server{Latency: time.Millisecond}
		cfg := config(srv, clk, 4)
		cfg.Events = 500
		o, err := runner.Run(ctx, cfg, oneStatement{"SELECT 1"})
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
		// 4 threads, 1 ms a statement: 125 ms.
		if o.Elapsed != 125*time.Millisecond {
			t.Errorf("elapsed: got %v, want 125ms", o.Elapsed)
		}
		if n := srv.Open(); n != 0 {
			t.Errorf("%d connections left open, want 0", n)
		}
	})
}

func TestRateAndIntervals(t *testing.T) {
	simulate(t, func(ctx context.Context, clk *clock.Fake) {
		cfg := config(&fakeconn.Server{Latency: time.Millisecond}, clk, 2)
		cfg.Time = 2 * time.Second
		cfg.Rate = 200
		cfg.Interval = 500 * time.Millisecond
		var calls atomic.Int64
		cfg.OnInterval = func(runner.Interval) { calls.Add(1) }
		o, err := runner.Run(ctx, cfg, oneStatement{"SELECT 1"})
		if err != nil {
			t.Fatal(err)
		}
		if o.Events < 340 || o.Events > 460 {
			t.Errorf("at 200/s for 2s: got %d events, want about 400", o.Events)
		}
		if n := len(o.Intervals); n != 4 {
			t.Errorf("got %d intervals, want 4", n)
		}
		// The last interval ends with the last event, before the limit's
		// timer fires (the threads stop themselves at the deadline): short
		// of a whole interval by less than a tenth, it is reported as one.
		if calls.Load() != 4 {
			t.Errorf("OnInterval called %d times, want 4", calls.Load())
		}
		for i, iv := range o.Intervals[:3] {
			if want := float64(i+1) * 0.5; iv.AtS != want {
				t.Errorf("interval %d ends at %gs, want %gs", i, iv.AtS, want)
			}
		}
		if o.Elapsed < 1950*time.Millisecond || o.Elapsed > 2*time.Second {
			t.Errorf("elapsed: got %v, want just under 2s", o.Elapsed)
		}
	})
}

// With many more threads than arrivals in flight, each thread holds an
// arrival it waits for: the one that first takes an arrival past the limit
// must not drop the others', which fall within it.
func TestRateWithManyThreadsRunsEveryArrival(t *testing.T) {
	simulate(t, func(ctx context.Context, clk *clock.Fake) {
		cfg := config(&fakeconn.Server{Latency: time.Millisecond}, clk, 100)
		cfg.Time = 2 * time.Second
		cfg.Rate = 100
		o, err := runner.Run(ctx, cfg, oneStatement{"SELECT 1"})
		if err != nil {
			t.Fatal(err)
		}
		if o.Events < 170 || o.Events > 230 {
			t.Errorf("at 100/s for 2s on 100 threads: got %d events, want about 200", o.Events)
		}
		// 1ms a statement: every arrival due by the limit has run.
		if o.Arrivals != o.Events || o.Unstarted != 0 {
			t.Errorf("got %d arrivals due, %d events run and %d not started, want all run", o.Arrivals, o.Events, o.Unstarted)
		}
	})
}

// With a rate the threads cannot keep up with, latency must include the
// time events waited for a free thread: no coordinated omission.
func TestRateLatencyIncludesQueueing(t *testing.T) {
	simulate(t, func(ctx context.Context, clk *clock.Fake) {
		cfg := config(&fakeconn.Server{Latency: 40 * time.Millisecond}, clk, 1)
		cfg.Time = time.Second
		cfg.Rate = 50
		o, err := runner.Run(ctx, cfg, oneStatement{"SELECT SLEEP(0.04)"})
		if err != nil {
			t.Fatal(err)
		}
		// 50/s offered, 25/s served: the queue grows, so late events wait long.
		if p := o.Latency.Percentile(95); p < 200*time.Millisecond {
			t.Errorf("p95 under overload: got %v, want well above the 40ms service time", p)
		}
		// What fell due and did not start is the backlog: the arrivals
		// less the events that ran (and the one in flight at the end).
		if got := o.Arrivals - o.Events - o.Unstarted; o.Unstarted < 15 || got < 0 || got > 1 {
			t.Errorf("got %d arrivals, %d events, %d not started, want about 25 not started and the rest run", o.Arrivals, o.Events, o.Unstarted)
		}
	})
}

// failEvery fails every nth statement the server receives with err.
func failEvery(n int64, err error) func(context.Context, fakeconn.Statement) (fakeconn.Result, error) {
	var k atomic.Int64
	return func(context.Context, fakeconn.Statement) (fakeconn.Result, error) {
		if k.Add(1)%n == 0 {
			return fakeconn.Result{}, err
		}
		return fakeconn.Result{Rows: true}, nil
	}
}

func TestIgnoredErrorsRetryTheEvent(t *testing.T) {
	simulate(t, func(ctx context.Context, clk *clock.Fake) {
		srv := &fakeconn.Server{Latency: time.Millisecond, Handle: failEvery(2, fakeconn.ServerError(1213, "Deadlock found"))}
		cfg := config(srv, clk, 2)
		cfg.Events = 100
		cfg.Policy = client.Policy{Ignore: map[uint16]bool{1213: true}}
		o, err := runner.Run(ctx, cfg, oneStatement{"SELECT 1"})
		if err != nil {
			t.Fatal(err)
		}
		if o.Err != nil {
			t.Fatalf("ignored error ended the run: %v", o.Err)
		}
		if o.Events != 100 || o.Reads != 100 {
			t.Errorf("got %d events and %d reads, want 100 each", o.Events, o.Reads)
		}
		// Every other statement fails and its event is tried again.
		if got := o.Errors[1213]; got < 99 || got > 101 {
			t.Errorf("errors[1213]: got %d, want about 100", got)
		}
		if o.Reconnects != 0 {
			t.Errorf("got %d reconnects, want 0: an ignored error keeps the connection", o.Reconnects)
		}
	})
}

// A statement that always fails with an ignored error is retried until the
// run's end, and not a moment longer: the run ends at --time, not after the
// grace period for events in flight.
func TestIgnoredErrorsStopAtTheTimeLimit(t *testing.T) {
	simulate(t, func(ctx context.Context, clk *clock.Fake) {
		srv := &fakeconn.Server{Latency: time.Millisecond, Handle: failEvery(1, fakeconn.ServerError(1242, "Subquery returns more than 1 row"))}
		cfg := config(srv, clk, 2)
		cfg.Time = 3 * time.Second
		cfg.Policy = client.Policy{IgnoreAll: true}
		start := clk.Now()
		o, err := runner.Run(ctx, cfg, oneStatement{"SELECT (SELECT 1 UNION SELECT 2)"})
		if err != nil {
			t.Fatal(err)
		}
		if took := clk.Now().Sub(start); took > cfg.Time+10*time.Millisecond {
			t.Errorf("run took %v, want it to end at its time limit of %v", took, cfg.Time)
		}
		if o.Events != 0 || o.Errors[1242] < 5000 {
			t.Errorf("got %d events and %d errors 1242, want no event and about 6000 errors", o.Events, o.Errors[1242])
		}
	})
}

func TestOtherErrorsStopTheRun(t *testing.T) {
	simulate(t, func(ctx context.Context, clk *clock.Fake) {
		srv := &fakeconn.Server{Latency: time.Millisecond, Handle: failEvery(10, fakeconn.ServerError(1146, "Table 'sbtest.nope' doesn't exist"))}
		cfg := config(srv, clk, 2)
		cfg.Time = 30 * time.Second
		o, err := runner.Run(ctx, cfg, oneStatement{"SELECT * FROM nope"})
		if err != nil {
			t.Fatal(err)
		}
		if o.Err == nil || target.Code(o.Err) != 1146 {
			t.Errorf("got err %v, want error 1146", o.Err)
		}
		if o.Elapsed > 10*time.Millisecond {
			t.Errorf("run went on for %v after a fatal error, want it to stop at once", o.Elapsed)
		}
		if o.Errors[1146] != 1 {
			t.Errorf("got errors %v, want 1146 once", o.Errors)
		}
	})
}

func TestLostConnectionReconnects(t *testing.T) {
	simulate(t, func(ctx context.Context, clk *clock.Fake) {
		srv := &fakeconn.Server{Latency: time.Millisecond, Handle: failEvery(5, fakeconn.ErrLost)}
		cfg := config(srv, clk, 1)
		cfg.Events = 20
		o, err := runner.Run(ctx, cfg, oneStatement{"SELECT 1"})
		if err != nil {
			t.Fatal(err)
		}
		if o.Err != nil {
			t.Fatalf("run failed: %v", o.Err)
		}
		if o.Events != 20 {
			t.Errorf("got %d events, want 20", o.Events)
		}
		// 24 statements for 20 events: the 5th, 10th, 15th and 20th fail.
		if o.Reconnects != 4 || o.Errors[target.CRServerLost] != 4 {
			t.Errorf("got %d reconnects and errors %v, want 4 and 2013: 4", o.Reconnects, o.Errors)
		}
		if n := srv.Connections(); n != 5 {
			t.Errorf("the server saw %d connections, want 5", n)
		}
	})
}

func TestCancelStopsAtOnce(t *testing.T) {
	simulate(t, func(ctx context.Context, clk *clock.Fake) {
		cfg := config(&fakeconn.Server{Latency: 10 * time.Millisecond}, clk, 4)
		cfg.Time = time.Minute
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		cfg.Interval = 100 * time.Millisecond
		cfg.OnInterval = func(iv runner.Interval) {
			if iv.AtS >= 0.3 {
				cancel()
			}
		}
		o, err := runner.Run(ctx, cfg, oneStatement{"SELECT SLEEP(0.01)"})
		if err != nil {
			t.Fatal(err)
		}
		if o.Elapsed != 300*time.Millisecond {
			t.Errorf("stopped after %v, want at the cancel (300ms)", o.Elapsed)
		}
		// 4 threads x 30 events of 10 ms; the events in flight at the cancel do not count.
		if !o.Interrupted || o.Events < 116 || o.Events > 120 {
			t.Errorf("got interrupted %v with %d events, want true and about 120", o.Interrupted, o.Events)
		}
	})
}

func TestWarmupExcluded(t *testing.T) {
	simulate(t, func(ctx context.Context, clk *clock.Fake) {
		cfg := config(&fakeconn.Server{Latency: time.Millisecond}, clk, 1)
		cfg.Warmup = 500 * time.Millisecond
		cfg.Time = 500 * time.Millisecond
		cfg.Rate = 100
		warmed := false
		cfg.OnWarmupDone = func() { warmed = true }
		o, err := runner.Run(ctx, cfg, oneStatement{"SELECT 1"})
		if err != nil {
			t.Fatal(err)
		}
		if o.Elapsed < 400*time.Millisecond || o.Elapsed > 500*time.Millisecond {
			t.Errorf("elapsed %v, want just under 500ms: the warm-up is left out", o.Elapsed)
		}
		if o.Events < 30 || o.Events > 75 {
			t.Errorf("got %d events in 0.5s at 100/s, want about 50: warm-up counted", o.Events)
		}
		if !warmed {
			t.Error("OnWarmupDone was not called")
		}
	})
}

func TestNoLimit(t *testing.T) {
	_, err := runner.Run(context.Background(), runner.Config{Threads: 1}, oneStatement{})
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
			simulate(t, func(ctx context.Context, clk *clock.Fake) {
				srv := &fakeconn.Server{Latency: time.Millisecond}
				cfg := config(srv, clk, 2)
				cfg.Events = 30
				cfg.ConnectMode = tc.mode
				o, err := runner.Run(ctx, cfg, oneStatement{"SELECT 1"})
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
				if n := srv.Open(); n != 0 {
					t.Errorf("%d connections left open, want 0", n)
				}
			})
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
