package client

import (
	"fmt"
	"net"
	"runtime"
	"testing"

	"github.com/shakedown/shakedown/internal/ioloop"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/wire"
)

func TestIOFor(t *testing.T) {
	if CheckIO("sometimes") == nil || CheckIO("auto") != nil {
		t.Error("CheckIO: want auto accepted and sometimes errRefused")
	}
	if !IOFor("blocking", 1<<20, false).Blocking || IOFor("polled", 1, true).Blocking {
		t.Error("IOFor: an explicit mode must win over the thread count")
	}
	if !IOFor("auto", 1, false).Looped || !IOFor("auto", 1<<20, false).Looped || !IOFor("loop", 1, true).Looped {
		t.Error("IOFor auto and loop: want I/O loops at any thread count on cores of the client's own")
	}
	if !IOFor("auto", 1, true).Blocking || !IOFor("auto", 1<<20, true).Looped {
		t.Error("IOFor auto on shared cores: want blocking for a few threads per core and loops for very many")
	}
}

// TestLoopsFor: one loop per processor, except held loops on cores shared
// with the server, up to 16 threads a processor: one for every four
// threads, or one a thread for a read-only workload up to 8 a processor.
func TestLoopsFor(t *testing.T) {
	p := runtime.GOMAXPROCS(0)
	loop := wire.Options{Looped: true}
	for _, tc := range []struct {
		io         wire.Options
		threads    int
		heldShared bool
		readOnly   bool
		count      int // IOTuning.Loops, the benchmark's knob that replaces the rule
		want       int
	}{
		{wire.Options{Blocking: true}, 16, true, false, 0, 0},
		{wire.Options{Blocking: true}, 16, true, true, 0, 0},
		{wire.Options{}, 16, false, false, 0, 0},
		{loop, 16, false, false, 0, p},
		{loop, 16, false, true, 0, p},
		{loop, 1 << 20, false, false, 0, p},
		{loop, 1, true, false, 0, p},
		{loop, 1, true, true, 0, p},
		{loop, 4 * p, true, false, 0, p},
		{loop, 4 * p, true, true, 0, 4 * p},
		{loop, 8 * p, true, false, 0, 2 * p},
		{loop, 8 * p, true, true, 0, 8 * p},
		{loop, 8*p + 4, true, true, 0, 2*p + 1},
		{loop, 16 * p, true, false, 0, 4 * p},
		{loop, 16 * p, true, true, 0, 4 * p},
		{loop, 16*p + 1, true, false, 0, p},
		{loop, 1 << 20, true, true, 0, p},
		{wire.Options{Blocking: true}, 16, true, false, 6, 0},
		{loop, 16, true, false, 6, 6},
		{loop, 16, true, true, 6, 6},
		{loop, 1 << 20, false, false, 6, 6},
		{loop, 4, false, false, 6, 4}, // up to one loop a thread
		{loop, 0, false, false, 6, 1},
	} {
		if got := LoopsFor(tc.io, tc.threads, tc.heldShared, tc.readOnly, tc.count); got != tc.want {
			t.Errorf("count %d: LoopsFor(%+v, %d threads, held on shared cores %v, read-only %v) = %d, want %d", tc.count, tc.io, tc.threads, tc.heldShared, tc.readOnly, got, tc.want)
		}
	}
}

// TestHoldsProcessors: on one processor auto's loops hold only for a single
// thread; never against a server in this process; loop always holds.
func TestHoldsProcessors(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, tc := range []struct {
		mode      string
		inProcess bool
		threads   int
		want      bool
	}{
		{"auto", false, 1, true},
		{"auto", false, 2, false},
		{"auto", false, 16, false},
		{"auto", true, 1, false},
		{"loop", true, 16, true},
	} {
		if got := HoldsProcessors(tc.mode, tc.inProcess, tc.threads); got != tc.want {
			t.Errorf("one processor: HoldsProcessors(%s, in process %v, %d threads) = %v, want %v", tc.mode, tc.inProcess, tc.threads, got, tc.want)
		}
	}
	runtime.GOMAXPROCS(2)
	if !HoldsProcessors("auto", false, 16) {
		t.Error("two processors: want auto's loops of 16 threads to hold")
	}
}

// hereAndAway are targets of a server in this process (a listener of the
// test's, closed when it ends) and of one on another host.
func hereAndAway(t *testing.T) (here, away *target.Target) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	if here, err = target.Parse(fmt.Sprintf("mysql://u@127.0.0.1:%d/db", ln.Addr().(*net.TCPAddr).Port)); err != nil {
		t.Fatal(err)
	}
	if away, err = target.Parse("mysql://u@192.0.2.1:3306/db"); err != nil {
		t.Fatal(err)
	}
	return here, away
}

// TestForRun: auto's loops hold their processor except against a server in
// this very process, whose processors they would take; there the choice is
// the one for shared cores.
func TestForRun(t *testing.T) {
	here, away := hereAndAway(t)
	if !InProcess(here) || InProcess(away) {
		t.Fatalf("InProcess: got %v for this process's listener and %v for another host, want true and false", InProcess(here), InProcess(away))
	}
	several := runtime.GOMAXPROCS(0) > 1
	for _, tc := range []struct {
		name          string
		mode          string
		threads       int
		tgt           *target.Target
		looped, block bool
		hold          bool
	}{
		{"auto, another host", "auto", 16, away, true, false, several},
		{"auto, another host, one thread", "auto", 1, away, true, false, true},
		{"auto, this process, few threads", "auto", 1, here, false, true, false},
		{"auto, this process, very many threads", "auto", 1 << 20, here, true, false, false},
		{"loop, this process", "loop", 1, here, true, false, true},
		{"blocking never holds", "blocking", 16, away, false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := IOChoice{Mode: tc.mode}.ForRun(tc.threads, false, tc.tgt)
			if d.IO.Looped != tc.looped || d.IO.Blocking != tc.block || d.Hold != tc.hold {
				t.Errorf("got looped %v blocking %v hold %v, want %v %v %v", d.IO.Looped, d.IO.Blocking, d.Hold, tc.looped, tc.block, tc.hold)
			}
			if want := LoopsFor(d.IO, tc.threads, d.Hold && SharesCores(tc.tgt), false, 0); d.Loops != want {
				t.Errorf("got %d loops, want %d", d.Loops, want)
			}
			if d.Bind(tc.threads) && tc.tgt == away {
				t.Errorf("loops bound to CPUs for a server on another host")
			}
		})
	}
}

// TestPlanBind: held loops on cores shared with the server are bound to
// CPUs when there is a loop for every CPU; never a single loop, loops
// that do not hold, or loops on cores of their own, unless the knob says.
func TestPlanBind(t *testing.T) {
	cpus := runtime.NumCPU()
	if cpus < 2 {
		t.Skip("one CPU: nothing to bind")
	}
	for _, tc := range []struct {
		d       IOPlan
		threads int
		knob    ioloop.Switch
		want    bool
	}{
		{IOPlan{Loops: cpus, Hold: true, shared: true}, 4 * cpus, ioloop.ByRule, true},
		{IOPlan{Loops: cpus, Hold: true, shared: true}, cpus - 1, ioloop.ByRule, false}, // fewer loops than CPUs
		{IOPlan{Loops: 1, Hold: true, shared: true}, 1, ioloop.ByRule, false},
		{IOPlan{Loops: cpus, Hold: false, shared: true}, 4 * cpus, ioloop.ByRule, false},
		{IOPlan{Loops: cpus, Hold: true, shared: false}, 4 * cpus, ioloop.ByRule, false},
		{IOPlan{Loops: cpus, Hold: true, shared: false}, 4 * cpus, ioloop.On, true},
		{IOPlan{Loops: cpus, Hold: true, shared: true}, 4 * cpus, ioloop.Off, false},
		{IOPlan{Loops: cpus, Hold: false, shared: true}, 4 * cpus, ioloop.On, false},
	} {
		tc.d.Tuning.Bind = tc.knob
		if got := tc.d.Bind(tc.threads); got != tc.want {
			t.Errorf("knob %q: %+v.Bind(%d threads) = %v, want %v", tc.knob, tc.d, tc.threads, got, tc.want)
		}
	}
}

// TestForReplay: a replay's loops hold their processors as a run's do, with
// a session counted as a thread per target, except where any target's
// server runs in this process.
func TestForReplay(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	here, away := hereAndAway(t)
	for _, tc := range []struct {
		name          string
		mode          string
		procs         int
		tgts          []*target.Target
		looped, block bool
		hold, shared  bool
	}{
		{"auto, other hosts", "auto", 2, []*target.Target{away, away}, true, false, true, false},
		{"empty is auto", "", 2, []*target.Target{away, away}, true, false, true, false},
		{"auto, a candidate in this process", "auto", 2, []*target.Target{away, here}, true, false, false, false},
		{"auto, one processor", "auto", 1, []*target.Target{away, away}, true, false, false, false},
		{"loop, this process", "loop", 2, []*target.Target{here, here}, true, false, true, true},
		{"blocking never holds", "blocking", 2, []*target.Target{away, away}, false, true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runtime.GOMAXPROCS(tc.procs)
			d := IOChoice{Mode: tc.mode}.ForReplay(tc.tgts)
			if d.IO.Looped != tc.looped || d.IO.Blocking != tc.block || d.Hold != tc.hold || d.shared != tc.shared {
				t.Errorf("got looped %v blocking %v hold %v shared %v, want %v %v %v %v", d.IO.Looped, d.IO.Blocking, d.Hold, d.shared, tc.looped, tc.block, tc.hold, tc.shared)
			}
			if want := map[bool]int{true: tc.procs}[tc.looped]; d.Loops != want {
				t.Errorf("got %d loops, want %d: one a processor, none without loops", d.Loops, want)
			}
		})
	}
}

// TestReadIOTuning: each variable sets its knob when it holds a value the
// knob takes, and leaves the rule otherwise, as the knobs always have.
func TestReadIOTuning(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want IOTuning
	}{
		{"none", nil, IOTuning{}},
		{"every knob", map[string]string{EnvLoops: "8", EnvBind: "on", EnvBurst: "32", EnvWatch: "off", EnvHold: "off"},
			IOTuning{Loops: 8, Bind: ioloop.On, Tuning: ioloop.Tuning{Burst: 32, Watch: ioloop.Off, HoldOff: true}}},
		{"values they do not take", map[string]string{EnvLoops: "0", EnvBind: "yes", EnvBurst: "-4", EnvWatch: "On", EnvHold: "on"}, IOTuning{}},
		{"not a number", map[string]string{EnvLoops: "eight", EnvBurst: " 32"}, IOTuning{}},
	} {
		got := ReadIOTuning(func(k string) string { return tc.env[k] })
		if got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestPlanTuning: a plan with loops carries the tuning asked (a replay
// all but the loop count, which stays a loop a processor); one without
// loops carries none, since every knob is a loop's. The count replaces
// the rule.
func TestPlanTuning(t *testing.T) {
	_, away := hereAndAway(t)
	tune := IOTuning{Loops: 3, Bind: ioloop.Off, Tuning: ioloop.Tuning{Burst: 16}}
	if p := (IOChoice{Mode: "loop", Tuning: tune}).ForRun(16, false, away); p.Tuning != tune || p.Loops != 3 {
		t.Errorf("loop, run: got tuning %+v and %d loops, want %+v and 3", p.Tuning, p.Loops, tune)
	}
	if p := (IOChoice{Mode: "blocking", Tuning: tune}).ForRun(16, false, away); p.Tuning != (IOTuning{}) || p.Loops != 0 {
		t.Errorf("blocking, run: got tuning %+v and %d loops, want none", p.Tuning, p.Loops)
	}
	want := tune
	want.Loops = 0
	if p := (IOChoice{Mode: "loop", Tuning: tune}).ForReplay([]*target.Target{away, away}); p.Tuning != want || p.Loops != runtime.GOMAXPROCS(0) {
		t.Errorf("loop, replay: got tuning %+v and %d loops, want %+v and %d", p.Tuning, p.Loops, want, runtime.GOMAXPROCS(0))
	}
}

// TestPlanGroup: a plan's group has its loops, no more than the clients
// and one at least.
func TestPlanGroup(t *testing.T) {
	for _, tc := range []struct{ loops, threads, want int }{{4, 16, 4}, {4, 2, 2}, {4, 0, 1}} {
		p := IOPlan{IO: wire.Options{Looped: true}, Loops: tc.loops}
		g, release, err := p.Group(tc.threads, 0)
		if err != nil {
			t.Fatal(err)
		}
		g.Close()
		release()
		if len(g) != tc.want {
			t.Errorf("%d loops for %d threads: got a group of %d, want %d", tc.loops, tc.threads, len(g), tc.want)
		}
	}
}
