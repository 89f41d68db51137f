package wire

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/ioloop"
)

// A test of the looped mode runs its connection's calls inside a task of
// an I/O loop, as the runner does: loopExec is that task, fed the calls
// one at a time. Calls made outside it (directly on the test's goroutine)
// still work, waiting with poll(2).

type loopExec struct {
	task   *ioloop.Task
	jobs   chan func()
	inside atomic.Bool
}

var execs sync.Map // *testing.T -> *loopExec

// loopFor returns t's loop task, starting it on first use; it ends with
// the test.
func loopFor(t *testing.T) *loopExec {
	t.Helper()
	if x, ok := execs.Load(t); ok {
		return x.(*loopExec)
	}
	l, err := ioloop.New()
	if err != nil {
		t.Fatal(err)
	}
	x := &loopExec{task: l.NewTask(), jobs: make(chan func())}
	l.Start(context.Background(), x.task, func(context.Context) {
		for {
			var job func()
			x.task.Idle(func() { job = <-x.jobs })
			if job == nil {
				return
			}
			x.inside.Store(true)
			job()
			x.inside.Store(false)
		}
	})
	ended := make(chan struct{})
	go func() { l.Run(); close(ended) }()
	execs.Store(t, x)
	t.Cleanup(func() {
		execs.Delete(t)
		close(x.jobs)
		select {
		case <-ended:
		case <-time.After(hangLimit):
			t.Errorf("the test's I/O loop did not end within %v", hangLimit)
		}
	})
	return x
}

// do runs f in the task (at once when already there).
func (x *loopExec) do(f func()) {
	if x.inside.Load() {
		f()
		return
	}
	done := make(chan struct{})
	x.jobs <- func() { defer close(done); f() }
	<-done
}

// dialIn dials as Dial does; in looped mode inside t's loop task, so that
// the connection waits through the loop.
func dialIn(t *testing.T, ctx context.Context, cfg *mysql.Config, opts Options) (*Conn, error) {
	t.Helper()
	if !opts.Looped {
		return Dial(ctx, cfg, opts)
	}
	x := loopFor(t)
	var c *Conn
	var err error
	x.do(func() { c, err = Dial(ioloop.With(ctx, x.task), cfg, opts) })
	return c, err
}
