package client

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/clock"
	"github.com/shakedown/shakedown/internal/host"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/wire"
)

// Policy says what a failed statement or connect means for a client of a
// load: counted and tried again, counted and reconnected, or the end of the
// load. The runner (sysbench's rules) and slap (mysqlslap's) differ only in
// its two switches.
type Policy struct {
	// Ignore lists the error codes that are counted and passed over;
	// IgnoreAll passes over every server error.
	Ignore    map[uint16]bool
	IgnoreAll bool
	// ReconnectLost reconnects after a lost connection whatever its code
	// (a run goes on through a server restart); otherwise a lost
	// connection ends the load unless its code is ignored (mysqlslap).
	ReconnectLost bool
	// RetryConnect tries again every failed connect but those trying
	// cannot help (mysqlslap); otherwise only a lost or refused connection
	// and an ignored code are tried again.
	RetryConnect bool
}

// Action is what a client does after an error.
type Action int

const (
	// Fail ends the load with the error.
	Fail Action = iota
	// Retry counts the error and goes on (the event again, or the next
	// statement).
	Retry
	// Reconnect counts the error, drops the connection and opens another.
	Reconnect
)

// ParseIgnore reads an ignore list as flag gives it: error codes separated
// by commas, "all", or "none" (or nothing).
func ParseIgnore(flag, v string) (Policy, error) {
	var p Policy
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "all":
		p.IgnoreAll = true
		return p, nil
	case "", "none":
		return p, nil
	}
	p.Ignore = map[uint16]bool{}
	for _, part := range strings.Split(v, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(part), 10, 16)
		if err != nil {
			return Policy{}, fmt.Errorf("%s: %q is not an error code; give codes such as %d,%d, all or none", flag, part, target.ERLockDeadlock, target.ERLockWaitTimeout)
		}
		p.Ignore[uint16(n)] = true
	}
	return p, nil
}

// Ignored says whether errors with this code are counted and passed over.
// Code 0 (not a database error) never is.
func (p Policy) Ignored(code uint16) bool {
	return code != 0 && (p.IgnoreAll || p.Ignore[code])
}

// OnStatement says what follows a statement that failed with err on a
// connection that is broken or not.
func (p Policy) OnStatement(err error, broken bool) Action {
	code := target.Code(err)
	switch {
	case errors.Is(err, ErrMissingTables):
		return Fail
	case target.IsConnLost(err):
		if p.ReconnectLost || p.Ignored(code) {
			return Reconnect
		}
		return Fail
	case p.Ignored(code) && broken:
		return Reconnect // passed over, but this connection is done
	case p.Ignored(code):
		return Retry
	}
	return Fail
}

// OnConnect says whether a failed connect is tried again (Retry) or ends
// the load (Fail).
func (p Policy) OnConnect(err error) Action {
	code := target.Code(err)
	switch {
	case errors.Is(err, ErrMissingTables), target.Permanent(code):
		return Fail
	case target.IsConnLost(err), p.Ignored(code), p.RetryConnect && code != 0:
		return Retry
	}
	return Fail
}

// ErrMissingTables means the workload's tables are not there.
var ErrMissingTables = errors.New("the workload's tables do not exist: run prepare first")

// ExplainSetup turns the failure of a thread's set-up (preparing its
// statements) into ErrMissingTables when a table is missing.
func ExplainSetup(err error) error {
	if target.Code(err) == target.ERNoSuchTable {
		return fmt.Errorf("%w (%v)", ErrMissingTables, err)
	}
	return err
}

// Backoff says how long to wait between attempts to connect: First, then
// twice as long each time up to Max.
type Backoff struct {
	First, Max time.Duration
	// Attempts bounds the attempts; 0 means no bound.
	Attempts int
	// Within bounds the time spent trying; 0 means no bound.
	Within time.Duration
	// Until, when set, is when trying stops (the end of a timed run): a
	// pause that would end later is cut short, and no attempt is made
	// after it.
	Until time.Time
}

// ErrStopped is returned by Redial when ctx ended or stop said so.
var ErrStopped = errors.New("stopped")

// GaveUpError is a connect that failed for good: the policy said so, or
// the attempts or time of the backoff were used up.
type GaveUpError struct {
	Attempts int
	For      time.Duration
	Err      error // the last attempt's
}

func (e *GaveUpError) Error() string {
	if e.Attempts <= 1 {
		return e.Err.Error()
	}
	return fmt.Sprintf("could not connect in %d attempts over %s: %v", e.Attempts, e.For.Round(time.Millisecond), e.Err)
}

func (e *GaveUpError) Unwrap() error { return e.Err }

// Redial calls dial until it succeeds, ctx ends, stop reports true or b's
// Until passes (ErrStopped), or it gives up (*GaveUpError): the policy calls the error
// final, or b's attempts or time are used up. failed, when set, is told of
// every failed attempt; the pauses are on clk.
func (p Policy) Redial(ctx context.Context, clk clock.Clock, b Backoff, stop func() bool, dial func(context.Context) error, failed func(error)) error {
	start := clk.Now()
	pause := b.First
	for n := 1; ; n++ {
		if ctx.Err() != nil || stop != nil && stop() {
			return ErrStopped
		}
		err := dial(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ErrStopped
		}
		if failed != nil {
			failed(err)
		}
		spent := clk.Now().Sub(start)
		if p.OnConnect(err) == Fail || b.Attempts > 0 && n >= b.Attempts || b.Within > 0 && spent >= b.Within {
			return &GaveUpError{Attempts: n, For: spent, Err: err}
		}
		wait := pause
		if !b.Until.IsZero() {
			wait = min(wait, b.Until.Sub(clk.Now()))
		}
		if !clock.Sleep(ctx, clk, wait) || !b.Until.IsZero() && !clk.Now().Before(b.Until) {
			return ErrStopped
		}
		if pause *= 2; pause > b.Max {
			pause = b.Max
		}
	}
}

// CheckIO checks a --client-io value.
func CheckIO(mode string) error {
	switch mode {
	case "auto", "blocking", "polled", "loop":
		return nil
	}
	return fmt.Errorf("--client-io must be auto, loop, blocking or polled (got %q)", mode)
}

// blockingPerCore is how many threads per core still share the CPU fairly
// with blocking I/O; beyond it, threads that wait for a core skew the load.
const blockingPerCore = 8

// IOFor is --client-io for a load of threads clients: I/O loops (package
// ioloop), blocking system calls or Go's poller. auto is the loops, except
// when shared says the server shares the client's cores and the loops
// would not keep their processor (see RunIO), and there are at most 8
// threads per core: there blocking reads win.
//
// On a client with cores of its own the loops spend the least CPU per
// statement and hand a reply to its thread the fastest at every thread
// count (1.0x sysbench's QPS and 0.7-0.9x its CPU per query at 64 to 3000
// threads, where blocking reads made 0.57x at 64). On cores shared with
// the server, a loop that hands its processor back between replies is one
// thread doing the kernel work of many connections, and the scheduler
// gives it one thread's share against the server's many: at 16 threads on
// 2 shared cores such loops made 0.79x sysbench's QPS and blocking reads
// 1.09x. Past 8 threads per core blocking reads stop sharing the CPU
// fairly between threads, and the loops are used. docs/PERFORMANCE.md has
// the figures.
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
// would keep. On cores shared with a server of its own process, holding is
// what drives it as hard as sysbench: 0.88-1.19x its QPS from 16 to 256
// threads on 2 shared cores, where blocking reads and loops that hand their
// processor back made 0.66-0.94x. On one processor of its own, at 4 and 16
// threads, holding spent 0.72-0.87x the CPU per query but made 0.89-0.94x
// the QPS in three cases of four (1.11x for point selects at 4 threads):
// in those three the server, alone on its core, spent 1.08-1.11x the CPU
// per statement. A single thread waits at every reply, and holding
// spent 0.68-0.78x the CPU per query (docs/PERFORMANCE.md).
func HoldsProcessors(mode string, inProcess bool, threads int) bool {
	if mode == "loop" {
		return true
	}
	return !inProcess && (runtime.GOMAXPROCS(0) > 1 || threads <= 1)
}

// Drive is how a run's threads wait for replies (see RunIO).
type Drive struct {
	Mode  string // --client-io as asked ("" is auto)
	IO    wire.Options
	Loops int  // I/O loops (LoopsFor); 0 for the modes without
	Hold  bool // the loops keep their processors (HoldProcessors)
	// shared: the server runs on CPUs the client may use too.
	shared bool
}

// BindLoops, when "on" or "off", replaces Drive.Bind's rule for whether
// held loops on shared cores are bound: a benchmark's knob
// (SHAKEDOWN_IOLOOP_BIND), "on" to bind on cores of the client's own too.
var BindLoops string

// Bind reports whether the loops that drive threads are bound to the
// client's CPUs, one CPU each in turn (ioloop.Group.BindCPUs): held loops
// on CPUs shared with the server, at least one for every CPU, so that the
// binding takes no CPU from the client. On 2 shared cores bound loops
// made 1.02-1.20x the point selects of free ones from 8 to 256 threads
// (paired medians of five calls), the case where the client falls short
// of sysbench, and 1.73x and 1.14x the read/write statements at 2 and 4
// threads; from 8 threads on, about 3% fewer read/write statements, where
// it stays 1.0-1.4x sysbench. One loop (a single thread) is not bound: it
// would lose the second CPU. On cores of the client's own it is not
// measured yet (docs/PERFORMANCE.md).
func (d Drive) Bind(threads int) bool {
	cpus := runtime.NumCPU()
	if !d.Hold || cpus < 2 || min(d.Loops, threads) < cpus {
		return false
	}
	switch BindLoops {
	case "on":
		return true
	case "off":
		return false
	}
	return d.shared
}

// RunIO is how a run's threads wait for replies under mode (--client-io)
// against t, for a workload whose events only read (readOnly) or not: the
// I/O, how many loops drive them (see LoopsFor), and whether the loops
// hold their processor and are bound to CPUs. Only auto chooses by where
// the server is.
func RunIO(mode string, threads int, readOnly bool, t *target.Target) Drive {
	auto := mode == "auto"
	hold := HoldsProcessors(mode, auto && InProcess(t), threads)
	// Where the server runs matters to auto's choice of I/O and to held
	// loops' count and binding; blocking and polled never read it.
	shared := (auto || hold) && SharesCores(t)
	io := IOFor(mode, threads, auto && !hold && shared)
	hold = hold && io.Looped
	return Drive{Mode: mode, IO: io, Loops: LoopsFor(io, threads, hold && shared, readOnly), Hold: hold, shared: shared}
}

// ReplayIO is how a replay's sessions wait for replies from targets under
// mode (--client-io; "" is auto): the I/O, a loop for every processor, and
// whether the loops hold their processor, as HoldsProcessors says for a
// run, and are bound to CPUs, as Drive.Bind says. A session drives a
// connection on every target, so it counts as that many threads; auto
// does not hold where any target's server runs in this process, and the
// cores count as shared where any target's server shares them.
func ReplayIO(mode string, targets []*target.Target) Drive {
	if mode == "" {
		mode = "auto"
	}
	io := IOFor(mode, 0, false)
	inProcess := mode == "auto" && slices.ContainsFunc(targets, InProcess)
	d := Drive{Mode: mode, IO: io, Hold: io.Looped && HoldsProcessors(mode, inProcess, len(targets))}
	if io.Looped {
		d.Loops = runtime.GOMAXPROCS(0)
		d.shared = d.Hold && slices.ContainsFunc(targets, SharesCores)
	}
	return d
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

// LoopCount, when above zero, is how many loops every run with loops makes
// (no more than its threads), whatever LoopsFor's rule says: a benchmark's
// knob (SHAKEDOWN_IOLOOP_LOOPS) for finding which count wins where.
var LoopCount int

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
// woken once more per statement. On 2 shared cores 4 loops made 1.12x the
// point selects and 1.14x the read/write statements of 2 at 16 threads,
// and 8 loops 1.30x and 1.17x at 32.
//
// More loops win reads and lose transactions that write, whose commits a
// loop with several connections sends together: at 16 threads on 2 shared
// cores, bound loops, a loop a thread made 1.15-1.36x the point selects of
// the rule and 1.07x the read-only transactions, but 0.82x the write-only
// and 0.71x the read/write statements. So a workload whose events only
// read (readOnly) has a loop a thread up to 8 threads per processor, where
// each loop and the server's thread it wakes stay on one CPU as a pair;
// at 32 threads on 2 cores a loop a thread made 0.72x the read-only
// transactions (docs/PERFORMANCE.md). LoopCount replaces the rule.
func LoopsFor(io wire.Options, threads int, heldShared, readOnly bool) int {
	if !io.Looped {
		return 0
	}
	if LoopCount > 0 {
		return min(LoopCount, max(threads, 1))
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
