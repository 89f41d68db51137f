package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/monitor"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/runner"
	"github.com/shakedown/shakedown/internal/stall"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/workload"
)

// PrepareOptions adjust a prepare or cleanup.
type PrepareOptions struct {
	// Out receives the header and the workload's progress; nil prints
	// nothing.
	Out io.Writer
	// Version is shakedown's, printed in the header.
	Version string
}

// Prepare runs the workload's prepare (Verb "prepare") or cleanup.
func (j *Job) Prepare(ctx context.Context, opt PrepareOptions) error {
	out := opt.Out
	if out == nil {
		out = io.Discard
	}
	db, _, err := j.connect(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	env := &workload.PrepareEnv{DB: db, Threads: j.spec.Threads, Rand: j.spec.Rand, Out: out}
	fmt.Fprintf(out, "shakedown %s\n\n", opt.Version)
	start := time.Now()
	switch j.Verb {
	case "prepare":
		pr, ok := j.Gen.(workload.Preparer)
		if !ok {
			return usagef("%s has no prepare phase", j.Workload())
		}
		err = pr.Prepare(ctx, env)
	case "cleanup":
		cl, ok := j.Gen.(workload.Cleaner)
		if !ok {
			return usagef("%s has no cleanup phase", j.Workload())
		}
		err = cl.Cleanup(ctx, env)
	default:
		return fmt.Errorf("engine: Prepare called for %q", j.Verb)
	}
	if err != nil {
		var ie *workload.IncompleteError
		switch {
		case ctx.Err() != nil && errors.As(err, &ie):
			return fmt.Errorf("%w: incomplete: %s: run cleanup, then prepare again", ErrInterrupted, strings.Join(ie.Tables, ", "))
		case ctx.Err() != nil:
			return ErrInterrupted
		}
		return fmt.Errorf("%s %s: %w", j.Verb, j.Workload(), err)
	}
	fmt.Fprintf(out, "%s done in %.2fs\n", j.Verb, time.Since(start).Seconds())
	return nil
}

// RunOptions adjust a run.
type RunOptions struct {
	// Version is shakedown's, printed in the header and recorded in the
	// result.
	Version string
	// IOTuning is a benchmark's tuning of the client's I/O loops, which
	// the command layer reads from the environment (client.ReadIOTuning);
	// its zero value is the rules.
	IOTuning client.IOTuning
	// Out receives sysbench's header, interval lines and summary; nil prints nothing.
	Out io.Writer
	// OnInterval is called after each interval (every second when
	// --report-interval is 0).
	OnInterval func(runner.Interval)
	// Metrics, when set, receives the run's client and server figures (a
	// sweep serves one Exporter for all its steps); else --metrics-addr
	// serves the run's own.
	Metrics *monitor.Exporter
	// Intervals, when set, receives every measured interval's exact
	// counts and latency histogram, which a runner of a split load stores
	// so that the runners can be merged second by second.
	Intervals *[]result.IntervalHDR
}

// Run runs the load. It returns the result of whatever was measured, also
// when the run failed or was interrupted part way; err then says why.
// Keeping the result (--json, --store) is the caller's.
func (j *Job) Run(ctx context.Context, opt RunOptions) (*result.Result, error) {
	op, ok := j.Gen.(workload.Opser)
	if !ok {
		return nil, usagef("%s has no run phase", j.Workload())
	}
	out := opt.Out
	if out == nil {
		out = io.Discard
	}
	db, srv, err := j.connect(ctx)
	if err != nil {
		return nil, err
	}
	if dc, ok := j.Gen.(workload.DataChecker); ok {
		env := &workload.PrepareEnv{DB: db, Threads: j.spec.Threads, Rand: j.spec.Rand, Out: out}
		if err := dc.CheckData(ctx, env); err != nil {
			db.Close()
			return nil, fmt.Errorf("%s on %s: %w", j.Workload(), j.Target, err)
		}
	}
	if rp, ok := j.Gen.(workload.RunPreparer); ok {
		env := &workload.PrepareEnv{DB: db, Threads: j.spec.Threads, Rand: j.spec.Rand, Out: out}
		if err := rp.PrepareRun(ctx, env); err != nil {
			db.Close()
			return nil, fmt.Errorf("%s: %w", j.Workload(), err)
		}
	}
	check, err := j.checkBefore(ctx, db, out)
	db.Close()
	if err != nil {
		return nil, err
	}
	mon, err := monitor.StartRun(ctx, j.monitorConfig(opt, srv))
	if err != nil {
		return nil, err
	}
	defer mon.Close()
	rc := j.rc
	ro, _ := j.Gen.(workload.ReadOnlyer)
	plan := client.IOChoice{Mode: j.spec.ClientIO, Tuning: opt.IOTuning}.ForRun(rc.Threads, ro != nil && ro.ReadOnly(), j.Target)
	cio := runner.StoredIO(plan, rc.Threads)
	j.header(out, srv, opt.Version, cio)
	mon.WriteNotes(out)
	var snapErr error
	keep := func(iv runner.Interval) {
		if opt.Intervals == nil {
			return
		}
		h, err := iv.HDR()
		if err != nil && snapErr == nil {
			snapErr = err
		}
		*opt.Intervals = append(*opt.Intervals, h)
	}
	rc.OnLastInterval = keep
	rc.IO = plan
	dialer := client.NewDialer(j.Target, client.Options{DB: j.Target.DB, PS: j.spec.PSMode != "disable", Plan: plan})
	rc.Connect = dialer.Connect
	rc.OnInterval = func(iv runner.Interval) {
		if j.spec.ReportIntervalS > 0 {
			result.WriteInterval(out, iv.Stored(), j.spec.Percentile)
		}
		mon.ObserveInterval(iv)
		keep(iv)
		if opt.OnInterval != nil {
			opt.OnInterval(iv)
		}
	}
	if rc.Interval == 0 {
		rc.Interval = time.Second
	}
	if rc.Warmup > 0 {
		fmt.Fprintf(out, "Warming up for %d seconds...\n", j.spec.WarmupS)
		rc.OnWarmupDone = func() { mon.MeasureStart(); fmt.Fprintln(out, "Warm-up done: measuring from now.") }
	}
	o, err := runner.Run(ctx, rc, op)
	if err != nil {
		if errors.Is(err, client.ErrMissingTables) {
			return nil, fmt.Errorf("%s on %s: %w", j.Workload(), j.Target, err)
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w before the run started; nothing measured", ErrInterrupted)
		}
		return nil, err
	}
	res, err := o.Document(j.Workload(), rc.Threads, j.spec.Percentile)
	if err != nil {
		return nil, err
	}
	if snapErr != nil {
		return nil, snapErr
	}
	res.Tool = "shakedown " + opt.Version
	if res.Client != nil {
		res.Client.IO = cio
	}
	res.Target = result.Target{Name: j.Target.String(), URL: j.Target.Redacted(), Version: srv.Version, Flavour: string(srv.Flavour)}
	res.Target.SetConnection(result.ClientWire, dialer.TLS())
	res.StartedAt = time.Now().Add(-o.Elapsed).UTC().Truncate(time.Second)
	res.WarmupS = rc.Warmup.Seconds()
	res.Rate = rc.Rate
	res.Arrivals, res.Unstarted = o.Arrivals, o.Unstarted
	if sp := j.split; sp.On {
		res.StartedAt = o.Measured.UTC().Truncate(time.Second)
		res.Segment = &result.Segment{Label: sp.Label(), Range: sp.Segment.String(), Sequence: sp.Sequence.String(),
			Index: sp.Index(), Runners: sp.Sequence.Len(), StartAt: sp.StartAt.UTC(), Started: o.Started.UTC(), Measured: o.Measured.UTC()}
		if err := o.KeepHistograms(res); err != nil {
			return nil, err
		}
	}
	res.Options = j.Options()
	res.AddMonitor(mon.Finish(o))
	checkErr := j.checkAfter(ctx, check, res, out)

	fmt.Fprintln(out)
	if j.spec.Histogram {
		result.WriteHistogram(out, o.Latency)
	}
	res.WriteSummary(out)
	switch {
	case o.Err != nil:
		if errors.Is(o.Err, client.ErrMissingTables) || target.Code(o.Err) == target.ERNoSuchTable {
			return res, fmt.Errorf("%s on %s: %w", j.Workload(), j.Target, client.ErrMissingTables)
		}
		return res, fmt.Errorf("run stopped: %w", o.Err)
	case o.Interrupted:
		return res, ErrInterrupted
	case checkErr != nil:
		return res, checkErr
	case o.Degraded():
		a := res.Availability
		return res, fmt.Errorf("%w: the server could not be reached for %.2fs of the run (%d of %d reconnect attempts failed; first: %s): the figures are kept, marked degraded, and left out of reports' verdicts",
			ErrDegraded, a.UnavailableS, a.ReconnectFailures, a.ReconnectAttempts, a.FirstError)
	}
	return res, nil
}

// monitorConfig says how the run is watched: the server sampler
// (--monitor), metrics (--metrics-addr) and what the pre-flight checks
// compare with the server's limits.
func (j *Job) monitorConfig(opt RunOptions, srv target.Server) monitor.RunConfig {
	n := monitor.Needs{Threads: j.spec.Threads}
	if f := j.fs.Lookup("tables"); f != nil {
		n.Tables, _ = strconv.Atoi(f.Value.String())
	}
	if p, ok := j.Gen.(workload.PreparedStatementser); ok && j.spec.PSMode != "disable" {
		n.PreparedPerThread, n.PreparedExact = p.PreparedStatements(), true
	}
	cfg := monitor.RunConfig{
		Target: j.Target, Server: srv, Sample: j.samples(), MetricsAddr: j.spec.MetricsAddr, Exporter: opt.Metrics, Needs: n,
		Info: monitor.RunInfo{Workload: j.Workload(), Target: j.Target.String(), Threads: j.rc.Threads},
	}
	if j.stall != nil && cfg.Sample {
		cfg.Stall = &stall.Config{Triggers: j.stall, Cooldown: j.spec.StallCooldown, Max: j.spec.StallMax, Stacks: j.spec.StallStacks}
	}
	if j.split.On {
		cfg.Info.Segment = j.split.Label()
	}
	if sc, ok := j.Gen.(workload.ServerCounted); ok {
		cfg.Counter = sc.ServerCounter()
		if cfg.Counter == "" {
			cfg.Counter = result.NoCounter
		}
	}
	return cfg
}

func (j *Job) header(w io.Writer, srv target.Server, version string, cio *result.ClientIO) {
	if j.Gen.Meta().Sysbench {
		fmt.Fprintf(w, "shakedown %s (sysbench-compatible %s)\n\n", version, j.Workload())
	} else {
		fmt.Fprintf(w, "shakedown %s (%s, shakedown's own workload)\n\n", version, j.Workload())
	}
	fmt.Fprintln(w, "Running the test with following options:")
	fmt.Fprintf(w, "Number of threads: %d\n", j.rc.Threads)
	if j.rc.Rate > 0 {
		fmt.Fprintf(w, "Target transaction rate: %g/sec\n", j.rc.Rate)
	}
	j.splitHeader(w)
	if j.spec.ReportIntervalS > 0 {
		fmt.Fprintf(w, "Report intermediate results every %d second(s)\n", j.spec.ReportIntervalS)
	}
	switch j.rc.ConnectMode {
	case runner.PerEvent:
		fmt.Fprintln(w, "Connect mode: transaction (a new connection for every event)")
	case runner.PerStatement:
		fmt.Fprintln(w, "Connect mode: query (a new connection for every statement)")
	}
	fmt.Fprintf(w, "Target: %s (%s %s)\n", j.Target, srv.Flavour, srv.Version)
	fmt.Fprintf(w, "Client I/O: %s\n", cio)
	if j.spec.Rand.Seed == 0 {
		fmt.Fprintln(w, "Initializing random number generator from current time")
	} else {
		fmt.Fprintf(w, "Initializing random number generator from seed (%d).\n", j.spec.Rand.Seed)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Initializing worker threads...")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Threads started!")
	fmt.Fprintln(w)
}
