package ioloop

import (
	"slices"
	"sync"

	"golang.org/x/sys/unix"
)

// BindCPUs binds each loop of g to one of the CPUs the calling thread may
// run on, in turn, so that every CPU has a loop when g has as many loops
// as there are CPUs. Call it before Go, and the function it returns once
// the loops have ended: that gives every thread a loop bound its CPUs
// back. With one CPU there is nothing to bind.
//
// Why: where the client shares its CPUs with the server, a loop left to
// the scheduler is woken on whichever CPU it last ran, often not the one
// where the server's thread that woke it runs, and that costs an
// interrupt between CPUs (a rescheduling IPI) for a good share of the
// replies; under a hypervisor each one is an exit to it. A loop that stays
// on one CPU draws the server's threads it wakes to that CPU, so their
// replies wake it there. On shared cores bound loops made more point
// selects than loops left free, the server spending less CPU on each, and
// many more read/write statements at a few threads, a few fewer at more
// (docs/PERFORMANCE.md, "Held loops bound to CPUs on shared cores").
//
// A loop is bound through the thread that runs it: the goroutine keeps its
// thread except when it lets other goroutines run (see wait), after which
// the loop binds the thread it resumed on. A loop the runtime preempts
// (the collector stopping the world, or a thread kept off its CPU past
// 10 ms on a busy host) may resume on another thread unawares, so every
// bindCheck waits it checks its thread too. A thread it left stays bound
// until the release, and runs what Go gives it on that CPU meanwhile.
func (g Group) BindCPUs() (release func()) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil || set.Count() < 2 {
		return func() {}
	}
	var cpus []int
	for c := 0; len(cpus) < set.Count(); c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	for i, l := range g {
		l.cpu = cpus[i%len(cpus)]
	}
	return func() {
		boundTo.Lock()
		defer boundTo.Unlock()
		for _, l := range g {
			for _, tid := range l.bound {
				_ = unix.SchedSetaffinity(tid, &set) // a thread that has ended: ESRCH
				delete(boundTo.cpu, tid)
			}
			l.cpu, l.unchecked, l.bound = -1, 0, nil
		}
	}
}

// Place makes g's loops keep their processors while they wait, with spare
// processors more for other goroutines, when hold (HoldProcessors), and
// binds each to a CPU when bind (BindCPUs). Call it before Go, and the
// function it returns once the loops have ended: it undoes both.
func (g Group) Place(hold bool, spare int, bind bool) (release func()) {
	unhold, unbind := func() {}, func() {}
	if hold {
		unhold = g.HoldProcessors(spare)
	}
	if bind {
		unbind = g.BindCPUs()
	}
	return func() { unbind(); unhold() }
}

// bindCheck is how many waits a bound loop makes between checks of its
// thread: a check is a system call (gettid), and one in 16 waits costs
// next to nothing against the wait's own (docs/PERFORMANCE.md).
const bindCheck = 16

// boundTo is the CPU of every thread a loop has bound, by thread: loops
// of a group take each other's threads, and a loop back on a thread it
// bound before must see whether another has bound it since.
var boundTo struct {
	sync.Mutex
	cpu map[int]int
}

// bind binds the thread that runs l to l.cpu, unless it is already. A CPU
// that cannot be had (a cpuset changed since) ends the binding.
func (l *Loop) bind() {
	if l.cpu < 0 {
		return
	}
	l.unchecked = 0
	tid := unix.Gettid()
	boundTo.Lock()
	defer boundTo.Unlock()
	if cpu, ok := boundTo.cpu[tid]; ok && cpu == l.cpu {
		return
	}
	var set unix.CPUSet
	set.Set(l.cpu)
	if err := unix.SchedSetaffinity(tid, &set); err != nil {
		l.cpu = -1
		return
	}
	if boundTo.cpu == nil {
		boundTo.cpu = map[int]int{}
	}
	boundTo.cpu[tid] = l.cpu
	if !slices.Contains(l.bound, tid) {
		l.bound = append(l.bound, tid)
	}
}
