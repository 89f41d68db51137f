package ioloop

import (
	"context"
	"errors"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// pair is a connected pair of non-blocking stream sockets.
func pair(t *testing.T) (a, b int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("socketpair: %v", err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds[0], fds[1]
}

// read reads once from f, waiting through its loop as a connection does.
func read(f *FD, p []byte, deadline time.Time) (int, error) {
	if f.Tracked() && !f.ReadReady() {
		if err := f.Wait(false, deadline); err != nil {
			return 0, err
		}
	}
	for {
		n, err := unix.Read(f.fd, p)
		if errors.Is(err, unix.EAGAIN) {
			f.Drained(false)
			if err := f.Wait(false, deadline); err != nil {
				return 0, err
			}
			continue
		}
		if n < len(p) {
			f.Drained(false)
		}
		return n, err
	}
}

// runLoop runs l on a goroutine and fails the test if it has not ended
// within a deadline.
func runLoop(t *testing.T, l *Loop) {
	t.Helper()
	done := make(chan struct{})
	go func() { l.Run(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the loop did not end within 20s")
	}
}

// TestPingPong runs many tasks on one loop, each trading messages with
// an echo task over its own socket pair: every message comes back.
func TestPingPong(t *testing.T) {
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	const tasks, rounds = 20, 200
	var got atomic.Int64
	for range tasks {
		a, b := pair(t)
		client, echo := l.NewTask(), l.NewTask()
		ctx := context.Background()
		l.Start(ctx, client, func(context.Context) {
			f := NewFD(client, a)
			defer f.Forget()
			buf := make([]byte, 64)
			for i := range rounds {
				if _, err := unix.Write(a, []byte{byte(i)}); err != nil {
					t.Errorf("write: %v", err)
					return
				}
				n, err := read(f, buf, time.Time{})
				if err != nil || n != 1 || buf[0] != byte(i) {
					t.Errorf("round %d: got %d bytes %v (%v), want 1 byte %d", i, n, buf[:n], err, i)
					return
				}
				got.Add(1)
			}
		})
		l.Start(ctx, echo, func(context.Context) {
			f := NewFD(echo, b)
			defer f.Forget()
			buf := make([]byte, 64)
			for range rounds {
				n, err := read(f, buf, time.Time{})
				if err != nil || n == 0 {
					t.Errorf("echo read: %d bytes, %v", n, err)
					return
				}
				unix.Write(b, buf[:n])
			}
		})
	}
	runLoop(t, l)
	if want := int64(tasks * rounds); got.Load() != want {
		t.Fatalf("got %d replies, want %d", got.Load(), want)
	}
	if l.Resumes == 0 {
		t.Fatalf("got 0 resumes counted for the lag, want some")
	}
}

// TestDeadline: a read that nothing answers ends with ErrTimeout at its
// deadline, in the loop and outside it.
func TestDeadline(t *testing.T) {
	a, _ := pair(t)
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	task := l.NewTask()
	check := func(where string, f *FD) {
		start := time.Now()
		_, err := read(f, make([]byte, 8), time.Now().Add(50*time.Millisecond))
		if !errors.Is(err, ErrTimeout) {
			t.Errorf("%s: got %v, want ErrTimeout", where, err)
		}
		if d := time.Since(start); d < 50*time.Millisecond {
			t.Errorf("%s: returned after %v, before the 50ms deadline", where, d)
		}
	}
	check("before the task runs (poll)", NewFD(task, a))
	l.Start(context.Background(), task, func(context.Context) {
		f := NewFD(task, a)
		defer f.Forget()
		check("in the loop", f)
	})
	runLoop(t, l)
}

// TestShutdownWakes: shutting a socket down from another goroutine wakes
// a task waiting on it, as a connection's interrupt does.
func TestShutdownWakes(t *testing.T) {
	a, _ := pair(t)
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	task := l.NewTask()
	var n int
	var rerr error
	l.Start(context.Background(), task, func(context.Context) {
		f := NewFD(task, a)
		defer f.Forget()
		go func() {
			time.Sleep(20 * time.Millisecond) // fault injection: shut down while the task waits
			unix.Shutdown(a, unix.SHUT_RDWR)
		}()
		n, rerr = read(f, make([]byte, 8), time.Time{})
	})
	runLoop(t, l)
	if n != 0 || rerr != nil {
		t.Fatalf("got %d bytes, %v; want 0 bytes (end of stream) and no error", n, rerr)
	}
}

// TestSleep: Sleep in the loop waits its time, and ends early (false) when
// its context ends; other tasks run meanwhile.
func TestSleep(t *testing.T) {
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var slept, cut bool
	var sleptFor time.Duration
	var ticks atomic.Int64
	a, b := l.NewTask(), l.NewTask()
	c := l.NewTask()
	l.Start(ctx, a, func(context.Context) {
		start := time.Now()
		slept = a.Sleep(context.Background(), 30*time.Millisecond)
		sleptFor = time.Since(start)
	})
	l.Start(ctx, b, func(ctx context.Context) {
		cut = !b.Sleep(ctx, time.Hour)
	})
	l.Start(ctx, c, func(context.Context) {
		for range 10 {
			c.Sleep(context.Background(), time.Millisecond)
			ticks.Add(1)
		}
		cancel()
	})
	runLoop(t, l)
	if !slept || sleptFor < 30*time.Millisecond {
		t.Errorf("got slept=%v after %v, want true after >= 30ms", slept, sleptFor)
	}
	if !cut {
		t.Errorf("got the hour-long sleep complete, want it cut short by its context")
	}
	if ticks.Load() != 10 {
		t.Errorf("got %d ticks of the third task, want 10", ticks.Load())
	}
}

// TestOffload: a blocking call offloaded holds up only its own task.
func TestOffload(t *testing.T) {
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var order []string
	a, b := l.NewTask(), l.NewTask()
	l.Start(context.Background(), a, func(context.Context) {
		a.Offload(func() { <-release })
		order = append(order, "offloaded")
	})
	l.Start(context.Background(), b, func(context.Context) {
		order = append(order, "other")
		close(release)
	})
	runLoop(t, l)
	if len(order) != 2 || order[0] != "other" || order[1] != "offloaded" {
		t.Fatalf("got %v, want [other offloaded]", order)
	}
}

// TestGoWaitWake: tasks started from outside with Go, while a Hold keeps
// the loop alive, hand work to tasks they start with Task.Go through Wait
// and Wake, and the loop ends once released and done.
func TestGoWaitWake(t *testing.T) {
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	l.Hold()
	done := make(chan struct{})
	go func() { l.Run(); close(done) }()
	var sum atomic.Int64
	const sessions, steps = 5, 100
	for range sessions {
		ok := l.Go(context.Background(), func(ctx context.Context) {
			self := From(ctx)
			var work, left int
			quit := false
			var peer *Task
			peer = self.Go(ctx, func(context.Context) {
				for {
					peer.Wait()
					if quit {
						return
					}
					sum.Add(int64(work))
					left--
					self.Wake()
				}
			})
			for i := 1; i <= steps; i++ {
				work, left = i, 1
				peer.Wake()
				for left > 0 {
					self.Wait()
				}
			}
			quit = true
			peer.Wake()
		})
		if !ok {
			t.Fatal("Go on a held loop: got false, want the task started")
		}
	}
	l.Release()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the loop did not end within 20s of its release")
	}
	if want := int64(sessions * steps * (steps + 1) / 2); sum.Load() != want {
		t.Fatalf("got sum %d, want %d", sum.Load(), want)
	}
	if l.Go(context.Background(), func(context.Context) {}) {
		t.Fatal("Go on an ended loop: got true, want false")
	}
}

// TestReadyAfterSleep: a wait that ends because its descriptor is ready
// says so, whatever ended the task's wait before (here a sleep that ran
// its course, which once made the next read report a timeout).
func TestReadyAfterSleep(t *testing.T) {
	a, b := pair(t)
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	task := l.NewTask()
	var n int
	var rerr error
	l.Start(context.Background(), task, func(ctx context.Context) {
		f := NewFD(task, a)
		defer f.Forget()
		buf := make([]byte, 8)
		for i := range 3 {
			if !task.Sleep(ctx, time.Millisecond) {
				rerr = errors.New("sleep cut short")
				return
			}
			go unix.Write(b, []byte{byte(i)})
			if n, rerr = read(f, buf, time.Now().Add(10*time.Second)); rerr != nil {
				return
			}
		}
	})
	runLoop(t, l)
	if rerr != nil || n != 1 {
		t.Fatalf("got %d bytes, %v; want 1 byte and no error after each sleep", n, rerr)
	}
}

// TestHeldLoopLetsOthersRun: a loop of a Group that holds its processor
// while it waits, busy with replies that never stop, still lets other
// goroutines run and the garbage collector stop the world, with one
// processor for all of them.
func TestHeldLoopLetsOthersRun(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	g, err := NewGroup(1, Tuning{})
	if err != nil {
		t.Fatal(err)
	}
	// HoldProcessors would give the run a second processor; here the
	// loop holds the only one.
	g[0].hold = true
	if g[0].tune.HoldOff {
		t.Fatal("HoldOff is on; want it off by default")
	}
	var stop atomic.Bool
	capped := false
	// The cap only keeps a failing test from running for ever.
	limit := time.Now().Add(15 * time.Second)
	rounds := pingPong(t, g[0], func() bool {
		if time.Now().After(limit) {
			capped = true
		}
		return capped || stop.Load()
	})
	var wg sync.WaitGroup
	g.Go(&wg)
	runtime.GC()
	other := make(chan struct{})
	go func() { close(other) }()
	<-other
	stop.Store(true)
	wg.Wait()
	if capped {
		t.Fatalf("got the busy loop running to its cap (%d round trips), want the collector and another goroutine to run while it held its processor", rounds.Load())
	}
}

// newGroup makes n loops, closed when the test ends.
func newGroup(t *testing.T, n int) Group {
	t.Helper()
	g, err := NewGroup(n, Tuning{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return g
}

// countYields counts the loops' yields until the test ends.
func countYields(t *testing.T) *atomic.Int64 {
	var n atomic.Int64
	was := yield
	t.Cleanup(func() { yield = was })
	yield = func() {
		n.Add(1)
		runtime.Gosched()
	}
	return &n
}

// pingPong starts two tasks on l that send a byte back and forth over a
// socket pair until done, which the first task asks after every round
// trip; the count is of round trips.
func pingPong(t *testing.T, l *Loop, done func() bool) *atomic.Int64 {
	t.Helper()
	var rounds atomic.Int64
	a, b := pair(t)
	ping, echo := l.NewTask(), l.NewTask()
	ctx := context.Background()
	l.Start(ctx, ping, func(context.Context) {
		f := NewFD(ping, a)
		defer f.Forget()
		buf := make([]byte, 1)
		for !done() {
			unix.Write(a, []byte{1})
			if _, err := read(f, buf, time.Time{}); err != nil {
				t.Errorf("ping read: %v", err)
				break
			}
			rounds.Add(1)
		}
		unix.Write(a, []byte{0}) // tells the echo to end
	})
	l.Start(ctx, echo, func(context.Context) {
		f := NewFD(echo, b)
		defer f.Forget()
		buf := make([]byte, 1)
		for {
			n, err := read(f, buf, time.Time{})
			if err != nil || n == 0 || buf[0] == 0 {
				return
			}
			unix.Write(b, buf[:n])
		}
	})
	return &rounds
}

// TestHeldLoopWithAFreeProcessorYields: a held loop with a processor to
// spare, busy with replies that never stop, still yields its processor
// now and then, so that the runtime never has to preempt it (every 10 ms
// the runtime preempts a goroutine that never yields), but no more often
// than every yieldFree.
func TestHeldLoopWithAFreeProcessorYields(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	yields := countYields(t)
	g := newGroup(t, 1)
	release := g.HoldProcessors(0)
	defer release()
	if !g[0].hold || !g[0].freeProc {
		t.Fatalf("one held loop: hold %v, a free processor %v; want both", g[0].hold, g[0].freeProc)
	}
	const busy = 40 * time.Millisecond
	start := time.Now()
	var took time.Duration
	pingPong(t, g[0], func() bool {
		took = time.Since(start)
		return took >= busy
	})
	var wg sync.WaitGroup
	g.Go(&wg)
	wg.Wait()
	n := yields.Load()
	if n < 1 || n > int64(took/yieldFree)+1 {
		t.Fatalf("busy for %v, the loop yielded %d times; want at least once, and at most once every %v", took, n, yieldFree)
	}
}

// TestWatchWakesAnIdleLoop: a held loop waits with no timeout while a
// processor is free for its watch; once it has waited idle for a tick the
// watch wakes it and it waits the ordinary way, and the reply that comes
// later still reaches its task.
func TestWatchWakesAnIdleLoop(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	g := newGroup(t, 1)
	release := g.HoldProcessors(0)
	defer release()
	if !g[0].watched {
		t.Fatal("a held loop with a free processor: not watched")
	}
	a, b := pair(t)
	task := g[0].NewTask()
	got := make([]byte, 1)
	var readErr error
	g[0].Start(context.Background(), task, func(context.Context) {
		f := NewFD(task, a)
		defer f.Forget()
		_, readErr = read(f, got, time.Now().Add(10*time.Second))
	})
	var wg sync.WaitGroup
	g.Go(&wg)
	time.Sleep(5 * holdMillis * time.Millisecond)
	unix.Write(b, []byte{7})
	wg.Wait()
	if readErr != nil || got[0] != 7 {
		t.Fatalf("the task read %v, %v; want the byte 7 sent after %d ms", got, readErr, 5*holdMillis)
	}
	if g[0].idles < 1 {
		t.Errorf("idle for %d ms, the watch woke the loop %d times; want at least once", 5*holdMillis, g[0].idles)
	}
}

// TestHoldProcessorsRaisesProcs: while groups hold their processors,
// GOMAXPROCS is the most any of them asked (its loops, two at least, and
// one more for the watch where the loops outnumber the CPUs) or what it
// was before, and it goes back as each group lets go. Loops with a
// processor free of them are watched.
func TestHoldProcessorsRaisesProcs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	one, six := newGroup(t, 1), newGroup(t, 6)
	releaseOne := one.HoldProcessors(0)
	defer releaseOne()
	if got := runtime.GOMAXPROCS(0); got != 2 || !one[0].hold || !one[0].freeProc || !one[0].watched {
		t.Fatalf("a held group of one loop: GOMAXPROCS %d, hold %v, a free processor %v, watched %v; want 2, true, true and true",
			got, one[0].hold, one[0].freeProc, one[0].watched)
	}
	releaseSix := six.HoldProcessors(0)
	defer releaseSix()
	want, free := 6, false
	if 6 > runtime.NumCPU() {
		want, free = 7, true
	}
	if got := runtime.GOMAXPROCS(0); got != want || six[0].freeProc != free || six[0].watched != free {
		t.Fatalf("with a held group of 6 loops too, on %d CPUs: GOMAXPROCS %d, a free processor %v, watched %v; want %d, %v and %v",
			runtime.NumCPU(), got, six[0].freeProc, six[0].watched, want, free, free)
	}
	releaseSix()
	releaseSix() // a second call changes nothing
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Fatalf("after the group of 6 let go: GOMAXPROCS %d, want 2 for the group of one", got)
	}
	releaseOne()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("after both let go: GOMAXPROCS %d, want 1 as before", got)
	}
}

// TestHoldProcessorsKeepsSpares: a group held with processors to spare
// raises GOMAXPROCS past its loops, and its loops know that they need
// yield only every yieldFree.
func TestHoldProcessorsKeepsSpares(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	g := newGroup(t, 2)
	release := g.HoldProcessors(1)
	defer release()
	if got := runtime.GOMAXPROCS(0); got != 3 || !g[0].freeProc || !g[1].freeProc {
		t.Fatalf("2 loops and a spare: GOMAXPROCS %d, free processors %v and %v; want 3, true and true", got, g[0].freeProc, g[1].freeProc)
	}
	release()
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Fatalf("after the group let go: GOMAXPROCS %d, want 2 as before", got)
	}
}

// TestHeldLoopsYieldOnlyWithoutAFreeProcessor: loops that keep every
// processor let other goroutines run every yieldEvery; loops with a
// processor to spare know it, since the others run there (they yield only
// every yieldFree: TestHeldLoopWithAFreeProcessorYields).
func TestHeldLoopsYieldOnlyWithoutAFreeProcessor(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	g := newGroup(t, 3)
	release := g.HoldProcessors(0)
	defer release()
	if got := runtime.GOMAXPROCS(0); got != 8 {
		t.Fatalf("GOMAXPROCS %d, want 8 as before (3 loops ask for less)", got)
	}
	for i, l := range g {
		if !l.hold || !l.freeProc {
			t.Errorf("loop %d: hold %v, a free processor %v; want true and true with 3 loops on 8 processors", i, l.hold, l.freeProc)
		}
	}
}

// cpusToBind is the CPUs this thread may run on; it skips the test where
// there is one, with nothing to bind.
func cpusToBind(t *testing.T) unix.CPUSet {
	t.Helper()
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		t.Fatal(err)
	}
	if all.Count() < 2 {
		t.Skip("one CPU: nothing to bind")
	}
	return all
}

// TestBoundLoopsRunOnTheirCPUs: loops bound with BindCPUs run their tasks
// on one CPU each, in turn over the CPUs the process may use, also after
// they have let other goroutines run (and may have resumed on another
// thread); the release gives every thread they ran on its CPUs back.
func TestBoundLoopsRunOnTheirCPUs(t *testing.T) {
	all := cpusToBind(t)
	// The yields move a loop to another thread here, not collections
	// (none stops the world), and with no spare processor they come every
	// yieldEvery.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	yields := countYields(t)
	g := newGroup(t, 2)
	defer g.HoldProcessors(0)()
	unbind := g.BindCPUs()
	defer unbind()
	cpus := []int{g[0].cpu, g[1].cpu}
	if cpus[0] < 0 || cpus[0] == cpus[1] || !all.IsSet(cpus[0]) || !all.IsSet(cpus[1]) {
		t.Fatalf("2 loops bound to CPUs %v; want two different CPUs of %d", cpus, all.Count())
	}
	var mu sync.Mutex
	var checks, wrong int
	tids := map[int]bool{}
	const busy = 30 * time.Millisecond
	for i, l := range g {
		start := time.Now()
		pingPong(t, l, func() bool {
			var set unix.CPUSet
			err := unix.SchedGetaffinity(0, &set)
			mu.Lock()
			defer mu.Unlock()
			checks++
			tids[unix.Gettid()] = true
			if err != nil || set.Count() != 1 || !set.IsSet(cpus[i]) {
				wrong++
			}
			return time.Since(start) >= busy
		})
	}
	var wg sync.WaitGroup
	g.Go(&wg)
	wg.Wait()
	if yields.Load() == 0 {
		t.Fatal("the loops never yielded: nothing moved them, so the binding after a move went untested")
	}
	// The runtime may still preempt a loop (a busy host keeps its thread
	// off the CPU past the runtime's 10 ms), which then runs unbound for
	// up to bindCheck waits: at most 2% of the round trips with the
	// host's 2 CPUs busy compiling. Without the binding after a yield 73%
	// ran unbound.
	if wrong > checks/10 {
		t.Errorf("%d of %d round trips ran on a thread not bound to its loop's CPU alone; want a tenth at most", wrong, checks)
	}
	unbind()
	for tid := range tids {
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(tid, &set); err == nil && set != all {
			t.Errorf("thread %d after the release: %d CPUs, want the %d it had", tid, set.Count(), all.Count())
		}
	}
	if g[0].cpu != -1 || g[0].bound != nil {
		t.Errorf("after the release loop 0 is still bound: CPU %d, threads %v", g[0].cpu, g[0].bound)
	}
}

// TestBindRebindsAThreadAnotherLoopTook: the loops of a group take each
// other's threads when they yield; a loop back on a thread that another
// loop has bound since binds it to its own CPU again, and the release
// gives the thread all its CPUs back.
func TestBindRebindsAThreadAnotherLoopTook(t *testing.T) {
	all := cpusToBind(t)
	g := newGroup(t, 2)
	unbind := g.BindCPUs()
	defer unbind()
	want := []int{g[0].cpu, g[1].cpu, g[0].cpu}
	var got []int
	var restored unix.CPUSet
	done := make(chan struct{})
	go func() { // one thread for the three binds
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for _, l := range []*Loop{g[0], g[1], g[0]} {
			l.bind()
			var set unix.CPUSet
			cpu := -1
			if unix.SchedGetaffinity(0, &set) == nil && set.Count() == 1 {
				for c := 0; cpu < 0; c++ {
					if set.IsSet(c) {
						cpu = c
					}
				}
			}
			got = append(got, cpu)
		}
		unbind()
		unix.SchedGetaffinity(0, &restored)
	}()
	<-done
	if !slices.Equal(got, want) {
		t.Errorf("the thread was bound to CPUs %v by loop 0, loop 1 and loop 0 again; want %v", got, want)
	}
	if restored != all {
		t.Errorf("after the release the thread may run on %d CPUs, want the %d it had", restored.Count(), all.Count())
	}
}
