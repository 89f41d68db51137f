package replay

import (
	"context"
	"sync"
	"time"

	"github.com/shakedown/shakedown/internal/ioloop"
)

// With I/O loops, a session is a task per target on one loop: the
// control's task takes each statement from the session's queue, hands it
// to the candidates' tasks with Wake, runs it, and waits for them with
// Wait. Every hand-off is a coroutine switch on the loop's thread, where
// goroutines took three trips through Go's scheduler per statement.

// startLoops starts the I/O loops, held open for the sessions to come; the
// returned stop lets them end once their sessions have.
func (e *engine) startLoops() (stop func(), err error) {
	if !e.plan.Looped() {
		return func() {}, nil
	}
	// Held loops leave one processor more, for the goroutine that reads
	// the capture and feeds the sessions.
	var release func()
	if e.loops, release, err = e.plan.Group(e.plan.Loops, 1); err != nil {
		return nil, err
	}
	for _, l := range e.loops {
		l.Hold()
	}
	var wg sync.WaitGroup
	e.loops.Go(&wg)
	return func() {
		for _, l := range e.loops {
			l.Release()
		}
		wg.Wait()
		release()
	}, nil
}

// start starts a session: a goroutine, or tasks of the next loop.
func (e *engine) start(ctx context.Context, name string, ch chan *stmt) {
	e.wg.Add(1)
	if e.loops == nil {
		go e.session(ctx, name, ch)
		return
	}
	l := e.loops.Of(e.next)
	e.next++
	if !l.Go(ctx, func(ctx context.Context) { e.loopSession(ctx, name, ch) }) {
		e.wg.Done() // cannot happen while the loop is held
	}
}

// loopPeer is a candidate's task of a session.
type loopPeer struct {
	t    *ioloop.Task
	st   *stmt
	quit bool
}

// loopSession is session on an I/O loop; ctx carries the control's task.
func (e *engine) loopSession(ctx context.Context, name string, ch <-chan *stmt) {
	defer e.wg.Done()
	self := ioloop.From(ctx)
	ctl := &sessionState{e: e, name: name, i: 0}
	defer ctl.close()
	left := 0 // candidates still running the statement
	peers := make([]*loopPeer, len(e.sides)-1)
	for k := range peers {
		p := &loopPeer{}
		peers[k] = p
		s := &sessionState{e: e, name: name, i: k + 1}
		p.t = self.Go(ctx, func(ctx context.Context) {
			defer s.close()
			for {
				p.t.Wait()
				if p.quit {
					return
				}
				p.st.res[s.i] = s.run(ctx, p.st)
				if left--; left == 0 {
					self.Wake()
				}
			}
		})
	}
	defer func() {
		for _, p := range peers {
			p.quit = true
			p.t.Wake()
		}
	}()
	for {
		st, ok := receive(self, ch)
		if !ok {
			return
		}
		if ctx.Err() != nil {
			continue // drain, so that the dispatcher never blocks
		}
		if !st.due.IsZero() {
			if d := time.Until(st.due); d > 0 && !self.Sleep(ctx, d) {
				continue
			}
		}
		if e.sem != nil && !acquire(ctx, self, e.sem) {
			continue
		}
		left = len(peers)
		for _, p := range peers {
			p.st = st
			p.t.Wake()
		}
		st.res[0] = ctl.run(ctx, st)
		for left > 0 {
			self.Wait()
		}
		if e.sem != nil {
			<-e.sem
		}
		if ctx.Err() != nil {
			continue // cut short by the interrupt: not a result
		}
		e.tally.add(st, st.res)
	}
}

// receive takes the session's next statement: at once when one waits, as
// it does while the replay keeps up, else on a goroutine of its own so
// that only this task waits.
func receive(t *ioloop.Task, ch <-chan *stmt) (st *stmt, ok bool) {
	select {
	case st, ok = <-ch:
		return st, ok
	default:
	}
	t.Offload(func() { st, ok = <-ch })
	return st, ok
}

// acquire takes a place under --concurrency, as receive does; false when
// ctx ended first.
func acquire(ctx context.Context, t *ioloop.Task, sem chan struct{}) bool {
	select {
	case sem <- struct{}{}:
		return true
	default:
	}
	got := false
	t.Offload(func() {
		select {
		case sem <- struct{}{}:
			got = true
		case <-ctx.Done():
		}
	})
	return got
}
