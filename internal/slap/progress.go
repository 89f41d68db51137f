package slap

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shakedown/shakedown/internal/clock"
	"github.com/shakedown/shakedown/internal/progress"
)

// progressEvery is how often the status line is refreshed; on a terminal
// it is rewritten in place, elsewhere written as a plain line every
// plainEvery, so that a log shows a long test is alive.
const (
	progressEvery = time.Second
	plainEvery    = 10 * time.Second
)

// tracker follows the test for its status line: where it is (level,
// iteration) and how many of all its queries have run, for the pace and
// the time left. Clients count queries with done.Add; the rest is set by
// the session's own goroutine and read by the ticker, under mu.
type tracker struct {
	clk   clock.Clock
	line  *progress.Line
	done  atomic.Int64
	total int64 // queries of the whole test; 0 when not known ahead
	start time.Time

	mu    sync.Mutex
	where string

	last   int64 // queries done at the last tick
	lastAt time.Time
}

// newTracker counts the queries the whole test will run: for every engine,
// concurrency and iteration, each client's limit. The status goes to w,
// in place when live, else a plain line every plainEvery.
func (b *Bench) newTracker(w io.Writer, live bool, clk clock.Clock) *tracker {
	engines := max(len(b.engines), 1)
	var total int64
	for _, c := range b.conc {
		limit := b.limit(c)
		if limit == 0 {
			total = 0
			break
		}
		total += int64(engines) * int64(b.o.Iterations) * int64(limit) * int64(c)
	}
	return &tracker{clk: clk, line: progress.New(w, live, plainEvery, clk.Now), total: total, start: clk.Now()}
}

// at says where the test is now.
func (t *tracker) at(format string, args ...any) {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.where = fmt.Sprintf(format, args...)
	t.mu.Unlock()
}

// count adds one finished query; a nil tracker counts nothing.
func (t *tracker) count() {
	if t != nil {
		t.done.Add(1)
	}
}

// status is the line: "slap: concurrency 72 (1 of 2), iteration 3 of 100:
// 120000 of 500000 queries, 2345 qps, elapsed 0:12, ~1:02 left".
func (t *tracker) status(now time.Time, qps float64) string {
	t.mu.Lock()
	where := t.where
	t.mu.Unlock()
	done := t.done.Load()
	elapsed := now.Sub(t.start)
	s := fmt.Sprintf("slap: %s: %d", where, done)
	if t.total > 0 {
		s += fmt.Sprintf(" of %d", t.total)
	}
	s += fmt.Sprintf(" queries, %.0f qps, elapsed %s", qps, progress.Clock(elapsed))
	if left, ok := progress.Left(done, t.total, elapsed); ok {
		s += ", ~" + progress.Clock(left) + " left"
	}
	return s
}

// run refreshes the line every progressEvery until ctx ends, then takes
// it off the screen.
func (t *tracker) run(ctx context.Context) {
	tick := t.clk.NewTicker(progressEvery)
	defer tick.Stop()
	defer t.line.Clear()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			t.tick(now)
		}
	}
}

// tick shows the status at now, with the pace since the last tick. Only
// run calls it (tests too), so last and lastAt need no lock.
func (t *tracker) tick(now time.Time) {
	if t.lastAt.IsZero() {
		t.lastAt = t.start
	}
	done := t.done.Load()
	qps := 0.0
	if d := now.Sub(t.lastAt).Seconds(); d > 0 {
		qps = float64(done-t.last) / d
	}
	t.last, t.lastAt = done, now
	t.line.Set(t.status(now, qps))
}
