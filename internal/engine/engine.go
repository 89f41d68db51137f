// Package engine turns a sysbench-style command line into a job and carries
// it out: prepare, run or cleanup of one workload at one concurrency against
// one target. The run command and the sweep both go through here, so a step
// of a sweep means exactly what the same command line means.
package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/monitor"
	"github.com/shakedown/shakedown/internal/randgen"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/runner"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/usage"
	"github.com/shakedown/shakedown/internal/wire"
	"github.com/shakedown/shakedown/internal/workload"
)

// usagef is bad input: the caller exits with code 2.
var usagef = usage.Errorf

// ErrHelp is returned by Parse when --help was asked for; the usage text has
// been written.
var ErrHelp = errors.New("help requested")

// ErrInterrupted means the context was cancelled before the job finished.
var ErrInterrupted = errors.New("interrupted")

// Job is one parsed prepare, run or cleanup.
type Job struct {
	Verb     string
	Workload string
	Gen      workload.Generator
	Target   *target.Target

	threads        int
	timeS          int
	events         int64
	rate           float64
	warmupS        int
	reportInterval int
	percentile     float64
	histogram      bool
	ignoreErrors   string
	psMode         string
	jsonPath       string
	storePath      string
	name           string
	dbDriver       string
	clientIO       string
	connectMode    string
	monitorOn      bool
	metricsAddr    string
	verbosity      int
	help           bool
	tflags         target.Flags
	rand           randgen.Config

	fs *pflag.FlagSet
	rc runner.Config
}

// Version is printed in headers and stored in results.
var Version = "dev"

func (j *Job) bind(fs *pflag.FlagSet) {
	fs.IntVar(&j.threads, "threads", 1, "number of threads to use")
	fs.IntVar(&j.timeS, "time", 10, "limit for total execution time in seconds (0 = no limit)")
	fs.Int64Var(&j.events, "events", 0, "limit for total number of events (0 = no limit)")
	fs.Float64Var(&j.rate, "rate", 0, "average transactions rate (0 = unlimited); latency then counts from each event's intended start")
	fs.IntVar(&j.warmupS, "warmup-time", 0, "run the load this many seconds before measuring; excluded from results")
	fs.IntVar(&j.reportInterval, "report-interval", 0, "print intermediate statistics every N seconds (0 = off)")
	fs.Float64Var(&j.percentile, "percentile", 95, "latency percentile to report, in (0, 100]")
	sbflag.BoolVar(fs, &j.histogram, "histogram", false, "print the latency histogram")
	fs.StringVar(&j.ignoreErrors, "mysql-ignore-errors", "1213,1020,1205", "error codes to count and retry instead of stopping, or 'all'")
	fs.StringVar(&j.psMode, "db-ps-mode", "auto", "prepared statements: auto (server-side) or disable (text protocol)")
	fs.StringVar(&j.jsonPath, "json", "", "write the result document to this file")
	fs.StringVar(&j.storePath, "store", "", "also record the result in this results store (SQLite file, as sweep and report use)")
	fs.StringVar(&j.name, "name", "", "name of the target in results (default: its address)")
	fs.StringVar(&j.dbDriver, "db-driver", "mysql", "database driver (only mysql)")
	fs.StringVar(&j.connectMode, "connect-mode", "persistent", "when threads connect: persistent (one connection per thread), transaction (a new one for every event) or query (a new one for every statement); connect time is reported apart from latency")
	fs.StringVar(&j.clientIO, "client-io", "auto", "how client threads wait for the server: blocking (least CPU per query, for a few threads per core), polled (fair at any thread count) or auto (blocking up to 8 threads per core)")
	sbflag.BoolVar(fs, &j.monitorOn, "monitor", true, "sample the server's status every second on a connection of its own and store the series with the result")
	fs.StringVar(&j.metricsAddr, "metrics-addr", "", "serve Prometheus metrics at HOST:PORT/metrics during the run (port 0 picks a free one)")
	fs.IntVar(&j.verbosity, "verbosity", 3, "accepted for sysbench compatibility")
	fs.BoolVarP(&j.help, "help", "h", false, "show the options")
	j.tflags.Bind(fs)
	j.rand.Flags(fs)
}

// FindWorkload picks the workload name out of args: the first argument that
// names a registered workload (a sysbench script path such as
// /usr/share/sysbench/oltp_read_write.lua counts as its base name).
func FindWorkload(args []string) (name string, idx int, found bool) {
	idx = -1
	for i, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		n := strings.TrimSuffix(filepath.Base(a), ".lua")
		if _, ok := workload.Lookup(n); ok {
			return n, i, true
		}
		if idx < 0 {
			name, idx = a, i
		}
	}
	return name, idx, false
}

// Parse reads a command line such as
// "oltp_read_write --threads=16 --time=60 --tables=4". With --help it
// writes the options to help and returns ErrHelp.
func Parse(verb string, args []string, help io.Writer) (*Job, error) {
	name, idx, found := FindWorkload(args)
	if !found {
		if idx < 0 {
			for _, a := range args {
				if a == "--help" || a == "-h" {
					fmt.Fprintf(help, "usage: shakedown %s WORKLOAD [options]\n\nworkloads: %s\n", verb, strings.Join(workload.Names(), ", "))
					return nil, ErrHelp
				}
			}
			return nil, usagef("%s: name a workload; workloads: %s", verb, strings.Join(workload.Names(), ", "))
		}
		return nil, usagef("unknown workload %q; workloads: %s", name, strings.Join(workload.Names(), ", "))
	}
	rest := append(append([]string{}, args[:idx]...), args[idx+1:]...)
	meta, _ := workload.Lookup(name)
	j := &Job{Verb: verb, Workload: name, Gen: meta.New()}
	fs := sbflag.NewFlagSet(verb)
	j.bind(fs)
	if f, ok := j.Gen.(workload.Flagser); ok {
		fs.AddFlagSet(f.Flags())
	}
	j.fs = fs
	if err := fs.Parse(rest); err != nil {
		return nil, usagef("%s %s: %v; valid options: %s", verb, name, err, flagNames(fs))
	}
	if j.help {
		fmt.Fprintf(help, "usage: shakedown %s %s [options]\n\n%s", verb, name, fs.FlagUsages())
		return nil, ErrHelp
	}
	if fs.NArg() > 0 {
		return nil, usagef("%s %s: unexpected argument %q", verb, name, fs.Arg(0))
	}
	if err := j.validate(); err != nil {
		return nil, err
	}
	if v, ok := j.Gen.(workload.Validator); ok {
		if err := v.Validate(); err != nil {
			return nil, usagef("%s: %v", name, err)
		}
	}
	tgt, err := j.tflags.Resolve()
	if err != nil {
		return nil, &usage.Error{Msg: err.Error()}
	}
	tgt.Name = j.name
	j.Target = tgt
	return j, nil
}

func flagNames(fs *pflag.FlagSet) string {
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, "--"+f.Name) })
	sort.Strings(names)
	return strings.Join(names, " ")
}

// validate checks the general options and turns them into a runner config.
func (j *Job) validate() error {
	switch {
	case j.threads < 1:
		return usagef("--threads must be >= 1")
	case j.timeS < 0:
		return usagef("--time must be >= 0")
	case j.events < 0:
		return usagef("--events must be >= 0")
	case j.Verb == "run" && j.timeS == 0 && j.events == 0:
		return usagef("--time=0 needs --events: a run needs a limit")
	case j.rate < 0:
		return usagef("--rate must be >= 0")
	case j.warmupS < 0:
		return usagef("--warmup-time must be >= 0")
	case j.reportInterval < 0:
		return usagef("--report-interval must be >= 0")
	case j.percentile <= 0 || j.percentile > 100:
		return usagef("--percentile must be in (0, 100]")
	case j.dbDriver != "mysql":
		return usagef("--db-driver: only mysql is supported")
	case j.psMode != "auto" && j.psMode != "disable":
		return usagef("--db-ps-mode must be auto or disable")
	case j.clientIO != "auto" && j.clientIO != "blocking" && j.clientIO != "polled":
		return usagef("--client-io must be auto, blocking or polled")
	}
	if j.metricsAddr != "" {
		if _, _, err := net.SplitHostPort(j.metricsAddr); err != nil {
			return usagef("--metrics-addr must be HOST:PORT, e.g. 127.0.0.1:9100 (got %q)", j.metricsAddr)
		}
	}
	if err := j.rand.Validate(); err != nil {
		return &usage.Error{Msg: err.Error()}
	}
	rc := runner.Config{}
	switch strings.ToLower(strings.TrimSpace(j.ignoreErrors)) {
	case "all":
		rc.IgnoreAll = true
	case "", "none":
	default:
		rc.Ignore = map[uint16]bool{}
		for _, part := range strings.Split(j.ignoreErrors, ",") {
			n, err := strconv.ParseUint(strings.TrimSpace(part), 10, 16)
			if err != nil {
				return usagef("--mysql-ignore-errors: %q is not an error code; give codes such as 1213,1205 or 'all'", part)
			}
			rc.Ignore[uint16(n)] = true
		}
	}
	rc.Threads = j.threads
	rc.Time = time.Duration(j.timeS) * time.Second
	rc.Events = j.events
	rc.Rate = j.rate
	rc.Warmup = time.Duration(j.warmupS) * time.Second
	rc.Interval = time.Duration(j.reportInterval) * time.Second
	rc.Percentile = j.percentile
	rc.Rand = j.rand
	mode, err := runner.ParseConnectMode(j.connectMode)
	if err != nil {
		return &usage.Error{Msg: err.Error()}
	}
	rc.ConnectMode = mode
	j.rc = rc
	return nil
}

// Threads is --threads.
func (j *Job) Threads() int { return j.threads }

// JSONPath is --json.
func (j *Job) JSONPath() string { return j.jsonPath }

// StorePath is --store.
func (j *Job) StorePath() string { return j.storePath }

// Options records every option's effective value except secrets.
func (j *Job) Options() map[string]string {
	m := map[string]string{}
	j.fs.VisitAll(func(f *pflag.Flag) {
		switch f.Name {
		case "mysql-password", "target", "help", "json", "store":
			return
		}
		m[f.Name] = f.Value.String()
	})
	return m
}

// connect opens a pool per endpoint and checks that the first answers, so a
// wrong password or a missing database is one clear line before anything
// else happens.
func (j *Job) connect(ctx context.Context) (*sql.DB, target.Server, error) {
	tgt := j.Target
	ep := tgt.Endpoints()[0]
	db, err := tgt.Open(ep, j.threads)
	if err != nil {
		return nil, target.Server{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, tgt.ConnectTimeout+time.Second)
	defer cancel()
	conn, err := db.Conn(cctx)
	if err != nil {
		db.Close()
		return nil, target.Server{}, tgt.Explain(ep, err)
	}
	defer conn.Close()
	srv, err := target.Detect(cctx, conn)
	if err != nil {
		db.Close()
		return nil, target.Server{}, tgt.Explain(ep, err)
	}
	return db, srv, nil
}

// Prepare runs the workload's prepare (Verb "prepare") or cleanup.
func (j *Job) Prepare(ctx context.Context, out io.Writer) error {
	db, _, err := j.connect(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	env := &workload.PrepareEnv{DB: db, Threads: j.threads, Rand: j.rand, Out: out}
	fmt.Fprintf(out, "shakedown %s\n\n", Version)
	start := time.Now()
	switch j.Verb {
	case "prepare":
		pr, ok := j.Gen.(workload.Preparer)
		if !ok {
			return usagef("%s has no prepare phase", j.Workload)
		}
		err = pr.Prepare(ctx, env)
	case "cleanup":
		cl, ok := j.Gen.(workload.Cleaner)
		if !ok {
			return usagef("%s has no cleanup phase", j.Workload)
		}
		err = cl.Cleanup(ctx, env)
	default:
		return fmt.Errorf("engine: Prepare called for %q", j.Verb)
	}
	if err != nil {
		if ctx.Err() != nil {
			return ErrInterrupted
		}
		return fmt.Errorf("%s %s: %w", j.Verb, j.Workload, err)
	}
	fmt.Fprintf(out, "%s done in %.2fs\n", j.Verb, time.Since(start).Seconds())
	return nil
}

// RunOptions adjust a run.
type RunOptions struct {
	// Out receives sysbench's header, interval lines and summary; nil prints nothing.
	Out io.Writer
	// OnInterval is called after each interval (every second when
	// --report-interval is 0).
	OnInterval func(runner.Interval)
	// Metrics, when set, receives the run's client and server figures (a
	// sweep serves one Exporter for all its steps); else --metrics-addr
	// serves the run's own.
	Metrics *monitor.Exporter
}

// Run runs the load. It returns the result of whatever was measured, also
// when the run failed or was interrupted part way; err then says why.
// The result is written to --json when set.
func (j *Job) Run(ctx context.Context, opt RunOptions) (*result.Result, error) {
	op, ok := j.Gen.(workload.Opser)
	if !ok {
		return nil, usagef("%s has no run phase", j.Workload)
	}
	out := opt.Out
	if out == nil {
		out = io.Discard
	}
	db, srv, err := j.connect(ctx)
	if err != nil {
		return nil, err
	}
	if rp, ok := j.Gen.(workload.RunPreparer); ok {
		env := &workload.PrepareEnv{DB: db, Threads: j.threads, Rand: j.rand, Out: out}
		if err := rp.PrepareRun(ctx, env); err != nil {
			db.Close()
			return nil, fmt.Errorf("%s: %w", j.Workload, err)
		}
	}
	db.Close()
	mon, err := monitor.StartRun(ctx, j.monitorConfig(opt))
	if err != nil {
		return nil, err
	}
	defer mon.Close()
	j.header(out, srv)
	mon.WriteNotes(out)
	rc := j.rc
	dialer := runner.NewDialer(j.Target, j.psMode != "disable", j.ioOptions())
	defer dialer.Close()
	rc.Connect = dialer.Connect
	rc.OnInterval = func(iv runner.Interval) {
		if j.reportInterval > 0 {
			result.WriteInterval(out, iv, j.percentile)
		}
		mon.ObserveInterval(iv)
		if opt.OnInterval != nil {
			opt.OnInterval(iv)
		}
	}
	if rc.Interval == 0 {
		rc.Interval = time.Second
	}
	if rc.Warmup > 0 {
		fmt.Fprintf(out, "Warming up for %d seconds...\n", j.warmupS)
		rc.OnWarmupDone = func() { mon.MeasureStart(); fmt.Fprintln(out, "Warm-up done: measuring from now.") }
	}
	o, err := runner.Run(ctx, rc, op)
	if err != nil {
		if errors.Is(err, runner.ErrMissingTables) {
			return nil, fmt.Errorf("%s on %s: %w", j.Workload, j.Target, err)
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w before the run started; nothing measured", ErrInterrupted)
		}
		return nil, err
	}
	res, err := result.Build(o, j.Workload, j.threads, j.percentile)
	if err != nil {
		return nil, err
	}
	res.Tool = "shakedown " + Version
	res.Target = result.Target{Name: j.Target.String(), URL: j.Target.Redacted(), Version: srv.Version, Flavour: srv.Flavour}
	res.StartedAt = time.Now().Add(-o.Elapsed).UTC().Truncate(time.Second)
	res.WarmupS = rc.Warmup.Seconds()
	res.Rate = j.rate
	res.Options = j.Options()
	res.AddMonitor(mon.Finish(o))

	fmt.Fprintln(out)
	if j.histogram {
		result.WriteHistogram(out, o.Latency)
	}
	res.WriteSummary(out)
	if j.jsonPath != "" {
		if err := res.WriteFile(j.jsonPath); err != nil {
			return res, err
		}
		fmt.Fprintf(out, "\nResult written to %s\n", j.jsonPath)
	}
	switch {
	case o.Err != nil:
		if errors.Is(o.Err, runner.ErrMissingTables) || target.Code(o.Err) == 1146 {
			return res, fmt.Errorf("%s on %s: %w", j.Workload, j.Target, runner.ErrMissingTables)
		}
		return res, fmt.Errorf("run stopped: %w", o.Err)
	case o.Interrupted:
		return res, ErrInterrupted
	}
	return res, nil
}

// monitorConfig says how the run is watched: the server sampler
// (--monitor), metrics (--metrics-addr) and what the pre-flight checks
// compare with the server's limits.
func (j *Job) monitorConfig(opt RunOptions) monitor.RunConfig {
	n := monitor.Needs{Threads: j.threads}
	if f := j.fs.Lookup("tables"); f != nil {
		n.Tables, _ = strconv.Atoi(f.Value.String())
	}
	if j.psMode != "disable" {
		// oltp_common prepares up to 9 statement groups per table plus
		// BEGIN and COMMIT; a workload that knows says so exactly.
		n.PreparedPerThread = n.Tables*9 + 2
		if p, ok := j.Gen.(interface{ PreparedStatements() int }); ok {
			n.PreparedPerThread, n.PreparedExact = p.PreparedStatements(), true
		}
	}
	cfg := monitor.RunConfig{
		Target: j.Target, Sample: j.monitorOn, MetricsAddr: j.metricsAddr, Exporter: opt.Metrics, Needs: n,
		Info: monitor.RunInfo{Workload: j.Workload, Target: j.Target.String(), Threads: j.threads},
	}
	if sc, ok := j.Gen.(workload.ServerCounted); ok {
		cfg.Counter = sc.ServerCounter()
		if cfg.Counter == "" {
			cfg.Counter = monitor.NoCounter
		}
	}
	return cfg
}

// blockingPerCore is how many threads per core still share the CPU fairly
// with blocking I/O; beyond it, threads that wait for a core skew the load.
const blockingPerCore = 8

func (j *Job) ioOptions() wire.Options {
	switch j.clientIO {
	case "blocking":
		return wire.Options{Blocking: true}
	case "polled":
		return wire.Options{}
	}
	return wire.Options{Blocking: j.threads <= blockingPerCore*runtime.GOMAXPROCS(0)}
}

func (j *Job) header(w io.Writer, srv target.Server) {
	fmt.Fprintf(w, "shakedown %s (sysbench-compatible %s)\n\n", Version, j.Workload)
	fmt.Fprintln(w, "Running the test with following options:")
	fmt.Fprintf(w, "Number of threads: %d\n", j.threads)
	if j.rate > 0 {
		fmt.Fprintf(w, "Target transaction rate: %g/sec\n", j.rate)
	}
	if j.reportInterval > 0 {
		fmt.Fprintf(w, "Report intermediate results every %d second(s)\n", j.reportInterval)
	}
	switch j.rc.ConnectMode {
	case runner.PerEvent:
		fmt.Fprintln(w, "Connect mode: transaction (a new connection for every event)")
	case runner.PerStatement:
		fmt.Fprintln(w, "Connect mode: query (a new connection for every statement)")
	}
	fmt.Fprintf(w, "Target: %s (%s %s)\n", j.Target, srv.Flavour, srv.Version)
	if j.rand.Seed == 0 {
		fmt.Fprintln(w, "Initializing random number generator from current time")
	} else {
		fmt.Fprintf(w, "Initializing random number generator from seed (%d).\n", j.rand.Seed)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Initializing worker threads...")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Threads started!")
	fmt.Fprintln(w)
}
