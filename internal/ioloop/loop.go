// Package ioloop runs the synchronous code of many connections on a few
// goroutines, each of which waits on the kernel's readiness interface
// (epoll) for all of its connections at once.
//
// A Task is a function written as blocking code (send a statement, read its
// reply, send the next) whose sockets are FDs. It runs as a coroutine of its
// Loop's goroutine (iter.Pull): when an FD would block, the task yields to
// the loop, and the loop resumes it when epoll reports the descriptor ready,
// its deadline passes or it is woken from outside. A switch between a loop
// and a task is a direct coroutine switch. Go's scheduler, its poller and
// the futex wake-ups they cost per reply are not involved: that hand-off is
// what this package exists to remove, since on a client with cores of its
// own it, not the server, limits how fast replies turn into new statements.
//
// Outside a running task (while a connection is set up before the loop
// starts its task, after the task ended, or on another goroutine) an FD
// waits with poll(2), so the same connection code works everywhere.
//
// A task must not wait on anything but its FDs, Sleep and Offload: while
// it waits on anything else (a channel, a lock held for long, a blocking
// dial), every other task of its loop waits too.
package ioloop

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrTimeout is what a wait cut short by its deadline returns.
var ErrTimeout = errors.New("i/o timeout")

// Loop is one goroutine's set of tasks and the epoll instance they wait on.
type Loop struct {
	epfd    int
	wakefd  int // eventfd: wake-ups from other goroutines
	timerfd int // fires at the earliest timer
	armed   time.Time

	runq   []*Task
	timers timerHeap
	live   int // tasks started and not yet ended
	events []unix.EpollEvent

	// hold: wait for the kernel a while with the processor kept (see
	// wait); heldSince is when the loop last let other goroutines run;
	// freeProc: a processor without a loop is there for them, so the loop
	// lets them run only every yieldFree.
	hold, freeProc bool
	heldSince      time.Time
	// watched: the group's watch (see watch) wakes the loop when it has
	// waited with its processor kept for holdMillis, and asleep is when
	// that wait began (since epoch, odd), 0 outside one, or poked once
	// the watch has woken it; idle: the loop was woken so, and waits the
	// ordinary way next.
	watched, idle bool
	asleep        atomic.Int64
	idles         int // times the watch woke the loop idle (a test reads it)

	// cpu is the CPU the loop's thread is bound to, -1 for none (see
	// Group.BindCPUs); bound is every thread it bound, for the release;
	// unchecked counts the waits since it last checked its thread.
	cpu, unchecked int
	bound          []int

	mu      sync.Mutex
	closed  bool
	fds     map[int32]*FD
	woken   []wake // from other goroutines, guarded by mu
	spare   []wake
	started []started // by Go, guarded by mu
	held    int       // Hold minus Release, guarded by mu

	// Lag is the time from the moment the loop learned that a task could
	// go on (its reply arrived, its timer fired) to the moment the task
	// ran, summed over every resume; Resumes counts them. They say how long
	// replies waited for the client. Read them after Run returns.
	Lag     time.Duration
	Resumes int64

	// tune is the group's tuning (NewGroup): the burst of its events,
	// HoldOff and the watch's switch. Last, so that the fields the loop
	// reads on every wait keep their places.
	tune Tuning
}

type wake struct {
	t   *Task
	seq uint64
}

type started struct {
	ctx  context.Context // the task's, handed over at once
	body func(ctx context.Context)
}

// New makes a loop that follows the rules (a zero Tuning).
func New() (*Loop, error) { return newLoop(Tuning{}) }

func newLoop(t Tuning) (*Loop, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	l := &Loop{cpu: -1, epfd: epfd, wakefd: -1, timerfd: -1, fds: map[int32]*FD{}, events: make([]unix.EpollEvent, t.burst()), tune: t}
	if l.wakefd, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		l.close()
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	if l.timerfd, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC|unix.TFD_NONBLOCK); err != nil {
		l.close()
		return nil, fmt.Errorf("timerfd_create: %w", err)
	}
	for _, fd := range []int{l.wakefd, l.timerfd} {
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
		if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
			l.close()
			return nil, fmt.Errorf("epoll_ctl: %w", err)
		}
	}
	return l, nil
}

func (l *Loop) close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	for _, fd := range []int{l.wakefd, l.timerfd, l.epfd} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// NewTask makes a task of l that has not started: connections may be set
// up for it (their waits use poll(2) until it starts).
func (l *Loop) NewTask() *Task { return &Task{l: l, hidx: -1} }

// Start makes t run body(ctx) once Run runs. ctx should carry t (With), so
// that connections dialled in body find their task.
func (l *Loop) Start(ctx context.Context, t *Task, body func(ctx context.Context)) {
	t.next, t.stop = iter.Pull(func(yield func(struct{}) bool) {
		t.yield = yield
		t.running.Store(true)
		defer t.running.Store(false)
		body(ctx)
	})
	l.live++
	l.runq = append(l.runq, t)
	t.readyAt = time.Time{}
}

// Go starts body as a new task of l from any goroutine, while l runs (or
// before). The body's ctx carries its task. It reports false when the loop
// has ended: Hold keeps it from ending while more may come.
func (l *Loop) Go(ctx context.Context, body func(ctx context.Context)) bool {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return false
	}
	l.started = append(l.started, started{ctx, body})
	l.mu.Unlock()
	l.poke()
	return true
}

// Hold keeps Run going with no task, until as many Releases: for a loop
// that is given its tasks with Go as they come.
func (l *Loop) Hold() {
	l.mu.Lock()
	l.held++
	l.mu.Unlock()
}

// Release undoes one Hold.
func (l *Loop) Release() {
	l.mu.Lock()
	l.held--
	l.mu.Unlock()
	l.poke()
}

func (l *Loop) poke() {
	one := [8]byte{1}
	unix.Write(l.wakefd, one[:])
}

// alive reports whether Run must go on: tasks live, tasks to start, or a
// hold.
func (l *Loop) alive() bool {
	if l.live > 0 {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held > 0 || len(l.started) > 0
}

// Run runs the started tasks until every one has returned, then releases
// the loop's descriptors. A task that panics ends Run with its panic.
func (l *Loop) Run() {
	defer l.close()
	l.bind()
	for l.alive() {
		l.runReady()
		if !l.alive() {
			break
		}
		l.arm()
		n, err := l.wait()
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			panic(fmt.Sprintf("ioloop: epoll_wait: %v", err))
		}
		l.dispatch(l.events[:n])
	}
}

// holdMillis is how long a loop waits with its processor kept before it
// waits the ordinary way (at most, where nothing watches it; at least,
// and at most twice as long, where the watch does): longer than a round
// trip to a busy server, and well under the 10 ms after which the runtime
// preempts a goroutine that keeps its processor. yieldEvery is how long a
// loop keeps its processor before it lets other goroutines run; yieldFree
// the same where a processor has no loop (freeProc).
const (
	holdMillis = 4
	yieldEvery = time.Millisecond
	yieldFree  = 5 * time.Millisecond
)

// yield lets other goroutines run (a test counts the calls).
var yield = runtime.Gosched

// noTimeout is epoll_pwait's timeout of -1: until an event.
const noTimeout = ^uintptr(0)

// epoch is where the loops' asleep times count from; poked is what the
// watch leaves in the asleep of a loop it woke (asleep times are odd).
var epoch = time.Now()

const poked = 2

// watch wakes the loops of g that have waited with their processor kept
// for holdMillis or more, every holdMillis, until stop is closed; they
// then wait the ordinary way. It runs on a processor of its own: where
// every other processor has a loop that keeps it, only a processor left
// idle has a thread that sleeps in the runtime's poller until the next
// timer, so a ticker of its own wakes the watch in time.
//
// Why not a timeout on the loops' waits: a timeout sets a kernel timer and
// cancels it for every reply, which costs more CPU a statement than the
// watch, most where the loops idle between statements (under --rate).
// The watch's ticks wake one thread; a loop that is not idle is never
// woken by it. docs/PERFORMANCE.md has the figures ("Held loops wait with
// no timeout").
func (g Group) watch(stop <-chan struct{}) {
	t := time.NewTicker(holdMillis * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		now := int64(time.Since(epoch))
		for _, l := range g {
			if v := l.asleep.Load(); v&1 != 0 && now-v >= int64(holdMillis*time.Millisecond) && l.asleep.CompareAndSwap(v, poked) {
				l.poke()
			}
		}
	}
}

// wait is epoll_wait. A system call the runtime knows of gives the
// processor (P) away when it blocks for more than about 20 us: the
// runtime's monitor takes it back, wakes another OS thread to look for
// work, and the loop's thread must find a processor again when epoll
// returns. With a reply due every few tens of microseconds that hand-off
// happens per reply and costs more CPU than the loop's own work (futex
// wake-ups, context switches, a scheduler pass). A held loop (see
// Group.HoldProcessors) first waits in a system call the runtime does not
// see, so the processor stays with the loop: until an event where the
// group's watch (Group.watch) wakes it once it has idled for holdMillis,
// else with a timeout of holdMillis. Only a loop that found nothing for
// that long waits the ordinary way. The thread sleeps in the
// kernel either way: no CPU is spent waiting. Other goroutines (timers,
// dials, the sampler) wait for the processor at most yieldEvery plus
// holdMillis where every processor has a loop. Where one has none
// (freeProc) they run there, and the loop yields only every yieldFree: a
// yield hands the loop's goroutine to the scheduler, which wakes a thread
// for the idle processor (a futex call and a context switch), so every
// millisecond would be too often. But never is worse: the runtime's
// monitor preempts a goroutine that has kept its processor for 10 ms with
// a signal, takes the processor away when the signal finds the loop in a
// system call, and then wakes every 20 us for a millisecond or more,
// looking for more to take (docs/PERFORMANCE.md counts its sleeps). The
// runtime's preemption signal interrupts the wait (EINTR) when the garbage
// collector must stop the world.
func (l *Loop) wait() (int, error) {
	if l.cpu >= 0 {
		if l.unchecked++; l.unchecked >= bindCheck {
			l.bind() // after a preemption the loop may be on another thread
		}
	}
	if l.hold && !l.tune.HoldOff {
		now := time.Now()
		every := yieldEvery
		if l.freeProc {
			every = yieldFree
		}
		if l.heldSince.IsZero() {
			l.heldSince = now
		} else if now.Sub(l.heldSince) >= every {
			yield()
			l.heldSince = time.Now()
			l.bind() // the goroutine may resume on another thread
		}
		if l.watched && !l.idle {
			l.asleep.Store(int64(time.Since(epoch)) | 1)
			r, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(l.epfd),
				uintptr(unsafe.Pointer(&l.events[0])), uintptr(len(l.events)), noTimeout, 0, 0)
			if l.asleep.Swap(0) == poked {
				l.idle = true
				l.idles++
			}
			if errno != 0 {
				return 0, errno
			}
			return int(r), nil
		}
		if !l.watched {
			r, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(l.epfd),
				uintptr(unsafe.Pointer(&l.events[0])), uintptr(len(l.events)), holdMillis, 0, 0)
			switch {
			case errno != 0:
				return 0, errno
			case r > 0:
				return int(r), nil
			}
		}
		l.idle = false
		l.heldSince = time.Time{}
	}
	n, err := unix.EpollWait(l.epfd, l.events, -1)
	// A wait long enough for the runtime to take the processor away may
	// end on another thread.
	l.bind()
	return n, err
}

func (l *Loop) runReady() {
	for len(l.runq) > 0 {
		q := l.runq
		l.runq = l.runq[len(q):]
		now := time.Time{}
		for i, t := range q {
			q[i] = nil
			if !t.readyAt.IsZero() {
				if now.IsZero() {
					now = time.Now()
				}
				l.Lag += now.Sub(t.readyAt)
				l.Resumes++
			}
			if _, ok := t.next(); !ok {
				l.live--
			}
		}
		if len(l.runq) == 0 {
			l.runq = q[:0] // reuse the backing array
		}
	}
}

// dispatch marks what the kernel reported and queues the tasks it wakes.
func (l *Loop) dispatch(evs []unix.EpollEvent) {
	var now time.Time
	l.mu.Lock()
	for _, ev := range evs {
		switch int(ev.Fd) {
		case l.wakefd:
			var b [8]byte
			unix.Read(l.wakefd, b[:])
			continue
		case l.timerfd:
			var b [8]byte
			unix.Read(l.timerfd, b[:])
			l.armed = time.Time{}
			continue
		}
		f := l.fds[ev.Fd]
		if f == nil {
			continue
		}
		var got uint32
		if ev.Events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
			got |= readable
		}
		if ev.Events&(unix.EPOLLOUT|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
			got |= writable
		}
		if ev.Events&(unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
			// No edge follows an end of stream or an error: a read or
			// write that returns less must not wait for one.
			f.hup = true
		}
		f.ready |= got
		if t := f.t; t.waiting && t.fd == f && t.want&got != 0 {
			if now.IsZero() {
				now = time.Now()
			}
			l.ready(t, now)
		}
	}
	woken := l.woken
	l.woken = l.spare[:0]
	news := l.started
	l.started = nil
	l.mu.Unlock()
	for _, n := range news {
		t := l.NewTask()
		l.Start(With(n.ctx, t), t, n.body)
	}
	for _, w := range woken {
		if w.t.waiting && w.t.seq == w.seq {
			if now.IsZero() {
				now = time.Now()
			}
			w.t.why = woken_
			l.ready(w.t, now)
		}
	}
	l.spare = woken[:0]
	l.fire()
}

func (l *Loop) ready(t *Task, now time.Time) {
	t.waiting = false
	if t.hidx >= 0 {
		heap.Remove(&l.timers, t.hidx)
	}
	t.readyAt = now
	l.runq = append(l.runq, t)
}

// fire wakes the tasks whose timers are due.
func (l *Loop) fire() {
	if len(l.timers) == 0 {
		return
	}
	now := time.Now()
	for len(l.timers) > 0 && !l.timers[0].when.After(now) {
		t := heap.Pop(&l.timers).(*Task)
		t.why = timedOut
		l.ready(t, t.when)
	}
}

// arm sets the timerfd to the earliest live timer.
func (l *Loop) arm() {
	if len(l.timers) == 0 {
		return // a timer that fires anyway is harmless
	}
	when := l.timers[0].when
	if !l.armed.IsZero() && !when.Before(l.armed) {
		// The timer fires no later than needed; one that fires early
		// finds nothing due and is set again. So a deadline far off
		// (a statement timeout set on every read) costs no system call
		// per read.
		return
	}
	d := time.Until(when)
	if d <= 0 {
		d = time.Nanosecond // fire at once; 0 would disarm
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(d.Nanoseconds())}
	if err := unix.TimerfdSettime(l.timerfd, 0, &spec, nil); err != nil {
		panic(fmt.Sprintf("ioloop: timerfd_settime: %v", err))
	}
	l.armed = when
}

// external wakes t's wait number seq from another goroutine.
func (l *Loop) external(t *Task, seq uint64) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.woken = append(l.woken, wake{t, seq})
	l.mu.Unlock()
	l.poke()
}

// timerHeap holds the tasks whose waits have a deadline, earliest first. A
// task is in it at most once (hidx >= 0), so it never outgrows the tasks.
type timerHeap []*Task

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].when.Before(h[j].when) }
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].hidx, h[j].hidx = i, j
}
func (h *timerHeap) Push(x any) {
	t := x.(*Task)
	t.hidx = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.hidx = -1
	return t
}

// Group is loops run together, each on a goroutine of its own; item i of
// a load goes to loop i mod len, so that every loop drives about as many
// connections as the others.
type Group []*Loop

// NewGroup makes n loops tuned by t (a zero Tuning follows the rules); on
// an error none is left open.
func NewGroup(n int, t Tuning) (Group, error) {
	g := make(Group, 0, n)
	for range n {
		l, err := newLoop(t)
		if err != nil {
			g.Close()
			return nil, err
		}
		g = append(g, l)
	}
	return g, nil
}

// HoldProcessors makes g's loops keep their processor while they wait
// (see Loop.wait). Call it before Go, and the function it returns once the
// loops have ended. A held loop's processor runs nothing else while it
// waits, so for as long as g runs GOMAXPROCS is raised to the loops plus
// spare, and to two at least: each loop has a processor of its own, and
// a single loop leaves one to the run's other goroutines (its timers, the
// sampler). spare keeps processors free of loops for goroutines that must
// keep pace with them (a replay's reader of its capture), where otherwise
// they would run only when a loop yields. The OS threads still share the
// CPUs the process may use: processors above them cost no CPU by
// themselves.
//
// Where a processor is free of loops, a goroutine there wakes the loops
// that have idled (Group.watch), and the loops wait with no timeout. More
// loops than CPUs get one processor more for it. Loops as many as the CPUs
// and no more (one a CPU) keep a processor each and wait with a timeout:
// with many connections each such loop seldom waits, and a processor more
// for the watch cost more statements than the timeouts did
// (docs/PERFORMANCE.md). A Tuning's Watch replaces the rule.
func (g Group) HoldProcessors(spare int) (release func()) {
	var watch Switch
	if len(g) > 0 {
		watch = g[0].tune.Watch
	}
	ask := max(len(g)+spare, 2)
	if ask == len(g) && (len(g) > runtime.NumCPU() || watch == On) {
		ask++
	}
	unraise, n := raiseProcs(ask)
	watched := n > len(g) && watch != Off
	for _, l := range g {
		l.hold, l.freeProc, l.watched = true, n > len(g), watched
	}
	if !watched {
		return unraise
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		g.watch(stop)
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(stop)
			<-done
			unraise()
		})
	}
}

// procs is what the groups that hold their processors asked of
// GOMAXPROCS: it is the largest of their asks and of what it was before
// the first, and goes back to that when the last one ends.
var procs struct {
	sync.Mutex
	before int
	asks   []int
}

// raiseProcs asks for n processors, and says how many the asker may count
// on until it releases them: n, or more where GOMAXPROCS was more before.
func raiseProcs(n int) (func(), int) {
	procs.Lock()
	defer procs.Unlock()
	if len(procs.asks) == 0 {
		procs.before = runtime.GOMAXPROCS(0)
	}
	procs.asks = append(procs.asks, n)
	setProcs()
	var once sync.Once
	return func() {
		once.Do(func() {
			procs.Lock()
			defer procs.Unlock()
			i := slices.Index(procs.asks, n)
			procs.asks = slices.Delete(procs.asks, i, i+1)
			setProcs()
		})
	}, max(n, procs.before)
}

func setProcs() {
	n := procs.before
	for _, a := range procs.asks {
		n = max(n, a)
	}
	if runtime.GOMAXPROCS(0) != n {
		runtime.GOMAXPROCS(n)
	}
}

// Of is the loop of item i.
func (g Group) Of(i int) *Loop { return g[i%len(g)] }

// Go runs every loop on a goroutine of its own, counted in wg.
func (g Group) Go(wg *sync.WaitGroup) {
	for _, l := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.Run()
		}()
	}
}

// Close releases loops that never ran: with no task and no hold, Run
// returns at once, closing the loop.
func (g Group) Close() {
	for _, l := range g {
		l.Run()
	}
}

// Lag is the mean of the loops' Lag over all their resumes; valid once
// they have ended.
func (g Group) Lag() time.Duration {
	var sum time.Duration
	var n int64
	for _, l := range g {
		sum += l.Lag
		n += l.Resumes
	}
	if n == 0 {
		return 0
	}
	return sum / time.Duration(n)
}

// Spread runs body(ctx, i) for every i in [0, n) as tasks spread evenly
// over g's loops, which have not run, each loop on a goroutine of its own,
// and returns when every body has. Each body's ctx carries its task. A
// group that holds its processors or is bound to CPUs is placed first
// (Place) and released after.
func (g Group) Spread(ctx context.Context, n int, body func(ctx context.Context, i int)) {
	for i := range n {
		l := g.Of(i)
		t := l.NewTask()
		l.Start(With(ctx, t), t, func(ctx context.Context) { body(ctx, i) })
	}
	var wg sync.WaitGroup
	g.Go(&wg)
	wg.Wait()
}
