package clock

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// fired returns what c holds now, without waiting.
func fired(c <-chan time.Time) (time.Time, bool) {
	select {
	case v := <-c:
		return v, true
	default:
		return time.Time{}, false
	}
}

func TestFakeTimer(t *testing.T) {
	cases := []struct {
		name    string
		after   time.Duration
		advance time.Duration
		fires   bool
	}{
		{"before", time.Second, 999 * time.Millisecond, false},
		{"at", time.Second, time.Second, true},
		{"past", time.Second, time.Hour, true},
		{"zero", 0, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFake(t0)
			tm := f.NewTimer(tc.after)
			f.Advance(tc.advance)
			v, ok := fired(tm.C)
			if ok != tc.fires {
				t.Fatalf("fired: got %v, want %v", ok, tc.fires)
			}
			if ok && !v.Equal(t0.Add(tc.after)) {
				t.Errorf("fired with %v, want %v", v, t0.Add(tc.after))
			}
			if got := f.Now(); !got.Equal(t0.Add(tc.advance)) {
				t.Errorf("now: got %v, want %v", got, t0.Add(tc.advance))
			}
		})
	}
}

func TestFakeStopAndReset(t *testing.T) {
	f := NewFake(t0)
	tm := f.NewTimer(time.Second)
	if !tm.Stop() {
		t.Error("Stop of a pending timer: got false, want true")
	}
	f.Advance(2 * time.Second)
	if _, ok := fired(tm.C); ok {
		t.Error("a stopped timer fired")
	}
	tm.Reset(time.Second)
	if _, ok := f.Pending(); !ok {
		t.Fatal("a reset timer is not pending")
	}
	if !f.AdvanceToNext() {
		t.Fatal("AdvanceToNext: got false, want the reset timer")
	}
	if v, ok := fired(tm.C); !ok || !v.Equal(t0.Add(3*time.Second)) {
		t.Errorf("reset timer: got %v %v, want it to fire at 3s", v, ok)
	}
	if f.AdvanceToNext() {
		t.Error("AdvanceToNext with nothing pending: got true, want false")
	}
}

func TestFakeTickerDropsMissedTicks(t *testing.T) {
	f := NewFake(t0)
	tk := f.NewTicker(100 * time.Millisecond)
	defer tk.Stop()
	f.Advance(350 * time.Millisecond)
	// Like time.Ticker, a slow reader gets one tick, not a backlog.
	if v, ok := fired(tk.C); !ok || !v.Equal(t0.Add(100*time.Millisecond)) {
		t.Errorf("first tick: got %v %v, want 100ms", v, ok)
	}
	if _, ok := fired(tk.C); ok {
		t.Error("missed ticks were queued")
	}
	f.Advance(50 * time.Millisecond)
	if v, ok := fired(tk.C); !ok || !v.Equal(t0.Add(400*time.Millisecond)) {
		t.Errorf("next tick: got %v %v, want 400ms", v, ok)
	}
}

func TestSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := NewFake(t0)
		done := make(chan bool, 1)
		go func() { done <- Sleep(context.Background(), f, time.Minute) }()
		synctest.Wait() // the sleeper waits on its timer
		f.Advance(time.Minute)
		if !<-done {
			t.Error("Sleep: got false, want true")
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if Sleep(ctx, f, time.Minute) {
			t.Error("Sleep with a cancelled context: got true, want false")
		}
	})
}
