package runner_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/client/fakeconn"
	"github.com/shakedown/shakedown/internal/clock"
	"github.com/shakedown/shakedown/internal/runner"
	"github.com/shakedown/shakedown/internal/workload"
)

// idWorkload records the worker IDs and thread counts the runner gives.
type idWorkload struct {
	mu      sync.Mutex
	ids     []int
	threads []int
}

func (l *idWorkload) NewWorker(ctx context.Context, env *workload.WorkerEnv) (workload.Worker, error) {
	l.mu.Lock()
	l.ids = append(l.ids, env.ID)
	l.threads = append(l.threads, env.Threads)
	l.mu.Unlock()
	return oneWorker{env.Conn, "SELECT 1"}, nil
}

// A runner of a split load connects, waits for StartAt, numbers its
// threads as the whole's, and its intervals carry their wall-clock bounds
// and exact counts, which add up to the run's totals.
func TestSplitRunner(t *testing.T) {
	simulate(t, func(ctx context.Context, clk *clock.Fake) {
		srv := &fakeconn.Server{Latency: time.Millisecond}
		cfg := config(srv, clk, 3)
		cfg.Time = 2*time.Second + 300*time.Millisecond
		cfg.StartAt = clk.Now().Add(10 * time.Second)
		cfg.ThreadBase, cfg.TotalThreads, cfg.Stream = 5, 12, 2
		var tail []runner.Interval
		var latencies int64 // in the intervals' histograms
		cfg.OnInterval = func(iv runner.Interval) { latencies += iv.Latency.Count() }
		cfg.OnLastInterval = func(iv runner.Interval) {
			tail = append(tail, iv)
			latencies += iv.Latency.Count()
		}
		wl := &idWorkload{}
		o, err := runner.Run(ctx, cfg, wl)
		if err != nil {
			t.Fatal(err)
		}
		if !o.Started.Equal(cfg.StartAt) || !o.Measured.Equal(cfg.StartAt) {
			t.Errorf("started %v, measured from %v: want both at %v", o.Started, o.Measured, cfg.StartAt)
		}
		got := map[int]bool{}
		for i, id := range wl.ids {
			got[id] = true
			if wl.threads[i] != 12 {
				t.Errorf("worker %d: got Threads %d, want the whole's 12", id, wl.threads[i])
			}
		}
		for _, id := range []int{5, 6, 7} {
			if !got[id] {
				t.Errorf("worker IDs %v: want 5, 6 and 7", wl.ids)
			}
		}
		if len(o.Intervals) != 3 || len(tail) != 1 {
			t.Fatalf("got %d intervals and %d last ones, want 3 and 1", len(o.Intervals), len(tail))
		}
		var events, reads int64
		prevEnd := cfg.StartAt
		for i, iv := range o.Intervals {
			if !iv.Began.Equal(prevEnd) || !iv.Ended.After(iv.Began) {
				t.Errorf("interval %d: %v to %v, want it to begin at %v", i, iv.Began, iv.Ended, prevEnd)
			}
			prevEnd = iv.Ended
			events += iv.Events
			reads += iv.Reads
		}
		if events != o.Events || reads != o.Reads {
			t.Errorf("intervals add up to %d events, %d reads; got totals %d, %d", events, reads, o.Events, o.Reads)
		}
		if last := o.Intervals[2]; tail[0].Events != last.Events {
			t.Errorf("last interval: %d events, OnLastInterval saw %d", last.Events, tail[0].Events)
		}
		// An event's latency may land in the interval before its count
		// does, but every latency is in exactly one interval.
		if latencies != o.Latency.Count() {
			t.Errorf("the intervals' histograms hold %d latencies, the run's %d", latencies, o.Latency.Count())
		}
	})
}

// Cancelled while it waits for its start, a runner measures nothing and
// leaves no connection open.
func TestSplitRunnerCancelledBeforeStart(t *testing.T) {
	simulate(t, func(ctx context.Context, clk *clock.Fake) {
		srv := &fakeconn.Server{Latency: time.Millisecond}
		cfg := config(srv, clk, 2)
		cfg.Time = time.Second
		cfg.StartAt = clk.Now().Add(time.Hour)
		ctx, cancel := context.WithCancel(ctx)
		go func() {
			clock.Sleep(context.Background(), clk, time.Minute)
			cancel()
		}()
		o, err := runner.Run(ctx, cfg, oneStatement{"SELECT 1"})
		if err == nil || o != nil {
			t.Fatalf("got %v, %v; want no outcome and the context's error", o, err)
		}
		if n := srv.Open(); n != 0 {
			t.Errorf("%d connections left open, want 0", n)
		}
	})
}
