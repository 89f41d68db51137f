package bench

import (
	"net"
	"slices"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/randgen"
	"github.com/shakedown/shakedown/internal/runner"
	"github.com/shakedown/shakedown/internal/runspec"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/segment"
	"github.com/shakedown/shakedown/internal/stall"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/usage"
	"github.com/shakedown/shakedown/internal/workload"
)

// Job is one prepare, run or cleanup, made from a Spec (New).
type Job struct {
	Verb   string
	Gen    workload.Generator
	Target *target.Target

	// Warnings say which old sysbench options the line used and what
	// they became (see legacyArgs), for the command to show.
	Warnings []string

	// spec is the run: the one copy of its values, which fs is bound to;
	// its Options are the workload's own only (New applies the rest).
	spec   runspec.Spec
	help   bool
	tflags target.Flags
	stall  []stall.Trigger
	split  segment.Split // this process's part of the load

	fs *pflag.FlagSet
	rc runner.Config // derived from spec by validate, and by SetSplit
}

// New makes the job of verb (prepare, run or cleanup) that s describes and
// checks it whole, before any connection: a fault is a usage error that
// names the option. It sets s's connection options, then its Options, in
// order and after the typed fields, as later options of a line win, with
// pflag's Set: the workload's own on the workload's flag set, one every
// workload takes (a plan names those in Options too) in its field.
//
// The job runs on the target s's connection options name, or, when at is
// not nil, on a copy of at: a target resolved elsewhere (a plan's), whose
// password never passes through a string. s's connection options are then
// only recorded.
func New(verb string, s runspec.Spec, at *target.Target) (*Job, error) {
	meta, ok := workload.Lookup(s.Workload)
	if !ok {
		return nil, unknownWorkload(verb, s.Workload)
	}
	j := &Job{Verb: verb, Gen: meta.New(), split: segment.Alone}
	fs := sbflag.NewFlagSet(verb)
	conn := bind(fs, &j.spec, &j.help, &j.tflags)
	own := addWorkload(fs, j.Gen)
	fresh := j.spec.Rand
	j.spec = s // s's values, in the fields fs is bound to
	j.spec.Rand = ownSequence(fresh, s.Rand)
	j.spec.Conn, j.spec.Options = slices.Clone(s.Conn), nil
	j.fs = fs
	bad := func(err error) error {
		return usagef("%s %s: %s", verb, s.Workload, sbflag.Explain(fs, err, "shakedown "+verb+" "+s.Workload+" --help"))
	}
	for _, o := range s.Conn {
		if err := fs.Set(o.Key, o.Value); err != nil {
			return nil, bad(err)
		}
	}
	for _, o := range s.Options {
		if err := fs.Set(o.Key, o.Value); err != nil {
			return nil, bad(err)
		}
		// A general option is now in its field; the others stay by name.
		switch f := fs.Lookup(o.Key); {
		case owns(own, f):
			j.spec.Options = append(j.spec.Options, runspec.Option{Key: f.Name, Value: o.Value})
		case owns(conn, f):
			j.spec.Conn = append(j.spec.Conn, runspec.Option{Key: f.Name, Value: o.Value})
		}
	}
	if j.help {
		return nil, ErrHelp
	}
	if err := j.validate(); err != nil {
		return nil, err
	}
	if v, ok := j.Gen.(workload.Validator); ok {
		if err := v.Validate(); err != nil {
			return nil, usagef("%s: %v", s.Workload, err)
		}
	}
	if at != nil {
		t := *at
		j.Target = &t
		return j, nil
	}
	tgt, err := j.tflags.Resolve()
	if err != nil {
		return nil, &usage.Error{Msg: err.Error()}
	}
	tgt.Name = j.spec.Name
	j.Target = tgt
	return j, nil
}

// ownSequence is c with the unique sequence (randgen's Rand.Unique) of
// fresh, a Config new from Flags: every job has a sequence of its own, and
// the copies of a Spec share theirs.
func ownSequence(fresh, c randgen.Config) randgen.Config {
	fresh.Type, fresh.Seed, fresh.SpecIter, fresh.SpecPct, fresh.SpecRes, fresh.ParetoH, fresh.ZipfianExp =
		c.Type, c.Seed, c.SpecIter, c.SpecPct, c.SpecRes, c.ParetoH, c.ZipfianExp
	return fresh
}

// Spec is the job's run: its options as New left them, the workload's
// own alone in Options.
func (j *Job) Spec() runspec.Spec {
	s := j.spec
	s.Conn, s.Options = slices.Clone(s.Conn), slices.Clone(s.Options)
	return s
}

// validate checks the general options and turns them into a runner config.
func (j *Job) validate() error {
	switch {
	case j.spec.Threads < 1:
		return usagef("--threads must be >= 1")
	case j.spec.TimeS < 0:
		return usagef("--time must be >= 0")
	case j.spec.Events < 0:
		return usagef("--events must be >= 0")
	case j.Verb == "run" && j.spec.TimeS == 0 && j.spec.Events == 0:
		return usagef("--time=0 needs --events: a run needs a limit")
	case j.spec.Rate < 0:
		return usagef("--rate must be >= 0")
	case j.spec.WarmupS < 0:
		return usagef("--warmup-time must be >= 0")
	case j.spec.ReportIntervalS < 0:
		return usagef("--report-interval must be >= 0")
	case j.spec.Percentile <= 0 || j.spec.Percentile > 100:
		return usagef("--percentile must be in (0, 100]")
	case j.spec.DBDriver != "mysql":
		return usagef("--db-driver: only mysql is supported")
	case j.spec.PSMode != "auto" && j.spec.PSMode != "disable":
		return usagef("--db-ps-mode must be auto or disable")
	}
	if err := client.CheckIO(j.spec.ClientIO); err != nil {
		return &usage.Error{Msg: err.Error()}
	}
	if j.spec.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(j.spec.MetricsAddr); err != nil {
			return usagef("--metrics-addr must be HOST:PORT, e.g. 127.0.0.1:9100 (got %q)", j.spec.MetricsAddr)
		}
	}
	if err := j.validateStall(); err != nil {
		return err
	}
	if err := j.spec.Rand.Validate(); err != nil {
		return &usage.Error{Msg: err.Error()}
	}
	policy, err := client.ParseIgnore("--mysql-ignore-errors", j.spec.IgnoreErrors)
	if err != nil {
		return &usage.Error{Msg: err.Error()}
	}
	rc := runner.Config{Policy: policy}
	rc.Threads = j.spec.Threads
	rc.Time = time.Duration(j.spec.TimeS) * time.Second
	rc.Events = j.spec.Events
	rc.Rate = j.spec.Rate
	rc.Warmup = time.Duration(j.spec.WarmupS) * time.Second
	rc.Interval = time.Duration(j.spec.ReportIntervalS) * time.Second
	rc.Percentile = j.spec.Percentile
	rc.Rand = j.spec.Rand
	mode, err := runner.ParseConnectMode(j.spec.ConnectMode)
	if err != nil {
		return &usage.Error{Msg: err.Error()}
	}
	rc.ConnectMode = mode
	j.rc = rc
	return nil
}

// validateStall parses --stall and checks its bounds.
func (j *Job) validateStall() error {
	if j.spec.Stall == "" {
		if j.spec.StallStacks {
			return usagef("--stall-stacks needs --stall: stacks are read when a trigger fires")
		}
		return nil
	}
	switch {
	case !j.spec.Monitor:
		return usagef("--stall needs the sampler: drop --monitor=off")
	case j.spec.StallCooldown <= 0:
		return usagef("--stall-cooldown must be > 0")
	case j.spec.StallMax < 1:
		return usagef("--stall-max must be >= 1")
	}
	t, err := stall.Parse(j.spec.Stall)
	if err != nil {
		return &usage.Error{Msg: err.Error()}
	}
	j.stall = t
	return nil
}
