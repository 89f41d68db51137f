package client

import (
	"cmp"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/host"
	"github.com/shakedown/shakedown/internal/ioloop"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/wire"
)

// The client's I/O: how the connections of a load wait for replies. What
// was asked (an IOChoice: --client-io and a benchmark's tuning) and where
// the server runs make one decision, an IOPlan, which goes whole to the
// Dialer that opens the connections (Options.Plan) and to what runs the
// clients (the runner, slap, replay), which makes the plan's loops with
// IOPlan.Group. docs/PERFORMANCE.md ("How --client-io auto was chosen")
// has the figures each rule stands on.

// ioHelp is --client-io's help, the same in every command that takes it.
const ioHelp = "how the client waits for the server: loop (connections as tasks of a few I/O loops on epoll: the least CPU per query), blocking (a blocking system call per read), polled (Go's poller) or auto (chooses by where the server runs; the Client I/O line says what); see shakedown help client-io"

// BindIO binds --client-io to mode on fs, auto by default, with the one
// help text. CheckIO checks the value once the flags are parsed.
func BindIO(fs *pflag.FlagSet, mode *string) {
	fs.StringVar(mode, "client-io", "auto", ioHelp)
}

// CheckIO checks a --client-io value.
func CheckIO(mode string) error {
	switch mode {
	case "auto", "blocking", "polled", "loop":
		return nil
	}
	return fmt.Errorf("--client-io must be auto, loop, blocking or polled (got %q)", mode)
}

// IOChoice is what was asked of the client's I/O: --client-io, and the
// tuning that a benchmark set in the environment.
type IOChoice struct {
	Mode   string // --client-io
	Tuning IOTuning
}

// IOTuning is a benchmark's answers in place of rules of the plan, so that
// a rule can be measured against what it replaced; ReadIOTuning reads it
// from the environment, and a result records what was set (shakedown help
// client-io). Its zero value is the rules. Every knob concerns the I/O
// loops: a plan without them carries none.
type IOTuning struct {
	// Loops, above 0, is how many loops a run makes (no more than its
	// threads) in place of LoopsFor's rule. A replay keeps a loop a
	// processor.
	Loops int
	// Bind, On or Off, replaces the rule of IOPlan.Bind for held loops
	// with a loop for every CPU: On binds them on cores of the client's
	// own too.
	Bind ioloop.Switch
	// Tuning is the loops' own: Burst, Watch and HoldOff.
	ioloop.Tuning
}

// The variables of the environment that ReadIOTuning reads.
const (
	EnvLoops = "SHAKEDOWN_IOLOOP_LOOPS" // a count above 0: IOTuning.Loops
	EnvBind  = "SHAKEDOWN_IOLOOP_BIND"  // on or off: IOTuning.Bind
	EnvBurst = "SHAKEDOWN_IOLOOP_BURST" // a count above 0: ioloop.Tuning.Burst
	EnvWatch = "SHAKEDOWN_IOLOOP_WATCH" // on or off: ioloop.Tuning.Watch
	EnvHold  = "SHAKEDOWN_IOLOOP_HOLD"  // off: ioloop.Tuning.HoldOff
)

// ReadIOTuning reads the tuning through getenv (the process's environment,
// which only the command layer holds). A variable unset, or set to a value
// it does not take, leaves its rule.
func ReadIOTuning(getenv func(string) string) IOTuning {
	var t IOTuning
	if n, err := strconv.Atoi(getenv(EnvLoops)); err == nil && n > 0 {
		t.Loops = n
	}
	t.Bind = readSwitch(getenv(EnvBind))
	if n, err := strconv.Atoi(getenv(EnvBurst)); err == nil && n > 0 {
		t.Burst = n
	}
	t.Watch = readSwitch(getenv(EnvWatch))
	t.HoldOff = getenv(EnvHold) == "off"
	return t
}

func readSwitch(v string) ioloop.Switch {
	switch v {
	case "on":
		return ioloop.On
	case "off":
		return ioloop.Off
	}
	return ioloop.ByRule
}

// Check checks the mode (CheckIO).
func (c IOChoice) Check() error { return CheckIO(c.Mode) }

// IOPlan is how a load's connections wait for replies: the I/O, and with
// I/O loops how many, whether they hold their processors and are bound to
// CPUs, and the tuning in force. Make it with IOChoice.ForRun or
// ForReplay; it is a value, safe to copy and share.
type IOPlan struct {
	Mode   string       // --client-io as asked ("" is auto)
	IO     wire.Options // how each connection waits
	Loops  int          // I/O loops (LoopsFor); 0 for the modes without
	Hold   bool         // the loops keep their processors (HoldsProcessors)
	Tuning IOTuning     // what a benchmark set in place of rules; only with loops
	// shared: the server runs on CPUs the client may use too.
	shared bool
}

// Looped reports whether the plan runs its clients as tasks of I/O loops.
func (p IOPlan) Looped() bool { return p.IO.Looped }

// ForRun is how a run's threads wait for replies from t, for a workload
// whose events only read (readOnly) or not: the I/O, how many loops drive
// them (LoopsFor), and whether the loops hold their processor and are
// bound to CPUs (Bind). Only auto chooses by where the server is.
func (c IOChoice) ForRun(threads int, readOnly bool, t *target.Target) IOPlan {
	mode := c.Mode
	auto := mode == "auto"
	hold := HoldsProcessors(mode, auto && InProcess(t), threads)
	// Where the server runs matters to auto's choice of I/O and to held
	// loops' count and binding; blocking and polled never read it.
	shared := (auto || hold) && SharesCores(t)
	io := IOFor(mode, threads, auto && !hold && shared)
	hold = hold && io.Looped
	p := IOPlan{Mode: mode, IO: io, Loops: LoopsFor(io, threads, hold && shared, readOnly, c.Tuning.Loops), Hold: hold, shared: shared}
	if io.Looped {
		p.Tuning = c.Tuning
	}
	return p
}

// ForReplay is how a replay's sessions wait for replies from targets (the
// mode "" is auto): the I/O, a loop for every processor, and whether the
// loops hold their processor, as HoldsProcessors says for a run, and are
// bound to CPUs (Bind). A session drives a connection on every target, so
// it counts as that many threads; auto does not hold where any target's
// server runs in this process, and the cores count as shared where any
// target's server shares them.
func (c IOChoice) ForReplay(targets []*target.Target) IOPlan {
	mode := cmp.Or(c.Mode, "auto")
	io := IOFor(mode, 0, false)
	inProcess := mode == "auto" && slices.ContainsFunc(targets, InProcess)
	p := IOPlan{Mode: mode, IO: io, Hold: io.Looped && HoldsProcessors(mode, inProcess, len(targets))}
	if io.Looped {
		p.Loops = runtime.GOMAXPROCS(0)
		p.shared = p.Hold && slices.ContainsFunc(targets, SharesCores)
		p.Tuning = c.Tuning
		p.Tuning.Loops = 0 // a loop a processor, whatever was asked
	}
	return p
}

// Group makes the I/O loops that drive threads clients as p says: Loops of
// them, as many as the clients at most and one at least, tuned, holding
// their processors (with spare processors more for other goroutines) and
// bound to CPUs as Bind says. Call release once the loops have ended: it
// undoes the hold and the binding. For a plan with loops.
func (p IOPlan) Group(threads, spare int) (g ioloop.Group, release func(), err error) {
	g, err = ioloop.NewGroup(max(1, min(p.Loops, threads)), p.Tuning.Tuning)
	if err != nil {
		return nil, nil, err
	}
	return g, g.Place(p.Hold, spare, p.Bind(threads)), nil
}

// blockingPerCore is how many threads per core still share the CPU fairly
// with blocking I/O; beyond it, threads that wait for a core skew the load.
const blockingPerCore = 8

// IOFor is --client-io for a load of threads clients: I/O loops (package
// ioloop), blocking system calls or Go's poller. auto is the loops, except
// when shared says the server shares the client's cores and the loops
// would not keep their processor (see ForRun), and there are at most 8
// threads per core: there blocking reads win.
//
// On a client with cores of its own the loops spend the least CPU per
// statement and hand a reply to its thread the fastest at every thread
// count, where blocking reads fall further behind the more threads. On
// cores shared with the server, a loop that hands its processor back
// between replies is one thread doing the kernel work of many
// connections, and the scheduler gives it one thread's share against the
// server's many: there blocking reads drive the server harder. Past 8
// threads per core blocking reads stop sharing the CPU fairly between
// threads, and the loops are used.
func IOFor(mode string, threads int, shared bool) wire.Options {
	switch mode {
	case "blocking":
		return wire.Options{Blocking: true}
	case "polled":
		return wire.Options{}
	case "loop":
		return wire.Options{Looped: true}
	}
	if shared && threads <= blockingPerCore*runtime.GOMAXPROCS(0) {
		return wire.Options{Blocking: true}
	}
	return wire.Options{Looped: true}
}

// HoldsProcessors reports whether the I/O loops of a run of threads keep
// their processor while they wait for replies
// (ioloop.Group.HoldProcessors): always under --client-io=loop; under auto
// where the server is not in this process (inProcess false), on a client
// with more than one processor or for a single thread. A server in this
// process (go-mysql-server in a test) needs the processors a held loop
// would keep. On cores shared with a server of its own process, holding
// is what drives it as hard as sysbench, where blocking reads and loops
// that hand their processor back fall short. On one processor of its own
// holding spends less CPU per query but mostly makes fewer queries: a held
// loop keeps the run's other goroutines waiting, and the server, alone on
// its core, spends more per statement. A single thread waits at every
// reply, and there holding spends much less CPU per query.
func HoldsProcessors(mode string, inProcess bool, threads int) bool {
	if mode == "loop" {
		return true
	}
	return !inProcess && (runtime.GOMAXPROCS(0) > 1 || threads <= 1)
}

// Bind reports whether the loops that drive threads are bound to the
// client's CPUs, one CPU each in turn (ioloop.Group.BindCPUs): held loops
// on CPUs shared with the server, at least one for every CPU, so that the
// binding takes no CPU from the client. A bound loop draws the server's
// threads it wakes to its CPU: more point selects at every thread count,
// many more read/write statements at a few threads and a few fewer at
// more. One loop (a single thread) is not bound: it would lose the second
// CPU. On cores of the client's own binding is not measured yet, so it is
// not done there. The tuning's Bind replaces the rule.
func (p IOPlan) Bind(threads int) bool {
	cpus := runtime.NumCPU()
	if !p.Hold || cpus < 2 || min(p.Loops, threads) < cpus {
		return false
	}
	return p.Tuning.Bind.Or(p.shared)
}

// InProcess reports whether t's server listens in this very process: its
// first endpoint is a local port that this process holds open.
func InProcess(t *target.Target) bool {
	eps := t.Endpoints()
	if len(eps) == 0 || !eps[0].Local() || eps[0].Socket != "" {
		return false
	}
	return host.ListenerPID("/proc", eps[0].Port) == os.Getpid()
}

// SharesCores reports whether t's server runs on this host on CPUs this
// process may use too: its first endpoint is local, and the process that
// listens on its port may run on one of our CPUs. A local server whose
// process cannot be found or read is taken to share them.
func SharesCores(t *target.Target) bool {
	eps := t.Endpoints()
	if len(eps) == 0 || !eps[0].Local() {
		return false
	}
	if eps[0].Socket != "" {
		return true
	}
	pid := host.ListenerPID("/proc", eps[0].Port)
	if pid == 0 {
		return true
	}
	shared, ok := host.SharesCPUs("/proc", pid)
	return shared || !ok
}

// manyLoopsPerCore is how many threads per processor at most have a loop
// for every four of them, and pairedPerCore how many of a read-only
// workload have a loop each (see LoopsFor).
const (
	manyLoopsPerCore = 16
	pairedPerCore    = 8
)

// LoopsFor is how many I/O loops drive threads with io: none for the modes
// without loops, else one per processor the client may use. Held loops on
// cores shared with the server (heldShared) with at most 16 threads per
// processor are more: one for every four threads. A loop that is asleep
// when a reply comes is woken at once and sends the next statement before
// the server's thread has gone to wait for it; a loop busy with many
// connections answers later, and the server's thread then sleeps and is
// woken once more per statement.
//
// More loops win reads and lose transactions that write, whose commits a
// loop with several connections sends together. So a workload whose
// events only read (readOnly) has a loop a thread up to 8 threads per
// processor, where each loop and the server's thread it wakes stay on one
// CPU as a pair; past that a loop a thread loses reads too. count, above
// 0, replaces the rule (IOTuning.Loops), with no more loops than threads.
func LoopsFor(io wire.Options, threads int, heldShared, readOnly bool, count int) int {
	if !io.Looped {
		return 0
	}
	if count > 0 {
		return min(count, max(threads, 1))
	}
	procs := runtime.GOMAXPROCS(0)
	switch {
	case !heldShared || threads > manyLoopsPerCore*procs:
		return procs
	case readOnly && threads <= pairedPerCore*procs:
		return max(procs, threads)
	}
	return max(procs, threads/4)
}
