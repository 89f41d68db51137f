// Package clock gives code that measures or waits a clock it can be handed:
// Real, the system's, and Fake, whose time moves only when a test moves it,
// so that tests of timing logic neither sleep nor depend on the machine's
// speed.
package clock

import (
	"context"
	"time"
)

// Clock tells the time and makes timers and tickers on it.
type Clock interface {
	Now() time.Time
	NewTimer(d time.Duration) *Timer
	NewTicker(d time.Duration) *Ticker
}

// Timer sends the time on C once, when it fires.
type Timer struct {
	C    <-chan time.Time
	real *time.Timer
	fake *waiter
}

// Stop prevents the timer from firing; it reports whether it stopped it.
// No stale value is left in C.
func (t *Timer) Stop() bool {
	if t.real != nil {
		return t.real.Stop()
	}
	return t.fake.stop()
}

// Reset makes the timer fire d from now.
func (t *Timer) Reset(d time.Duration) bool {
	if t.real != nil {
		return t.real.Reset(d)
	}
	return t.fake.reset(d)
}

// Ticker sends the time on C every period.
type Ticker struct {
	C    <-chan time.Time
	real *time.Ticker
	fake *waiter
}

// Stop turns the ticker off.
func (t *Ticker) Stop() {
	if t.real != nil {
		t.real.Stop()
		return
	}
	t.fake.stop()
}

// Reset stops the ticker and restarts it with period d, from now.
func (t *Ticker) Reset(d time.Duration) {
	if t.real != nil {
		t.real.Reset(d)
		return
	}
	t.fake.period = d
	t.fake.reset(d)
}

// Real is the system clock.
type Real struct{}

// Now is time.Now.
func (Real) Now() time.Time { return time.Now() }

// NewTimer is time.NewTimer.
func (Real) NewTimer(d time.Duration) *Timer {
	t := time.NewTimer(d)
	return &Timer{C: t.C, real: t}
}

// NewTicker is time.NewTicker.
func (Real) NewTicker(d time.Duration) *Ticker {
	t := time.NewTicker(d)
	return &Ticker{C: t.C, real: t}
}

// Sleep waits d on c. It returns false when ctx ended first.
func Sleep(ctx context.Context, c Clock, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	if _, real := c.(Real); real {
		if s, ok := ctx.Value(sleeperKey{}).(Sleeper); ok {
			return s.Sleep(ctx, d)
		}
	}
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Sleeper sleeps in place of the system's timers: code that runs as a task
// of an I/O loop must wait in its loop, not on its own.
type Sleeper interface {
	Sleep(ctx context.Context, d time.Duration) bool
}

type sleeperKey struct{}

// WithSleeper returns ctx under which Sleep on the system's clock sleeps
// with s.
func WithSleeper(ctx context.Context, s Sleeper) context.Context {
	return context.WithValue(ctx, sleeperKey{}, s)
}
