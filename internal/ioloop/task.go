package ioloop

import (
	"container/heap"
	"context"
	"errors"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

const (
	readable = 1 << iota
	writable
)

// Why a wait ended.
const (
	becameReady = iota
	timedOut
	woken_
)

// Task is one coroutine of a Loop. Its methods are called from the task's
// own code; a Task is not safe for use by other goroutines.
type Task struct {
	l     *Loop
	next  func() (struct{}, bool)
	stop  func()
	yield func(struct{}) bool
	// running is set while the task's code runs in its coroutine; atomic
	// because code outside the task may ask (and must then use poll(2)).
	running atomic.Bool

	// The wait in progress: its number, what it waits for, and why it
	// ended.
	seq     uint64
	waiting bool
	fd      *FD
	want    uint32
	why     int
	readyAt time.Time
	when    time.Time // the wait's deadline
	hidx    int       // index in the loop's timers, -1 when not there

	// Wait and Wake: a wake that came while t was not waiting, and
	// whether t waits for one.
	wakeDue, inWait bool
}

type taskKey struct{}

// With returns ctx carrying t, for the connections dialled under it.
func With(ctx context.Context, t *Task) context.Context {
	return context.WithValue(ctx, taskKey{}, t)
}

// From returns the task ctx carries, or nil.
func From(ctx context.Context) *Task {
	t, _ := ctx.Value(taskKey{}).(*Task)
	return t
}

// Running reports whether t's code is running in its coroutine, where waits
// go through the loop.
func (t *Task) Running() bool { return t != nil && t.running.Load() }

// Idle runs f with t marked as not running, for a task whose code waits on
// something outside its loop (a test that feeds it work over a channel):
// while f runs, t's FDs, used from any goroutine, wait with poll(2).
func (t *Task) Idle(f func()) {
	was := t.running.Swap(false)
	defer t.running.Store(was)
	f()
}

// Go starts body as a new task of t's loop and returns it; call it from
// t's own code. The body's ctx carries the new task.
func (t *Task) Go(ctx context.Context, body func(ctx context.Context)) *Task {
	n := t.l.NewTask()
	t.l.Start(With(ctx, n), n, body)
	return n
}

// Wait parks t until another task of its loop calls Wake, at once if one
// did since the last Wait. Tasks of one loop hand work to each other this
// way with a coroutine switch, no lock and no scheduler.
func (t *Task) Wait() {
	if t.wakeDue {
		t.wakeDue = false
		return
	}
	t.inWait = true
	t.park(nil, 0, time.Time{})
	t.inWait = false
}

// Wake ends t's Wait, or the next one. It must be called from a task of
// t's loop (or before the loop runs).
func (t *Task) Wake() {
	if t.waiting && t.inWait {
		t.why = becameReady
		t.l.ready(t, time.Time{})
		return
	}
	t.wakeDue = true
}

// park yields to the loop until the wait ends, and says why it ended.
func (t *Task) park(f *FD, want uint32, deadline time.Time) int {
	t.seq++
	t.waiting, t.fd, t.want = true, f, want
	t.why = becameReady // unless a timer or a wake from outside says otherwise
	if !deadline.IsZero() {
		t.when = deadline
		heap.Push(&t.l.timers, t)
	}
	t.yield(struct{}{})
	t.fd = nil
	return t.why
}

// Sleep waits for d, or less if ctx ends first; it reports whether the
// whole time passed with ctx alive. Outside the running task it sleeps
// the ordinary way.
func (t *Task) Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 || !t.Running() {
		if d <= 0 {
			return ctx.Err() == nil
		}
		tm := time.NewTimer(d)
		defer tm.Stop()
		select {
		case <-tm.C:
			return true
		case <-ctx.Done():
			return false
		}
	}
	if ctx.Err() != nil {
		return false
	}
	seq := t.seq + 1
	stop := context.AfterFunc(ctx, func() { t.l.external(t, seq) })
	why := t.park(nil, 0, time.Now().Add(d))
	stop()
	return why == timedOut && ctx.Err() == nil
}

// Offload runs f on a goroutine of its own and waits for it, so that a call
// that blocks in a way the loop cannot see (a dial, a name lookup) holds up
// only this task. Outside the running task it just calls f.
func (t *Task) Offload(f func()) {
	if !t.Running() {
		f()
		return
	}
	seq := t.seq + 1
	go func() {
		f()
		t.l.external(t, seq)
	}()
	for t.park(nil, 0, time.Time{}) != woken_ {
	}
}

// FD is a non-blocking descriptor whose waits go through its task's loop.
// Edge-triggered readiness is remembered per FD, so the caller reads or
// writes once it is told the descriptor is ready, and reports with Drained
// when a read or write found it empty or full.
type FD struct {
	fd         int
	t          *Task
	registered bool
	ready      uint32
	hup        bool // the peer hung up or the socket failed: ready for good
}

// NewFD wraps the non-blocking descriptor fd for the task t (nil: every
// wait uses poll(2)).
func NewFD(t *Task, fd int) *FD { return &FD{fd: fd, t: t} }

// Tracked reports whether the loop follows f's readiness, so that a read
// that would find nothing can be skipped: ReadReady is then exact enough
// to wait first.
func (f *FD) Tracked() bool { return f.registered && f.t.running.Load() }

// ReadReady reports whether input may be waiting, as far as the loop knows.
func (f *FD) ReadReady() bool { return f.ready&readable != 0 }

// Drained records that a read (write) found nothing to read (no room):
// the next wait waits for a new edge.
func (f *FD) Drained(write bool) {
	if f.hup {
		return // the next call returns the end of stream or the error
	}
	if write {
		f.ready &^= writable
	} else {
		f.ready &^= readable
	}
}

// Wait waits until f is readable (writable), until deadline (zero: none),
// or until something closes or shuts down the socket. It returns
// ErrTimeout when the deadline passed.
func (f *FD) Wait(write bool, deadline time.Time) error {
	want := uint32(readable)
	if write {
		want = writable
	}
	if !f.t.Running() {
		return pollWait(f.fd, write, deadline)
	}
	if !f.registered {
		if err := f.register(); err != nil {
			return err
		}
	}
	if f.ready&want != 0 {
		return nil
	}
	if f.t.park(f, want, deadline) == timedOut {
		return ErrTimeout
	}
	return nil
}

func (f *FD) register() error {
	l := f.t.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return errors.New("ioloop: the loop has ended")
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET, Fd: int32(f.fd)}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, f.fd, &ev); err != nil {
		return err
	}
	l.fds[int32(f.fd)] = f
	f.registered = true
	return nil
}

// Forget stops following f; call it before closing the descriptor.
func (f *FD) Forget() {
	if !f.registered {
		return
	}
	l := f.t.l
	l.mu.Lock()
	defer l.mu.Unlock()
	f.registered = false
	if l.closed {
		return
	}
	unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, f.fd, nil)
	if l.fds[int32(f.fd)] == f {
		delete(l.fds, int32(f.fd))
	}
}

// pollWait waits with poll(2); the deadline is kept to the millisecond.
func pollWait(fd int, write bool, deadline time.Time) error {
	ev := int16(unix.POLLIN)
	if write {
		ev = unix.POLLOUT
	}
	for {
		ms := -1
		if !deadline.IsZero() {
			d := time.Until(deadline)
			if d <= 0 {
				return ErrTimeout
			}
			ms = int((d + time.Millisecond - 1) / time.Millisecond)
		}
		pfd := []unix.PollFd{{Fd: int32(fd), Events: ev}}
		n, err := unix.Poll(pfd, ms)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return err
		case n == 0:
			continue // the deadline is checked above
		}
		return nil
	}
}
