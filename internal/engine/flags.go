package engine

import (
	"fmt"
	"io"
	"maps"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/randgen"
	"github.com/shakedown/shakedown/internal/runner"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/segment"
	"github.com/shakedown/shakedown/internal/stall"
	"github.com/shakedown/shakedown/internal/suggest"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/usage"
	"github.com/shakedown/shakedown/internal/workload"
)

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
	stallSpec      string
	stallCooldown  time.Duration
	stallMax       int
	stallStacks    bool
	stall          []stall.Trigger
	verbosity      int
	help           bool
	tflags         target.Flags
	rand           randgen.Config
	splitFlags     segment.Flags
	split          segment.Split // this process's part of the load

	// Warnings say which old sysbench options the line used and what
	// they became (see legacyArgs), for the command to show.
	Warnings []string

	fs *pflag.FlagSet
	rc runner.Config
}

func (j *Job) bind(fs *pflag.FlagSet) {
	fs.IntVar(&j.threads, "threads", 1, "number of threads to use")
	fs.IntVar(&j.timeS, "time", 10, "limit for total execution time in seconds (0 = no limit)")
	fs.Int64Var(&j.events, "events", 0, "limit for total number of events (0 = no limit)")
	fs.Float64Var(&j.rate, "rate", 0, "average transactions rate (0 = unlimited); latency then counts from each event's intended start")
	fs.IntVar(&j.warmupS, "warmup-time", 0, "run the load this many seconds before measuring; excluded from results")
	fs.IntVar(&j.reportInterval, "report-interval", 0, "print intermediate statistics every N seconds (0 = off)")
	fs.Float64Var(&j.percentile, "percentile", 95, "latency percentile to report, in (0, 100]")
	sbflag.BoolVar(fs, &j.histogram, "histogram", false, "print the latency histogram")
	fs.StringVar(&j.ignoreErrors, "mysql-ignore-errors", target.DefaultIgnoreErrors, "error codes to count and retry instead of stopping, or 'all'")
	fs.StringVar(&j.psMode, "db-ps-mode", "auto", "prepared statements: auto (server-side) or disable (text protocol)")
	fs.StringVar(&j.jsonPath, "json", "", "write the result document to this file")
	fs.StringVar(&j.storePath, "store", "", "also record the result in this results store: a SQLite file, or mysql://user@host:port/db, which the runners of a split load (--segment) share (password: SHAKEDOWN_STORE_PASSWORD)")
	fs.StringVar(&j.name, "name", "", "name of the target in results (default: its address)")
	fs.StringVar(&j.dbDriver, "db-driver", "mysql", "database driver (only mysql)")
	fs.StringVar(&j.connectMode, "connect-mode", "persistent", "when threads connect: persistent (one connection per thread), transaction (a new one for every event) or query (a new one for every statement); connect time is reported apart from latency")
	fs.StringVar(&j.clientIO, "client-io", "auto", "how client threads wait for the server: loop (threads as tasks of a few I/O loops on epoll: the least CPU per query), blocking (a blocking system call per read), polled (Go's poller) or auto (chooses by where the server runs; the header's Client I/O line says what)")
	sbflag.BoolVar(fs, &j.monitorOn, "monitor", true, "sample the server's status every second on a connection of its own and store the series with the result")
	sbflag.OptionalVar(fs, &j.stallSpec, "stall", "default", "capture the processlist, InnoDB status, lock waits and transactions when a trigger holds: comma-separated, e.g. 'threads_running>25 for 5s,qps<50%,p99>200ms' (alone: "+stall.DefaultSpec+"); reads only", stall.LooksLikeSpec)
	fs.DurationVar(&j.stallCooldown, "stall-cooldown", 60*time.Second, "quiet period after a stall capture in which no other is taken")
	fs.IntVar(&j.stallMax, "stall-max", 5, "most stall captures in one run")
	sbflag.BoolVar(fs, &j.stallStacks, "stall-stacks", false, "with --stall, also read the server's thread stacks with gdb, aggregated as pt-pmp does; this STOPS the server while gdb reads them (the pause is shown); a server on this machine only")
	fs.StringVar(&j.metricsAddr, "metrics-addr", "", "serve Prometheus metrics at HOST:PORT/metrics during the run (port 0 picks a free one)")
	fs.IntVar(&j.verbosity, "verbosity", 3, "accepted for sysbench compatibility")
	fs.BoolVarP(&j.help, "help", "h", false, "show the options")
	j.tflags.Bind(fs)
	j.rand.Flags(fs)
	j.splitFlags.Bind(fs)
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
// "oltp_read_write --threads=16 --time=60 --tables=4", or an old one such as
// "--test=oltp.lua --oltp-tables-count=4 --num-threads=16", whose options
// it maps to today's as sysbench 1.0.20 does (Job.Warnings says how). With --help it
// writes the options to help (nil: nowhere) and returns ErrHelp. The
// split options are read but not resolved: ResolveSplit does that, with
// the environment.
func Parse(verb string, args []string, help io.Writer) (*Job, error) {
	if help == nil {
		help = io.Discard
	}
	args, warnings, err := legacyArgs(args)
	if err != nil {
		return nil, err
	}
	name, idx, found := FindWorkload(args)
	if !found {
		if idx < 0 {
			for _, a := range args {
				if a == "--help" || a == "-h" {
					writeHelp(help, verb)
					return nil, ErrHelp
				}
			}
			return nil, usagef("%s: name a workload; workloads: %s", verb, strings.Join(workload.Names(), ", "))
		}
		if s := suggest.DidYouMean(name, workload.Names()); s != "" {
			return nil, usagef("unknown workload %q%s; shakedown help %s lists them", name, s, verb)
		}
		return nil, usagef("unknown workload %q; workloads: %s", name, strings.Join(workload.Names(), ", "))
	}
	rest := append(append([]string{}, args[:idx]...), args[idx+1:]...)
	meta, _ := workload.Lookup(name)
	j := &Job{Verb: verb, Workload: name, Gen: meta.New(), split: segment.Alone, Warnings: warnings}
	fs := sbflag.NewFlagSet(verb)
	j.bind(fs)
	if f, ok := j.Gen.(workload.Flagser); ok {
		fs.AddFlagSet(f.Flags())
	}
	j.fs = fs
	if err := fs.Parse(sbflag.JoinOptional(fs, rest)); err != nil {
		return nil, usagef("%s %s: %s", verb, name, sbflag.Explain(fs, err, "shakedown "+verb+" "+name+" --help"))
	}
	if j.help {
		fmt.Fprintf(help, "usage: shakedown %s %s [options]\n\n", verb, name)
		if h, ok := j.Gen.(workload.Helper); ok {
			fmt.Fprintf(help, "%s\nOptions:\n", h.Help())
		}
		fmt.Fprint(help, fs.FlagUsages())
		return nil, ErrHelp
	}
	if fs.NArg() > 0 {
		hint := ""
		if j.stallSpec == "default" {
			hint = fmt.Sprintf(" (a trigger after --stall compares a figure: --stall '%s' or --stall='%[1]s')", stall.DefaultSpec)
		}
		return nil, usagef("%s %s: unexpected argument %q%s", verb, name, fs.Arg(0), hint)
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

// writeHelp is "shakedown help run": the workloads, and the options every
// workload takes.
func writeHelp(w io.Writer, verb string) {
	fmt.Fprintf(w, "usage: shakedown %s WORKLOAD [options]\n\n%s\n\nWorkloads:\n", verb, verbHelp[verb])
	for _, n := range workload.Names() {
		m, _ := workload.Lookup(n)
		fmt.Fprintf(w, "  %-22s %s\n", n, m.Description)
	}
	fs := sbflag.NewFlagSet(verb)
	(&Job{}).bind(fs)
	fmt.Fprintf(w, "\nOptions of every workload (shakedown %s WORKLOAD --help adds the workload's own):\n%s", verb, fs.FlagUsages())
}

var verbHelp = map[string]string{
	"prepare": "Creates the workload's tables and data (sysbench's prepare).",
	"run": "Runs the workload and reports throughput and latency as sysbench does, then\nwhat sysbench does not say (percentiles, client against server, CPU per query).\n\n" +
		"  shakedown run oltp_read_write --target mysql://bench@db1:3306/sbtest \\\n" +
		"      --tables 4 --table-size 100000 --threads 16 --time 60 --store runs.db\n\n" +
		"The target and its password: shakedown help targets.",
	"cleanup": "Drops the workload's tables (sysbench's cleanup).",
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
	}
	if err := client.CheckIO(j.clientIO); err != nil {
		return &usage.Error{Msg: err.Error()}
	}
	if j.metricsAddr != "" {
		if _, _, err := net.SplitHostPort(j.metricsAddr); err != nil {
			return usagef("--metrics-addr must be HOST:PORT, e.g. 127.0.0.1:9100 (got %q)", j.metricsAddr)
		}
	}
	if err := j.validateStall(); err != nil {
		return err
	}
	if err := j.rand.Validate(); err != nil {
		return &usage.Error{Msg: err.Error()}
	}
	policy, err := client.ParseIgnore("--mysql-ignore-errors", j.ignoreErrors)
	if err != nil {
		return &usage.Error{Msg: err.Error()}
	}
	rc := runner.Config{Policy: policy}
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
		if f.Hidden { // taken and ignored, as sysbench does: nothing the run did
			return
		}
		switch f.Name {
		case "mysql-password", "target", "help", "json", "store", "segment", "segment-sequence", "segments", "segment-index-env", "start-at":
			return
		case "stall", "stall-cooldown", "stall-max", "stall-stacks":
			if j.stallSpec == "" { // runs without --stall keep the options they always had
				return
			}
		}
		m[f.Name] = f.Value.String()
	})
	if j.Target != nil {
		maps.Copy(m, j.Target.OptionValues()) // what --target resolved to, not the options' defaults
	}
	return m
}

// Grammar is the engine's command line as a sweep plan asks about it: a
// plan.Engine, handed to plan.Parse, since the plan lies below the engine.
type Grammar struct{}

// Takes is the package's Takes.
func (Grammar) Takes(wl, option string) bool { return Takes(wl, option) }

// Check is the error Parse gives the command line args of verb, or nil.
func (Grammar) Check(verb string, args []string) error {
	_, err := Parse(verb, args, io.Discard)
	return err
}

// Takes reports whether workload wl accepts option (named without dashes,
// '-' or '_' alike) on its command line: an option every workload takes,
// or one of its own. An unknown workload takes nothing.
func Takes(wl, option string) bool {
	meta, ok := workload.Lookup(wl)
	if !ok {
		return false
	}
	var j Job
	fs := sbflag.NewFlagSet("takes")
	j.bind(fs)
	if f, ok := meta.New().(workload.Flagser); ok {
		fs.AddFlagSet(f.Flags())
	}
	return fs.Lookup(string(sbflag.Normalize(fs, option))) != nil
}

// validateStall parses --stall and checks its bounds.
func (j *Job) validateStall() error {
	if j.stallSpec == "" {
		if j.stallStacks {
			return usagef("--stall-stacks needs --stall: stacks are read when a trigger fires")
		}
		return nil
	}
	switch {
	case !j.monitorOn:
		return usagef("--stall needs the sampler: drop --monitor=off")
	case j.stallCooldown <= 0:
		return usagef("--stall-cooldown must be > 0")
	case j.stallMax < 1:
		return usagef("--stall-max must be >= 1")
	}
	t, err := stall.Parse(j.stallSpec)
	if err != nil {
		return &usage.Error{Msg: err.Error()}
	}
	j.stall = t
	return nil
}
