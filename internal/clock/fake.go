package clock

import (
	"sort"
	"sync"
	"time"
)

// Fake is a clock whose time moves only by Advance and AdvanceToNext.
// Timers and tickers fire, in time order, as the time passes them. It is
// safe for concurrent use.
//
// A test that runs concurrent code on a Fake moves the time when every
// goroutine waits: inside testing/synctest, after synctest.Wait.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	waiters []*waiter // pending, in no order
}

// NewFake returns a Fake clock set to start.
func NewFake(start time.Time) *Fake { return &Fake{now: start} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer returns a timer that fires when the time has moved d on.
func (f *Fake) NewTimer(d time.Duration) *Timer {
	w := f.add(d, 0)
	return &Timer{C: w.c, fake: w}
}

// NewTicker returns a ticker that fires every d of fake time.
func (f *Fake) NewTicker(d time.Duration) *Ticker {
	if d <= 0 {
		panic("clock: non-positive interval for NewTicker")
	}
	w := f.add(d, d)
	return &Ticker{C: w.c, fake: w}
}

func (f *Fake) add(d, period time.Duration) *waiter {
	w := &waiter{f: f, c: make(chan time.Time, 1), period: period}
	f.mu.Lock()
	w.at = f.now.Add(d)
	f.waiters = append(f.waiters, w)
	f.mu.Unlock()
	if d <= 0 {
		f.Advance(0)
	}
	return w
}

// Advance moves the time d on, firing every timer and tick it passes.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.moveTo(f.now.Add(d))
}

// Pending reports when the earliest timer or ticker fires, if any does.
func (f *Fake) Pending() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.waiters) == 0 {
		return time.Time{}, false
	}
	return f.earliest().at, true
}

// AdvanceToNext moves the time to the earliest pending timer or tick and
// fires it (with any other due then). It reports false, moving nothing,
// when nothing is pending.
func (f *Fake) AdvanceToNext() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.waiters) == 0 {
		return false
	}
	to := f.earliest().at
	if to.Before(f.now) {
		to = f.now
	}
	f.moveTo(to)
	return true
}

func (f *Fake) earliest() *waiter {
	e := f.waiters[0]
	for _, w := range f.waiters[1:] {
		if w.at.Before(e.at) {
			e = w
		}
	}
	return e
}

// moveTo fires what is due up to t, in time order; f.mu is held.
func (f *Fake) moveTo(t time.Time) {
	for {
		sort.Slice(f.waiters, func(i, j int) bool { return f.waiters[i].at.Before(f.waiters[j].at) })
		if len(f.waiters) == 0 || f.waiters[0].at.After(t) {
			break
		}
		w := f.waiters[0]
		if w.at.After(f.now) {
			f.now = w.at
		}
		select {
		case w.c <- f.now:
		default: // a tick nobody took yet: dropped, as time.Ticker does
		}
		if w.period > 0 {
			w.at = w.at.Add(w.period)
			continue
		}
		f.waiters = f.waiters[1:]
	}
	if t.After(f.now) {
		f.now = t
	}
}

// waiter is a pending fake timer or ticker.
type waiter struct {
	f      *Fake
	c      chan time.Time
	at     time.Time
	period time.Duration // tickers
}

func (w *waiter) stop() bool {
	f := w.f
	f.mu.Lock()
	defer f.mu.Unlock()
	found := false
	for i, x := range f.waiters {
		if x == w {
			f.waiters = append(f.waiters[:i], f.waiters[i+1:]...)
			found = true
			break
		}
	}
	select {
	case <-w.c:
	default:
	}
	return found
}

func (w *waiter) reset(d time.Duration) bool {
	was := w.stop()
	f := w.f
	f.mu.Lock()
	w.at = f.now.Add(d)
	f.waiters = append(f.waiters, w)
	if d <= 0 {
		f.moveTo(f.now)
	}
	f.mu.Unlock()
	return was
}
