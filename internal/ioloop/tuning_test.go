package ioloop

import (
	"runtime"
	"testing"
)

// TestTuning: a group's tuning sizes its loops' waits (Burst), replaces
// the rule of its watch (Watch), and lets held loops wait the ordinary way
// (HoldOff); the zero tuning is the rules.
func TestTuning(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, tc := range []struct {
		name    string
		tune    Tuning
		burst   int
		watched bool
	}{
		{"the rules", Tuning{}, defaultBurst, true}, // one loop, a processor to spare
		{"a burst", Tuning{Burst: 32}, 32, true},
		{"not watched", Tuning{Watch: Off}, defaultBurst, false},
		{"held loops that wait the ordinary way", Tuning{HoldOff: true}, defaultBurst, true},
	} {
		g, err := NewGroup(1, tc.tune)
		if err != nil {
			t.Fatal(err)
		}
		release := g.HoldProcessors(0)
		l := g[0]
		if len(l.events) != tc.burst || l.watched != tc.watched || !l.hold || l.tune.HoldOff != tc.tune.HoldOff {
			t.Errorf("%s: got a burst of %d, watched %v, hold %v, hold off %v; want %d, %v, true, %v",
				tc.name, len(l.events), l.watched, l.hold, l.tune.HoldOff, tc.burst, tc.watched, tc.tune.HoldOff)
		}
		release()
		g.Close()
	}
	// Loops as many as the CPUs are watched only when the tuning says so.
	n := runtime.NumCPU()
	for _, w := range []Switch{ByRule, On} {
		g, err := NewGroup(n, Tuning{Watch: w})
		if err != nil {
			t.Fatal(err)
		}
		release := g.HoldProcessors(0)
		if got, want := g[0].watched, w == On || n == 1; got != want {
			t.Errorf("%d loops on %d CPUs, watch %q: got watched %v, want %v", n, n, w, got, want)
		}
		release()
		g.Close()
	}
}
