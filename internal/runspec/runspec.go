// Package runspec holds a run as a typed value: the Spec of one prepare,
// run or cleanup of a workload (its threads, limits and rate, every other
// option all workloads take, and the workload's own options) that a
// command line, a sweep plan, a capacity search and a bisect all describe
// and the engine carries out.
//
// A run crosses package lines as a Spec, never as a command line: the
// bench's ParseArgs is the one reader of argv, and Spec.Args writes a
// Spec back as the command line that is stored and can be run again.
//
// The package holds names and values only, no connection and no
// workload, so that it sits low: on the layer of the workloads and the
// clients, below the plan, which makes a Spec of every step of a sweep,
// and below the engine, which runs one.
package runspec

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/randgen"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/segment"
	"github.com/shakedown/shakedown/internal/target"
)

// Option is one option by name, spelled as on the command line without its
// leading dashes, with its value as text.
type Option struct {
	Key, Value string
}

// Spec is one prepare, run or cleanup of a workload, without its verb. Its
// zero value is not a run: start from New, which sets every option to its
// default, and change what differs. Each field is the option named beside
// it, in the option's unit.
//
// The connection options and the workload's own stay by name (Conn,
// Options), in the order given: they belong to flag sets of their own
// (target.Flags reads which of its options were set; each workload owns
// its flag set), to which the engine applies them with pflag's Set, after
// the typed fields, as later options of a command line win.
type Spec struct {
	// Workload is the workload's registered name.
	Workload string

	Threads         int           // --threads
	TimeS           int           // --time, seconds; 0: no limit
	Events          int64         // --events; 0: no limit
	Rate            float64       // --rate, events a second; 0: unlimited
	WarmupS         int           // --warmup-time, seconds
	ReportIntervalS int           // --report-interval, seconds; 0: off
	Percentile      float64       // --percentile
	Histogram       bool          // --histogram
	IgnoreErrors    string        // --mysql-ignore-errors
	PSMode          string        // --db-ps-mode: auto or disable
	JSONPath        string        // --json
	StorePath       string        // --store
	Name            string        // --name: the target's, in results
	DBDriver        string        // --db-driver
	ConnectMode     string        // --connect-mode
	ClientIO        string        // --client-io
	Monitor         bool          // --monitor
	Stall           string        // --stall: the triggers; "" for none
	StallCooldown   time.Duration // --stall-cooldown
	StallMax        int           // --stall-max
	StallStacks     bool          // --stall-stacks
	MetricsAddr     string        // --metrics-addr
	Verbosity       int           // --verbosity

	// Rand is the random numbers' options (--rand-*).
	Rand randgen.Config
	// Split is the options of one runner of a split load (--segment and
	// the rest), unresolved: resolving them reads the environment.
	Split segment.Flags

	// Conn are the connection options (--target, --mysql-host...), as
	// given. They may hold a password: a line to store goes through the
	// bench's PublicArgs.
	Conn []Option
	// Options are the workload's own options, as given. A sweep plan
	// names every option it sets here, a general one too: the engine
	// applies them in order after the typed fields.
	Options []Option
}

// Owned is what two options need from the packages that own them, which
// lie above this one: --stall's syntax (package stall: the triggers a
// bare --stall stands for, which its help names, and which argument after
// --stall is its triggers rather than the next word of the line), and
// the one binder of --client-io (package client's, which run, slap and
// replay share).
type Owned struct {
	StallAlone      string
	IsStallTriggers func(string) bool
	BindIO          func(fs *pflag.FlagSet, mode *string)
}

// Bind adds the general options, --threads to --verbosity, to fs, bound to
// s's fields, which it sets to the defaults. The random numbers' options
// are s.Rand's (randgen.Config.Flags) and the split's s.Split's
// (segment.Flags.Bind), bound apart: the engine's help lists the
// connection options between.
func (s *Spec) Bind(fs *pflag.FlagSet, owned Owned) {
	fs.IntVar(&s.Threads, "threads", 1, "number of threads to use")
	fs.IntVar(&s.TimeS, "time", 10, "limit for total execution time in seconds (0 = no limit)")
	fs.Int64Var(&s.Events, "events", 0, "limit for total number of events (0 = no limit)")
	fs.Float64Var(&s.Rate, "rate", 0, "average transactions rate (0 = unlimited); latency then counts from each event's intended start")
	fs.IntVar(&s.WarmupS, "warmup-time", 0, "run the load this many seconds before measuring; excluded from results")
	fs.IntVar(&s.ReportIntervalS, "report-interval", 0, "print intermediate statistics every N seconds (0 = off)")
	fs.Float64Var(&s.Percentile, "percentile", 95, "latency percentile to report, in (0, 100]")
	sbflag.BoolVar(fs, &s.Histogram, "histogram", false, "print the latency histogram")
	fs.StringVar(&s.IgnoreErrors, "mysql-ignore-errors", target.DefaultIgnoreErrors, "error codes to count and retry instead of stopping, or 'all'")
	fs.StringVar(&s.PSMode, "db-ps-mode", "auto", "prepared statements: auto (server-side) or disable (text protocol)")
	fs.StringVar(&s.JSONPath, "json", "", "write the result document to this file")
	fs.StringVar(&s.StorePath, "store", "", "also record the result in this results store: a SQLite file, or mysql://user@host:port/db, which the runners of a split load (--segment) share (password: SHAKEDOWN_STORE_PASSWORD)")
	fs.StringVar(&s.Name, "name", "", "name of the target in results (default: its address)")
	fs.StringVar(&s.DBDriver, "db-driver", "mysql", "database driver (only mysql)")
	fs.StringVar(&s.ConnectMode, "connect-mode", "persistent", "when threads connect: persistent (one connection per thread), transaction (a new one for every event) or query (a new one for every statement); connect time is reported apart from latency")
	if owned.BindIO != nil {
		owned.BindIO(fs, &s.ClientIO)
	} else {
		fs.StringVar(&s.ClientIO, "client-io", "auto", "") // for the defaults and Args alone
	}
	sbflag.BoolVar(fs, &s.Monitor, "monitor", true, "sample the server's status every second on a connection of its own and store the series with the result")
	s.Stall = "" // an optional option's default is the value it is bound to
	sbflag.OptionalVar(fs, &s.Stall, "stall", "default", "capture the processlist, InnoDB status, lock waits and transactions when a trigger holds: comma-separated, e.g. 'threads_running>25 for 5s,qps<50%,p99>200ms' (alone: "+owned.StallAlone+"); reads only", owned.IsStallTriggers)
	fs.DurationVar(&s.StallCooldown, "stall-cooldown", 60*time.Second, "quiet period after a stall capture in which no other is taken")
	fs.IntVar(&s.StallMax, "stall-max", 5, "most stall captures in one run")
	sbflag.BoolVar(fs, &s.StallStacks, "stall-stacks", false, "with --stall, also read the server's thread stacks with gdb, aggregated as pt-pmp does; this STOPS the server while gdb reads them (the pause is shown); a server on this machine only")
	fs.StringVar(&s.MetricsAddr, "metrics-addr", "", "serve Prometheus metrics at HOST:PORT/metrics during the run (port 0 picks a free one)")
	fs.IntVar(&s.Verbosity, "verbosity", 3, "accepted for sysbench compatibility")
}

// typed binds every typed field of s to fs: what New defaults and Args
// writes. The syntax of --stall does not matter to either.
func (s *Spec) typed(fs *pflag.FlagSet) {
	s.Bind(fs, Owned{})
	s.Rand.Flags(fs)
	s.Split.Bind(fs)
}

// New is the run of workload with every option at its default, as a
// command line that names only the workload means.
func New(workload string) Spec {
	var s Spec
	s.typed(sbflag.NewFlagSet("defaults"))
	s.Workload = workload
	return s
}

// Args is the command line of s after its verb: the workload, --threads and
// --time always (a stored line says how many threads ran and for how
// long), every other typed option whose value is not its default, in the
// order of the help, then Conn and Options as given; each option is
// written --name=value. bench's ParseArgs reads it back to an equal
// Spec.
func (s Spec) Args() []string {
	var c Spec
	fs := sbflag.NewFlagSet("args")
	c.typed(fs)
	c = s // the values fs reads from here on are s's
	out := []string{s.Workload}
	fs.VisitAll(func(f *pflag.Flag) {
		if v := f.Value.String(); f.Name == "threads" || f.Name == "time" || v != f.DefValue {
			out = append(out, "--"+f.Name+"="+v)
		}
	})
	for _, o := range s.Conn {
		out = append(out, "--"+o.Key+"="+o.Value)
	}
	for _, o := range s.Options {
		out = append(out, "--"+o.Key+"="+o.Value)
	}
	return out
}
