package runner

import (
	"context"

	"github.com/shakedown/shakedown/internal/clock"
	"github.com/shakedown/shakedown/internal/ioloop"
)

// loopSet is a run's I/O loops and a task per thread, made before the
// threads connect so that their connections join their tasks.
type loopSet struct {
	ioloop.Group
	tasks   []*ioloop.Task
	release func() // of the processors the loops hold and the CPUs they are bound to
}

// newLoopSet makes the loops of a run of threads as cfg's plan says; nil
// for a run without loops.
func newLoopSet(cfg Config, threads int) (*loopSet, error) {
	if !cfg.IO.Looped() {
		return nil, nil
	}
	g, release, err := cfg.IO.Group(threads, 0)
	if err != nil {
		return nil, err
	}
	ls := &loopSet{Group: g, tasks: make([]*ioloop.Task, threads), release: release}
	for i := range ls.tasks {
		ls.tasks[i] = g.Of(i).NewTask()
	}
	return ls, nil
}

// context is ctx for thread i's code: its connections join its task, and
// its pauses (the --rate schedule, back-offs) wait in its loop.
func (ls *loopSet) context(ctx context.Context, i int) context.Context {
	t := ls.tasks[i]
	return clock.WithSleeper(ioloop.With(ctx, t), t)
}

// close releases loops that never ran; nil is a no-op.
func (ls *loopSet) close() {
	if ls != nil {
		ls.Close()
	}
}
