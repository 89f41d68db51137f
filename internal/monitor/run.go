package monitor

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/shakedown/shakedown/internal/flavour"
	"github.com/shakedown/shakedown/internal/host"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/runner"
	"github.com/shakedown/shakedown/internal/stall"
	"github.com/shakedown/shakedown/internal/stats"
	"github.com/shakedown/shakedown/internal/target"
)

// RunConfig says how to watch one run.
type RunConfig struct {
	Target *target.Target
	// Server is what answers at Target: its flavour says which limits
	// mean "no limit" and whether SHOW GLOBAL STATUS keeps the counters
	// the cross-check needs.
	Server target.Server
	// Sample turns the server sampler on (--monitor).
	Sample bool
	// Interval is the sampling interval; 0 means one second.
	Interval time.Duration
	// MetricsAddr, when set and Exporter is not, serves Prometheus metrics
	// there for the length of the run (--metrics-addr).
	MetricsAddr string
	// Exporter, when set, receives the run's figures and MetricsAddr is
	// ignored: whoever set it serves it (a sweep keeps one for all steps).
	Exporter *Exporter
	// Needs is checked before the run (pre-flight).
	Needs Needs
	// Info labels the run's metrics.
	Info RunInfo
	// Proc is the proc file system's root; "" means /proc.
	Proc string
	// Stall, when set, captures what the server is doing when one of its
	// triggers holds (--stall); it needs Sample.
	Stall *stall.Config
	// Counter is the server counter the client vs server cross-check
	// compares the client's statements with: "" means Questions; a
	// workload that sends what Questions does not count names another,
	// or NoCounter.
	Counter string
}

// Run watches one run: pre-flight checks, the server sampler on a
// connection of its own, host figures when the server is on this host, and
// metrics. Its methods are safe to call from the runner's reporting
// goroutine while the run goes on.
type Run struct {
	cfg      RunConfig
	db       *sql.DB
	rec      *Recording
	exp      *Exporter
	metrics  *MetricsServer
	findings []Finding
	notes    []string
	local    bool
	pid      int
	// metricsPort is the status port read beside SHOW GLOBAL STATUS.
	metricsPort string
	// nodes are the target's other hosts, sampled beside the first.
	nodes   []*sql.DB
	stall   *stall.Watcher
	stallDB *sql.DB
	facts   *host.Facts // the server's host, read at the start
	client  *host.Facts // this host, when the server is on another

	mu         sync.Mutex
	measureAt  time.Time // start of measurement, from the first interval
	cpuAtStart float64
	finished   bool
}

// StartRun opens the sampler's connection, runs the pre-flight checks and
// starts sampling and serving metrics as configured. A check that finds the
// run cannot succeed returns a *PreflightError (errors.Is ErrPreflight).
// Close must be called when it returns no error.
func StartRun(ctx context.Context, cfg RunConfig) (*Run, error) {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.Proc == "" {
		cfg.Proc = "/proc"
	}
	r := &Run{cfg: cfg}
	ep := cfg.Target.Endpoints()[0]
	r.local = ep.Local()
	db, err := cfg.Target.OpenNoDB(ep, 1)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1) // one connection: its statements are the sampler's alone
	r.db = db
	// A server that cannot answer the checks (a missing privilege, a
	// dialect without SHOW ... WHERE) still gets its run: the load itself
	// will say what is wrong, if anything is.
	if r.findings, err = Preflight(ctx, db, cfg.Needs, cfg.Server.Flavour); err != nil {
		r.notes = append(r.notes, "Pre-flight checks skipped: "+err.Error())
	}
	if err := Stops(r.findings); err != nil {
		db.Close()
		return nil, err
	}
	for _, f := range r.findings {
		r.notes = append(r.notes, "Pre-flight "+f.String())
	}
	r.facts, r.client = r.collectFacts(ctx, ep)
	r.exp = cfg.Exporter
	if r.exp == nil && cfg.MetricsAddr != "" {
		r.exp = NewExporter()
		if r.metrics, err = ServeMetrics(cfg.MetricsAddr, r.exp); err != nil {
			db.Close()
			return nil, err
		}
		r.notes = append(r.notes, "Metrics: "+r.metrics.URL())
	}
	if r.exp != nil {
		r.exp.StartRun(cfg.Info)
	}
	if !cfg.Sample {
		db.Close()
		r.db = nil
		r.cpuAtStart, _ = SelfCPU()
		return r, nil
	}
	opt := Options{}
	if r.local {
		opt.Limits.Cores = runtime.NumCPU()
		r.pid = r.findPID(ctx, ep)
		opt.Host = &HostOptions{Proc: cfg.Proc, ServerPID: r.pid, Client: true}
	}
	if f := cfg.Server.Flavour; f != "" && !f.StatusCounters() {
		opt.MetricsPort = flavour.StatusEndpoint(ctx, f, db, ep.Host)
		r.metricsPort = opt.MetricsPort
	}
	if err := r.openNodes(&opt); err != nil {
		r.Close()
		return nil, err
	}
	s := NewSampler(db, opt)
	if cfg.Stall != nil {
		if err := r.startStall(ctx, ep); err != nil {
			r.Close()
			return nil, err
		}
	}
	onSample := func(smp result.Sample) {
		if r.exp != nil {
			r.exp.ObserveSample(smp, s.Statuses())
		}
		if r.stall != nil {
			r.stall.Observe(ctx, smp)
		}
	}
	r.rec = s.Record(ctx, cfg.Interval, onSample)
	note := fmt.Sprintf("Monitor: server status every %s on a connection of its own", cfg.Interval)
	switch {
	case r.local && r.pid > 0:
		note += fmt.Sprintf("; host figures and server process %d", r.pid)
	case r.local:
		note += "; host figures (server process not found)"
	}
	r.notes = append(r.notes, note)
	r.cpuAtStart, _ = SelfCPU()
	return r, nil
}

// findPID looks for the server's process by its port, then by @@pid_file.
func (r *Run) findPID(ctx context.Context, ep target.Endpoint) int {
	pid, err := FindServerPID(r.cfg.Proc, ep.Port, PIDFile(ctx, r.db))
	if err != nil {
		return 0
	}
	return pid
}

// WriteNotes writes what the watching does and the pre-flight warnings, one
// line each.
func (r *Run) WriteNotes(w io.Writer) {
	for _, n := range r.notes {
		fmt.Fprintln(w, n)
	}
	if len(r.notes) > 0 {
		fmt.Fprintln(w)
	}
}

// Findings are the pre-flight findings that did not stop the run.
func (r *Run) Findings() []Finding { return r.findings }

// MetricsURL is where the metrics are served, or "".
func (r *Run) MetricsURL() string {
	if r.metrics == nil {
		return ""
	}
	return r.metrics.URL()
}

// ObserveInterval passes one of the runner's intervals on: it dates the
// start of measurement and feeds the metrics. Call it from
// runner.Config.OnInterval.
func (r *Run) ObserveInterval(iv runner.Interval) {
	r.mu.Lock()
	if r.measureAt.IsZero() {
		r.measureAt = time.Now().Add(-iv.At)
	}
	r.mu.Unlock()
	if r.exp != nil {
		r.exp.ObserveInterval(iv)
	}
	if r.stall != nil && iv.Latency != nil {
		h := iv.Latency
		r.stall.ObserveLatency(func(p float64) (float64, bool) {
			if h.Count() == 0 {
				return 0, false
			}
			return float64(h.Percentile(p)) / float64(time.Millisecond), true
		})
	}
}

// MeasureStart says measurement starts now (after a warm-up): the client's
// CPU is counted from here. Call it from runner.Config.OnWarmupDone.
func (r *Run) MeasureStart() {
	c, err := SelfCPU()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil {
		r.cpuAtStart = c
	}
}

// Finish stops sampling and returns what the watching adds to the result
// of the run that o describes. It may be called once; Close is still
// needed.
func (r *Run) Finish(o *runner.Outcome) *result.Monitor {
	cpu, _ := SelfCPU()
	rep := &result.Monitor{}
	r.mu.Lock()
	r.finished = true
	start := r.measureAt
	cpuStart := r.cpuAtStart
	r.mu.Unlock()
	if start.IsZero() {
		start = time.Now().Add(-o.Elapsed)
	}
	if r.rec != nil {
		rep.Server = r.rec.Stop()
		rep.Server.Shift(start.Truncate(time.Millisecond))
		if o.Degraded() {
			// Neither side counted while the server was away: no
			// verdict, and not "too short" either.
			rep.CrossCheck = &result.CrossCheck{Note: "the server could not be reached for part of the run"}
		} else {
			rep.CrossCheck = result.CheckCounter(rep.Server, runner.Rates(o.Intervals), r.cfg.Counter)
		}
		f := r.cfg.Server.Flavour
		switch {
		case f != "" && !f.StatusCounters() && r.metricsPort == "":
			rep.CrossCheck = &result.CrossCheck{NotApplicable: true,
				Note: f.Title() + " keeps no statement counters in SHOW GLOBAL STATUS, and its status port did not answer"}
		case f.BackendCounters() && rep.CrossCheck != nil && rep.CrossCheck.Mismatch:
			// A mismatch says nothing there: the counters are not the
			// gateway's. On one shard they agree, and the check stands.
			cc := rep.CrossCheck
			cc.Mismatch, cc.NotApplicable = false, true
			cc.Note = f.Title() + " cannot be cross-checked beyond one shard: its status counters are those of the server beneath, where a statement run on several shards counts on each, and shards on other servers count nowhere"
		}
	}
	if r.stall != nil {
		rep.Stalls, rep.StallsSkipped = r.stall.Finish()
		shiftStalls(rep.Stalls, start.Truncate(time.Millisecond))
	}
	if r.exp != nil {
		codes := map[string]int64{}
		for c, n := range o.Errors {
			codes[strconv.Itoa(int(c))] = n
		}
		r.exp.EndRun(codes, o.Latency)
	}
	h := &result.HostSummary{Local: r.local, Cores: runtime.NumCPU(), ServerPID: r.pid, ClientCPUS: stats.Round(cpu-cpuStart, 3)}
	if q := o.Queries(); q > 0 {
		h.ClientCPUPerQueryUS = stats.Round(h.ClientCPUS/float64(q)*1e6, 2)
	}
	if cc := rep.CrossCheck; cc != nil && cc.ServerQPS > 0 && rep.Server != nil {
		if cpu, _, ok := rep.Server.Mean("server_cpu", cc.FromS, cc.ToS); ok {
			h.ServerCPUPerQueryUS = stats.Round(cpu/100/cc.ServerQPS*1e6, 2)
		}
	}
	h.Throttling = result.ThrottlingOf(rep.Server)
	h.Kernel = result.KernelOf(rep.Server)
	rep.Host = h
	rep.HostFacts, rep.ClientFacts = r.facts, r.client
	for _, f := range r.findings {
		rep.Checks = append(rep.Checks, "pre-flight "+f.String())
	}
	if cc := rep.CrossCheck; cc != nil && cc.Mismatch {
		rep.Checks = append(rep.Checks, fmt.Sprintf("client vs server QPS mismatch: client %.2f, server %.2f: %s", cc.ClientQPS, cc.ServerQPS, cc.Note))
	}
	return rep
}

// Close stops sampling and serving metrics and closes the connection.
func (r *Run) Close() {
	if r.rec != nil {
		r.rec.Stop()
	}
	if r.exp != nil {
		r.mu.Lock()
		finished := r.finished
		r.mu.Unlock()
		if !finished {
			r.exp.EndRun(nil, nil)
		}
	}
	if r.stall != nil {
		r.stall.Finish() // a capture under way uses stallDB
	}
	if r.stallDB != nil {
		r.stallDB.Close()
	}
	if r.metrics != nil {
		r.metrics.Close()
	}
	if r.db != nil {
		r.db.Close()
	}
	for _, n := range r.nodes {
		n.Close()
	}
}

// openNodes opens a connection to each of the target's hosts after the
// first, whose status the sampler adds to the first's: a load spreads its
// connections over all of them.
func (r *Run) openNodes(opt *Options) error {
	for _, ep := range r.cfg.Target.Endpoints()[1:] {
		db, err := r.cfg.Target.OpenNoDB(ep, 1)
		if err != nil {
			return err
		}
		db.SetMaxOpenConns(1)
		r.nodes = append(r.nodes, db)
		opt.Nodes = append(opt.Nodes, db)
		opt.NodeNames = append(opt.NodeNames, ep.String())
	}
	return nil
}
