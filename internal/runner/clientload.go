package runner

import (
	"bytes"
	"math"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"syscall"
	"time"

	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/result"
)

// ClientLoad is what the client itself spent while the run measured, so
// that a run can say whether the client, not the server, set its pace.
// Every figure is taken at the start and the end of measurement only:
// nothing is added per statement.
type ClientLoad struct {
	// CPU is this process's CPU time (user + system) over the measured
	// span, Wall that span. The process is the whole client: in a test
	// that runs a server in process, that server's CPU is in it too.
	CPU, Wall time.Duration
	// Waited is how long the process's threads were ready to run but
	// waited for a CPU over the span (the kernel's run delay, summed over
	// threads; 0 where the kernel does not keep it): CPU the client
	// wanted and did not get, because its own threads or other processes
	// (a server on the same host) held its cores.
	Waited time.Duration
	// Cores is how many CPUs the client may use: the smaller of
	// GOMAXPROCS and the CPUs of the process's affinity mask. Go sets
	// GOMAXPROCS from the affinity mask and a cgroup CPU limit at start,
	// so it is usually the answer; a lower GOMAXPROCS is all that Go code
	// may use, and blocking reads beyond it are few. Both are read once,
	// at start, as the runtime does.
	Cores int
	// Lag is the median wait of a goroutine that the Go scheduler knew
	// to be ready (a reply it had polled for, a timer that had fired)
	// before it ran: the part of the lag from a reply's arrival to the
	// next statement's send that the runtime sees (runtime/metrics
	// /sched/latencies:seconds, sampled by the runtime at no cost to the
	// hot path). LagP99 is its 99th percentile. Both are zero when the
	// runtime recorded no wait.
	Lag, LagP99 time.Duration
	// ReplyLag is, with I/O loops, the mean time from the moment a loop
	// learned that a thread could go on (epoll reported its reply, or its
	// start under --rate came due) to the moment the thread ran: the whole
	// of the client's part of the lag from a reply to the next send.
	// Zero without loops.
	ReplyLag time.Duration
	// QueryLatency is the mean latency of one statement: the events'
	// latency over the statements they sent, which the lag is compared
	// with.
	QueryLatency time.Duration
	// QueueLag is, under --rate, the longest the schedule fell behind at
	// an interval's end: events due but not started, over the rate.
	QueueLag time.Duration
	// Throttled is how long a CPU quota of the process's cgroup (or of
	// the ancestor whose quota throttled most) held its threads off the
	// CPU over the span, summed over the CPUs throttled (cpu.stat's
	// throttled_usec, throttled_time in cgroup v1); Periods and
	// ThrottledPeriods are the quota's enforcement periods in the span and
	// those in which it ran out. All 0 without a quota or where cpu.stat
	// cannot be read. A client whose quota is a tenth of a CPU uses little
	// of its cores and, with few threads ready, waits for few of them:
	// only the throttling shows that it was starved.
	Throttled                 time.Duration
	Periods, ThrottledPeriods int64
}

// Thresholds of the client-bound rule (see Bound).
const (
	// minBoundSpan is the shortest span the rule judges: in a few
	// milliseconds a client's share is whatever it was doing then (a
	// replay of a few statements, mostly its connection handshakes, came
	// to 63% of 2 cores in 6 ms), not the pace it kept.
	minBoundSpan = 250 * time.Millisecond
	// boundCPU is the share of its cores above which the client's own
	// CPU is the limit.
	boundCPU = 0.9
	// boundDemand is the share of its cores above which the CPU the
	// client used and the CPU it waited for are the limit. It is three
	// times the cores, not once: Go's threads that look for work wait
	// for a CPU too, and on a busy 2-core host shared with the server a
	// client that was not the limit was seen near 1 and, once, at 1.96.
	// A client on one CPU beside a process spinning there, with 400
	// threads, was seen at 6.5 to 8.3.
	boundDemand = 3.0
	// boundThrottled is the share of the span above which a CPU quota
	// that ran out in at least half its periods is the limit.
	boundThrottled = 0.25
)

// CPUShare is the client's CPU over what its cores could give in the
// span: 1 means every core busy all the time. It may exceed 1 a little
// (threads blocked in system calls run beyond GOMAXPROCS).
func (c ClientLoad) CPUShare() float64 { return c.share(c.CPU) }

// DemandShare is the CPU the client used or waited for over what its
// cores could give: well above 1, the client had work ready and no CPU
// to do it on.
func (c ClientLoad) DemandShare() float64 { return c.share(c.CPU + c.Waited) }

// ThrottledShare is how long the client's CPU quota held it off the CPU
// over the span (summed over CPUs, so it may exceed 1).
func (c ClientLoad) ThrottledShare() float64 {
	if c.Wall <= 0 {
		return 0
	}
	return c.Throttled.Seconds() / c.Wall.Seconds()
}

// quotaBound says the cgroup's CPU quota starved the client: it ran out in
// at least half the span's periods and held the threads off for at least
// boundThrottled of the span. A quota that runs out now and then, briefly,
// is a client near its quota, not one held back by it.
func (c ClientLoad) quotaBound() bool {
	return c.Periods > 0 && 2*c.ThrottledPeriods >= c.Periods && c.ThrottledShare() >= boundThrottled
}

func (c ClientLoad) share(d time.Duration) float64 {
	if c.Wall <= 0 || c.Cores <= 0 {
		return 0
	}
	return d.Seconds() / (c.Wall.Seconds() * float64(c.Cores))
}

// Bound reports whether the client limited the run, so that its figures
// measure the client at least as much as the server. The rule is kept
// conservative, so that an ordinary run is not marked:
//
//   - the client's own CPU was at least 90% of its cores over the measured
//     span (CPUShare >= 0.9): it had no CPU left to send faster; or
//   - its CPU and the time its threads were ready but waited for a CPU
//     came to at least three times its cores (DemandShare >= 3): it had far
//     more ready to run than it had CPUs, because of its own threads
//     (GOMAXPROCS above its CPUs) or of other processes on its cores; or
//   - a CPU quota of its cgroup ran out in at least half the span's periods
//     and held its threads off the CPU for at least a quarter of the span
//     (quotaBound): a client starved by its quota (a tenth of a CPU) uses
//     little of its cores and waits for few, and neither rule above sees
//     it. A server in the same cgroup shares the quota; then the quota, not
//     the server, set the pace, and the run is marked all the same.
//
// A span shorter than minBoundSpan is not judged.
//
// The wake-up lag and the queue's lag under --rate are figures, not
// rules: the Go scheduler sees only the wait of goroutines it knows to be
// ready (a reply the client has not yet polled for is not among them), and
// a queue grows just as well when the server is slow.
func (c ClientLoad) Bound() bool {
	if c.Wall < minBoundSpan {
		return false
	}
	return c.CPUShare() >= boundCPU || c.DemandShare() >= boundDemand || c.quotaBound()
}

// Probe measures the client's own load over spans of time, for a load the
// runner does not drive (slap's rounds): Start each span where its load
// starts, End it where the load ends, and Load is the spans together.
type Probe struct {
	sum  ClientLoad
	open *loadProbe
}

// Start begins a span.
func (p *Probe) Start() { p.open = startLoad(time.Now()) }

// End ends the span Start began: its times add to the others', and the
// scheduler's lags are the larger of theirs and this span's. An End
// without a Start does nothing.
func (p *Probe) End() {
	if p.open == nil {
		return
	}
	c := p.open.finish(time.Now())
	p.open = nil
	p.sum.CPU += c.CPU
	p.sum.Wall += c.Wall
	p.sum.Waited += c.Waited
	p.sum.Throttled += c.Throttled
	p.sum.Periods += c.Periods
	p.sum.ThrottledPeriods += c.ThrottledPeriods
	p.sum.Cores = c.Cores
	p.sum.Lag, p.sum.LagP99 = max(p.sum.Lag, c.Lag), max(p.sum.LagP99, c.LagP99)
}

// Load is what the spans measured, with queryLatency as the mean latency
// of a statement.
func (p *Probe) Load(queryLatency time.Duration) ClientLoad {
	c := p.sum
	c.QueryLatency = queryLatency
	return c
}

// Stored is Load's stored form, with how plan drove a load of threads;
// nil when no span was measured.
func (p *Probe) Stored(queryLatency time.Duration, plan client.IOPlan, threads int) *result.Client {
	c := p.Load(queryLatency).Stored()
	if c != nil {
		c.IO = StoredIO(plan, threads)
	}
	return c
}

// loadProbe holds the readings at the start of measurement.
type loadProbe struct {
	cpu     time.Duration
	waited  map[string]time.Duration
	quota   map[string]cpuThrottle
	wall    time.Time
	samples []metrics.Sample
	before  *metrics.Float64Histogram
}

const schedLatencies = "/sched/latencies:seconds"

// startLoad takes the readings at the start of measurement.
func startLoad(now time.Time) *loadProbe {
	p := &loadProbe{cpu: processCPU(), waited: runDelays(), quota: cgroupThrottles(os.DirFS("/")), wall: now, samples: []metrics.Sample{{Name: schedLatencies}}}
	metrics.Read(p.samples)
	if p.samples[0].Value.Kind() == metrics.KindFloat64Histogram {
		p.before = copyHist(p.samples[0].Value.Float64Histogram())
	}
	return p
}

// finish takes the readings at the end and returns the load between.
func (p *loadProbe) finish(now time.Time) ClientLoad {
	c := ClientLoad{CPU: processCPU() - p.cpu, Wall: now.Sub(p.wall), Cores: clientCores()}
	if c.CPU < 0 {
		c.CPU = 0
	}
	// A thread that ended during the span takes its wait with it: the
	// sum can only be short, never long.
	for id, d := range runDelays() {
		if d0, ok := p.waited[id]; ok {
			d -= d0
		}
		c.Waited += max(d, 0)
	}
	c.Throttled, c.Periods, c.ThrottledPeriods = throttledSince(p.quota, cgroupThrottles(os.DirFS("/")))
	metrics.Read(p.samples)
	if p.before != nil && p.samples[0].Value.Kind() == metrics.KindFloat64Histogram {
		after := p.samples[0].Value.Float64Histogram()
		c.Lag = histQuantile(p.before, after, 0.5)
		c.LagP99 = histQuantile(p.before, after, 0.99)
	}
	return c
}

// clientCores is the smaller of GOMAXPROCS and the CPUs the process may
// run on (runtime.NumCPU reads the affinity mask at start).
func clientCores() int {
	return max(1, min(runtime.GOMAXPROCS(0), runtime.NumCPU()))
}

// processCPU is this process's user + system CPU time; 0 when it cannot
// be read, which makes the CPU share 0 and never marks a run by itself.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runDelays is each thread's run delay so far (the second field of
// /proc/self/task/*/schedstat), by thread ID; empty where it cannot be
// read.
func runDelays() map[string]time.Duration {
	const dir = "/proc/self/task"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	out := make(map[string]time.Duration, len(ents))
	for _, e := range ents {
		b, err := os.ReadFile(dir + "/" + e.Name() + "/schedstat")
		if err != nil {
			continue // the thread ended
		}
		f := bytes.Fields(b)
		if len(f) < 2 {
			continue
		}
		if ns, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil {
			out[e.Name()] = time.Duration(ns)
		}
	}
	return out
}

func copyHist(h *metrics.Float64Histogram) *metrics.Float64Histogram {
	return &metrics.Float64Histogram{Counts: append([]uint64(nil), h.Counts...), Buckets: h.Buckets}
}

// histQuantile is the q quantile of the waits that after recorded since
// before (two readings of the runtime's histogram), at the upper bound of
// its bucket (the lower one where the upper is infinite); 0 when there
// were none. Waits under the first bucket above zero are left out: the
// runtime records a zero wait each time a goroutine comes back from a
// system call without losing its CPU (every read and write of a
// connection), and those would make the median zero however starved the
// client is.
func histQuantile(before, after *metrics.Float64Histogram, q float64) time.Duration {
	if len(before.Counts) != len(after.Counts) || len(after.Buckets) != len(after.Counts)+1 {
		return 0
	}
	counted := func(i int) uint64 {
		if after.Buckets[i] <= 0 {
			return 0 // a bucket that holds zero
		}
		return after.Counts[i] - before.Counts[i]
	}
	var total uint64
	for i := range after.Counts {
		total += counted(i)
	}
	if total == 0 {
		return 0
	}
	want := uint64(math.Ceil(q * float64(total)))
	var seen uint64
	for i := range after.Counts {
		seen += counted(i)
		if seen >= want {
			v := after.Buckets[i+1]
			if math.IsInf(v, 1) {
				v = after.Buckets[i]
			}
			return time.Duration(v * float64(time.Second))
		}
	}
	return 0
}
