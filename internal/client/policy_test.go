package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/clock"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/wire"
)

func serverErr(code uint16) error { return &mysql.MySQLError{Number: code, Message: "m"} }

var errRefused = fmt.Errorf("dial tcp: %w", syscall.ECONNREFUSED)

func TestParseIgnore(t *testing.T) {
	cases := []struct {
		in      string
		all     bool
		codes   []uint16
		wantErr string
	}{
		{"", false, nil, ""},
		{"none", false, nil, ""},
		{"all", true, nil, ""},
		{" ALL ", true, nil, ""},
		{"1213,1205", false, []uint16{1213, 1205}, ""},
		{"1213, 1020 ,1205", false, []uint16{1213, 1020, 1205}, ""},
		{"deadlock", false, nil, `--x: "deadlock" is not an error code`},
		{"70000", false, nil, `"70000" is not an error code`},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			p, err := ParseIgnore("--x", tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.IgnoreAll != tc.all || len(p.Ignore) != len(tc.codes) {
				t.Errorf("got all %v codes %v, want %v %v", p.IgnoreAll, p.Ignore, tc.all, tc.codes)
			}
			for _, c := range tc.codes {
				if !p.Ignored(c) {
					t.Errorf("code %d: got not ignored, want ignored", c)
				}
			}
		})
	}
}

func TestOnStatement(t *testing.T) {
	run := Policy{Ignore: map[uint16]bool{1213: true}, ReconnectLost: true}
	slap := Policy{Ignore: map[uint16]bool{1213: true, 2013: true}}
	strict := Policy{}
	cases := []struct {
		name   string
		p      Policy
		err    error
		broken bool
		want   Action
	}{
		{"run: ignored", run, serverErr(1213), false, Retry},
		{"run: ignored on a broken connection", run, serverErr(1213), true, Reconnect},
		{"run: not ignored", run, serverErr(1146), false, Fail},
		{"run: lost", run, serverErr(2013), true, Reconnect},
		{"run: reset", run, syscall.ECONNRESET, true, Reconnect},
		{"run: missing tables", run, ErrMissingTables, false, Fail},
		{"run: not a server error", run, errors.New("wire: more placeholders than arguments"), false, Fail},
		{"slap: lost, ignored", slap, serverErr(2013), true, Reconnect},
		{"slap: lost, not ignored", strict, serverErr(2013), true, Fail},
		{"all: code 0 is not ignored", Policy{IgnoreAll: true}, errors.New("boom"), false, Fail},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.OnStatement(tc.err, tc.broken); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestOnConnect(t *testing.T) {
	run := Policy{Ignore: map[uint16]bool{1040: true}}
	slap := Policy{RetryConnect: true}
	cases := []struct {
		name string
		p    Policy
		err  error
		want Action
	}{
		{"refused", run, errRefused, Retry},
		{"access denied", Policy{IgnoreAll: true, RetryConnect: true}, serverErr(1045), Fail},
		{"no database", slap, serverErr(1049), Fail},
		{"too many connections, ignored", run, serverErr(1040), Retry},
		{"too many connections", Policy{}, serverErr(1040), Fail},
		{"too many connections, mysqlslap", slap, serverErr(1040), Retry},
		{"missing tables", slap, fmt.Errorf("thread 1: %w", ErrMissingTables), Fail},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.OnConnect(tc.err); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRedial(t *testing.T) {
	cases := []struct {
		name     string
		p        Policy
		b        Backoff
		fails    int   // attempts that fail before one succeeds
		err      error // how they fail
		attempts int
		spent    time.Duration // in milliseconds
		want     string        // "" connected, or part of the error
	}{
		{"at once", Policy{}, Backoff{First: time.Second, Max: time.Second}, 0, errRefused, 1, 0, ""},
		{"after pauses", Policy{}, Backoff{First: 10 * time.Millisecond, Max: 40 * time.Millisecond}, 4, errRefused, 5, 10 + 20 + 40 + 40, ""},
		{"attempts used up", Policy{RetryConnect: true}, Backoff{First: 100 * time.Millisecond, Max: 100 * time.Millisecond, Attempts: 10}, 99, serverErr(1040), 10, 900, "could not connect in 10 attempts over 900ms"},
		{"time used up", Policy{}, Backoff{First: time.Second, Max: time.Second, Within: 5 * time.Second}, 99, errRefused, 6, 5000, "could not connect in 6 attempts"},
		{"final at once", Policy{}, Backoff{First: time.Second, Max: time.Second}, 99, serverErr(1045), 1, 0, "Error 1045"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				clk := clock.Real{} // inside the bubble, time is synctest's
				start := clk.Now()
				n, failed := 0, 0
				err := tc.p.Redial(context.Background(), clk, tc.b, nil, func(context.Context) error {
					if n++; n <= tc.fails {
						return tc.err
					}
					return nil
				}, func(error) { failed++ })
				if n != tc.attempts || failed != min(tc.fails, tc.attempts) {
					t.Errorf("got %d attempts (%d failed), want %d", n, failed, tc.attempts)
				}
				if spent := clk.Now().Sub(start); spent != tc.spent*time.Millisecond {
					t.Errorf("spent %v, want %v", spent, tc.spent*time.Millisecond)
				}
				switch {
				case tc.want == "" && err != nil:
					t.Errorf("got %v, want connected", err)
				case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
					t.Errorf("got %v, want %q", err, tc.want)
				}
			})
		})
	}
}

func TestRedialStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		n := 0
		err := Policy{}.Redial(ctx, clock.Real{}, Backoff{First: time.Second, Max: time.Second}, nil, func(context.Context) error {
			if n++; n == 3 {
				cancel()
			}
			return errRefused
		}, nil)
		if !errors.Is(err, ErrStopped) || n != 3 {
			t.Errorf("got %v after %d attempts, want ErrStopped after 3", err, n)
		}
		stop := true
		if err := (Policy{}).Redial(context.Background(), clock.Real{}, Backoff{}, func() bool { return stop }, nil, nil); !errors.Is(err, ErrStopped) {
			t.Errorf("stopped before the first attempt: got %v, want ErrStopped", err)
		}
	})
}

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
	defer func(n int) { LoopCount = n }(LoopCount)
	for _, tc := range []struct {
		io         wire.Options
		threads    int
		heldShared bool
		readOnly   bool
		count      int // LoopCount, the benchmark's knob that replaces the rule
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
		LoopCount = tc.count
		if got := LoopsFor(tc.io, tc.threads, tc.heldShared, tc.readOnly); got != tc.want {
			t.Errorf("LoopCount %d: LoopsFor(%+v, %d threads, held on shared cores %v, read-only %v) = %d, want %d", tc.count, tc.io, tc.threads, tc.heldShared, tc.readOnly, got, tc.want)
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

// TestRunIO: auto's loops hold their processor except against a server in
// this very process, whose processors they would take; there the choice is
// the one for shared cores.
func TestRunIO(t *testing.T) {
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
			d := RunIO(tc.mode, tc.threads, false, tc.tgt)
			if d.IO.Looped != tc.looped || d.IO.Blocking != tc.block || d.Hold != tc.hold {
				t.Errorf("got looped %v blocking %v hold %v, want %v %v %v", d.IO.Looped, d.IO.Blocking, d.Hold, tc.looped, tc.block, tc.hold)
			}
			if want := LoopsFor(d.IO, tc.threads, d.Hold && SharesCores(tc.tgt), false); d.Loops != want {
				t.Errorf("got %d loops, want %d", d.Loops, want)
			}
			if d.Bind(tc.threads) && tc.tgt == away {
				t.Errorf("loops bound to CPUs for a server on another host")
			}
		})
	}
}

// TestDriveBind: held loops on cores shared with the server are bound to
// CPUs when there is a loop for every CPU; never a single loop, loops
// that do not hold, or loops on cores of their own, unless the knob says.
func TestDriveBind(t *testing.T) {
	cpus := runtime.NumCPU()
	if cpus < 2 {
		t.Skip("one CPU: nothing to bind")
	}
	defer func(s string) { BindLoops = s }(BindLoops)
	for _, tc := range []struct {
		d       Drive
		threads int
		knob    string
		want    bool
	}{
		{Drive{Loops: cpus, Hold: true, shared: true}, 4 * cpus, "", true},
		{Drive{Loops: cpus, Hold: true, shared: true}, cpus - 1, "", false}, // fewer loops than CPUs
		{Drive{Loops: 1, Hold: true, shared: true}, 1, "", false},
		{Drive{Loops: cpus, Hold: false, shared: true}, 4 * cpus, "", false},
		{Drive{Loops: cpus, Hold: true, shared: false}, 4 * cpus, "", false},
		{Drive{Loops: cpus, Hold: true, shared: false}, 4 * cpus, "on", true},
		{Drive{Loops: cpus, Hold: true, shared: true}, 4 * cpus, "off", false},
		{Drive{Loops: cpus, Hold: false, shared: true}, 4 * cpus, "on", false},
	} {
		BindLoops = tc.knob
		if got := tc.d.Bind(tc.threads); got != tc.want {
			t.Errorf("knob %q: %+v.Bind(%d threads) = %v, want %v", tc.knob, tc.d, tc.threads, got, tc.want)
		}
	}
}

// TestReplayIO: a replay's loops hold their processors as a run's do, with
// a session counted as a thread per target, except where any target's
// server runs in this process.
func TestReplayIO(t *testing.T) {
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
			d := ReplayIO(tc.mode, tc.tgts)
			if d.IO.Looped != tc.looped || d.IO.Blocking != tc.block || d.Hold != tc.hold || d.shared != tc.shared {
				t.Errorf("got looped %v blocking %v hold %v shared %v, want %v %v %v %v", d.IO.Looped, d.IO.Blocking, d.Hold, d.shared, tc.looped, tc.block, tc.hold, tc.shared)
			}
			if want := map[bool]int{true: tc.procs}[tc.looped]; d.Loops != want {
				t.Errorf("got %d loops, want %d: one a processor, none without loops", d.Loops, want)
			}
		})
	}
}

// A timed run stops reconnecting at its end, not a pause later.
func TestRedialUntil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real{}
		start := clk.Now()
		n := 0
		err := Policy{}.Redial(context.Background(), clk, Backoff{First: time.Second, Max: time.Second, Until: start.Add(2500 * time.Millisecond)}, nil,
			func(context.Context) error { n++; return errRefused }, nil)
		if !errors.Is(err, ErrStopped) || n != 3 {
			t.Errorf("got %v after %d attempts, want ErrStopped after 3", err, n)
		}
		if spent := clk.Now().Sub(start); spent != 2500*time.Millisecond {
			t.Errorf("stopped after %v, want 2.5s", spent)
		}
	})
}
