package runner

import (
	"context"
	"sync"
	"time"

	"github.com/shakedown/shakedown/internal/clock"
	"github.com/shakedown/shakedown/internal/ioloop"
)

// loopSet is a run's I/O loops: thread i is a task of loop i mod n, so
// that every loop drives about the same number of connections.
type loopSet struct {
	loops []*ioloop.Loop
	tasks []*ioloop.Task
}

func newLoopSet(n, threads int) (*loopSet, error) {
	n = min(n, threads)
	ls := &loopSet{tasks: make([]*ioloop.Task, threads)}
	for range n {
		l, err := ioloop.New()
		if err != nil {
			ls.close()
			return nil, err
		}
		ls.loops = append(ls.loops, l)
	}
	for i := range ls.tasks {
		ls.tasks[i] = ls.of(i).NewTask()
	}
	return ls, nil
}

func (ls *loopSet) of(i int) *ioloop.Loop { return ls.loops[i%len(ls.loops)] }

// context is ctx for thread i's code: its connections join its task, and
// its pauses (the --rate schedule, back-offs) wait in its loop.
func (ls *loopSet) context(ctx context.Context, i int) context.Context {
	t := ls.tasks[i]
	return clock.WithSleeper(ioloop.With(ctx, t), t)
}

// run runs every loop on a goroutine of its own, counting them in done.
func (ls *loopSet) run(done *sync.WaitGroup) {
	for _, l := range ls.loops {
		done.Add(1)
		go func() {
			defer done.Done()
			l.Run()
		}()
	}
}

// close releases loops that never ran; nil is a no-op.
func (ls *loopSet) close() {
	if ls == nil {
		return
	}
	for _, l := range ls.loops {
		l.Run() // with no task started it returns at once, closing the loop
	}
}

// lag is the mean time from a reply's arrival (or a due start under
// --rate) to the moment its thread ran again, over every loop; valid once
// the loops have ended.
func (ls *loopSet) lag() (time.Duration, int64) {
	var sum time.Duration
	var n int64
	for _, l := range ls.loops {
		sum += l.Lag
		n += l.Resumes
	}
	if n == 0 {
		return 0, 0
	}
	return sum / time.Duration(n), n
}
