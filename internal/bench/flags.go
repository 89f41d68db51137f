package bench

import (
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/runspec"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/stall"
	"github.com/shakedown/shakedown/internal/suggest"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/workload"
)

// owned is what the options owned above runspec take from their owners:
// --stall's syntax, package stall's, and --client-io's binder, package
// client's.
func owned() runspec.Owned {
	return runspec.Owned{StallAlone: stall.DefaultSpec, IsStallTriggers: stall.LooksLikeSpec, BindIO: client.BindIO}
}

// bind adds every option of the command line but the workload's own to fs,
// in the order the help lists them: the general options, --help, the
// connection options, the random numbers' and the split's. It returns the
// connection options' own flag set, which tf reads which were set from.
func bind(fs *pflag.FlagSet, s *runspec.Spec, help *bool, tf *target.Flags) (conn *pflag.FlagSet) {
	s.Bind(fs, owned())
	fs.BoolVarP(help, "help", "h", false, "show the options")
	conn = sbflag.NewFlagSet("connection")
	tf.Bind(conn)
	fs.AddFlagSet(conn)
	s.Rand.Flags(fs)
	s.Split.Bind(fs)
	return conn
}

// addWorkload adds gen's own options to fs and returns their flag set, nil
// when it has none.
func addWorkload(fs *pflag.FlagSet, gen workload.Generator) *pflag.FlagSet {
	f, ok := gen.(workload.Flagser)
	if !ok || f.Flags() == nil {
		return nil
	}
	fs.AddFlagSet(f.Flags())
	return f.Flags()
}

// owns reports whether f is one of set's options (a flag of another set
// may share its name; fs takes the first).
func owns(set *pflag.FlagSet, f *pflag.Flag) bool {
	return set != nil && f != nil && set.Lookup(f.Name) == f
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

// ParseArgs is the one reader of a command line: it reads one such as
// "oltp_read_write --threads=16 --time=60 --tables=4", or an old one such
// as "--test=oltp.lua --oltp-tables-count=4 --num-threads=16", whose
// options it maps to today's as sysbench 1.0.20 does (the warnings say
// how), into a Spec. With --help it writes the options to help (nil:
// nowhere) and returns ErrHelp. It checks the options' syntax and types;
// New checks what they mean.
func ParseArgs(verb string, args []string, help io.Writer) (runspec.Spec, []string, error) {
	if help == nil {
		help = io.Discard
	}
	args, warnings, err := legacyArgs(args)
	if err != nil {
		return runspec.Spec{}, nil, err
	}
	name, idx, found := FindWorkload(args)
	if !found {
		if idx < 0 {
			for _, a := range args {
				if a == "--help" || a == "-h" {
					writeHelp(help, verb)
					return runspec.Spec{}, nil, ErrHelp
				}
			}
			return runspec.Spec{}, nil, usagef("%s: name a workload; workloads: %s", verb, strings.Join(workload.Names(), ", "))
		}
		return runspec.Spec{}, nil, unknownWorkload(verb, name)
	}
	rest := append(append([]string{}, args[:idx]...), args[idx+1:]...)
	meta, _ := workload.Lookup(name)
	gen := meta.New()
	var (
		s      runspec.Spec
		asked  bool
		tflags target.Flags
	)
	fs := sbflag.NewFlagSet(verb)
	conn := bind(fs, &s, &asked, &tflags)
	own := addWorkload(fs, gen)
	s.Workload = name
	// The typed options land in s as they are set; the connection options
	// and the workload's are kept by name, in order, for New to set on
	// flag sets of their own.
	err = fs.ParseAll(sbflag.JoinOptional(fs, rest), func(f *pflag.Flag, value string) error {
		if err := fs.Set(f.Name, value); err != nil {
			return err
		}
		switch {
		case owns(conn, f):
			s.Conn = append(s.Conn, runspec.Option{Key: f.Name, Value: value})
		case owns(own, f):
			s.Options = append(s.Options, runspec.Option{Key: f.Name, Value: value})
		}
		return nil
	})
	if err != nil {
		return runspec.Spec{}, nil, usagef("%s %s: %s", verb, name, sbflag.Explain(fs, err, "shakedown "+verb+" "+name+" --help"))
	}
	if asked {
		fmt.Fprintf(help, "usage: shakedown %s %s [options]\n", verb, name)
		if h, ok := gen.(workload.Helper); ok {
			fmt.Fprintf(help, "\n%s", strings.TrimRight(h.Help(), "\n")+"\n")
		}
		writeOptions(help, fs, own, name)
		return runspec.Spec{}, nil, ErrHelp
	}
	if fs.NArg() > 0 {
		hint := ""
		if s.Stall == "default" {
			hint = fmt.Sprintf(" (a trigger after --stall compares a figure: --stall '%s' or --stall='%[1]s')", stall.DefaultSpec)
		}
		return runspec.Spec{}, nil, usagef("%s %s: unexpected argument %q%s", verb, name, fs.Arg(0), hint)
	}
	return s, warnings, nil
}

// unknownWorkload is the usage error for a workload name not registered.
func unknownWorkload(verb, name string) error {
	if s := suggest.DidYouMean(name, workload.Names()); s != "" {
		return usagef("unknown workload %q%s; shakedown help %s lists them", name, s, verb)
	}
	return usagef("unknown workload %q; workloads: %s", name, strings.Join(workload.Names(), ", "))
}

// Parse reads a command line (ParseArgs) and makes its job (New), on the
// target its options name; Job.Warnings says what old options became.
// The split options are read but not resolved: ResolveSplit does that,
// with the environment.
func Parse(verb string, args []string, help io.Writer) (*Job, error) {
	s, warnings, err := ParseArgs(verb, args, help)
	if err != nil {
		return nil, err
	}
	j, err := New(verb, s, nil)
	if err != nil {
		return nil, err
	}
	j.Warnings = warnings
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
	var j Job
	fs := sbflag.NewFlagSet(verb)
	bind(fs, &j.spec, &j.help, &j.tflags)
	fmt.Fprintf(w, "\nOptions of every workload (shakedown %s WORKLOAD --help adds the workload's own):\n", verb)
	writeOptions(w, fs, nil, "")
}

// optionSections are the sections the help lists the options of every
// workload in (a workload's own come first, in a section of their own).
// Every option is in one: TestHelpSections fails on one left out.
var optionSections = []sbflag.Section{
	{Title: "Load and time", Options: []string{"threads", "time", "events", "rate", "warmup-time", "report-interval", "percentile", "histogram",
		"mysql-ignore-errors", "db-ps-mode", "connect-mode", "verbosity",
		"rand-type", "rand-seed", "rand-spec-iter", "rand-spec-pct", "rand-spec-res", "rand-pareto-h", "rand-zipfian-exp"}},
	{Title: "Target and connection (shakedown help targets)", Options: []string{"target", "mysql-host", "mysql-port", "mysql-socket", "mysql-user", "mysql-password",
		"mysql-db", "mysql-ssl", "connect-timeout", "password-file", "defaults-file", "defaults-extra-file", "login-path", "no-defaults",
		"db-driver", "client-io"}},
	{Title: "Output and store", Options: []string{"json", "store", "name", "metrics-addr", "help"}},
	{Title: "Split load (docs/kubernetes.md)", Options: []string{"segment", "segment-sequence", "segments", "segment-index-env", "start-at"}},
	{Title: "Diagnostics", Options: []string{"monitor", "stall", "stall-cooldown", "stall-max", "stall-stacks"}},
}

// writeOptions lists fs's options in sections: own's (the workload wl's
// options) first, then optionSections.
func writeOptions(w io.Writer, fs, own *pflag.FlagSet, wl string) {
	sections := optionSections
	if own != nil {
		var names []string
		own.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
		sections = append([]sbflag.Section{{Title: "Options of " + wl, Options: names}}, optionSections...)
	}
	sbflag.WriteSections(w, fs, sections)
}

var verbHelp = map[string]string{
	"prepare": "Creates the workload's tables and data (sysbench's prepare).",
	"run": "Runs the workload and reports throughput and latency as sysbench does, then\nwhat sysbench does not say (percentiles, client against server, CPU per query).\n\n" +
		"  shakedown run oltp_read_write --target mysql://bench@db1:3306/sbtest \\\n" +
		"      --tables 4 --table-size 100000 --threads 16 --time 60 --store runs.db\n\n" +
		"The target and its password: shakedown help targets.",
	"cleanup": "Drops the workload's tables (sysbench's cleanup).",
}

// Threads is --threads.
func (j *Job) Threads() int { return j.spec.Threads }

// Workload is the workload's registered name.
func (j *Job) Workload() string { return j.spec.Workload }

// JSONPath is --json.
func (j *Job) JSONPath() string { return j.spec.JSONPath }

// StorePath is --store.
func (j *Job) StorePath() string { return j.spec.StorePath }

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
			if j.spec.Stall == "" { // runs without --stall keep the options they always had
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

// Check is the error New gives the run s of verb, or nil.
func (Grammar) Check(verb string, s runspec.Spec) error {
	_, err := New(verb, s, nil)
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
	bind(fs, &j.spec, &j.help, &j.tflags)
	addWorkload(fs, meta.New())
	return fs.Lookup(string(sbflag.Normalize(fs, option))) != nil
}
