package cli

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/randgen"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/runner"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/workload"
)

// benchCmd is "shakedown prepare|run|cleanup WORKLOAD [options]", with
// sysbench's option names and meaning.
type benchCmd struct {
	verb string

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
	name           string
	dbDriver       string
	verbosity      int
	help           bool

	target target.Flags
	rand   randgen.Config
}

func (c *benchCmd) flags(fs *pflag.FlagSet) {
	fs.IntVar(&c.threads, "threads", 1, "number of threads to use")
	fs.IntVar(&c.timeS, "time", 10, "limit for total execution time in seconds (0 = no limit)")
	fs.Int64Var(&c.events, "events", 0, "limit for total number of events (0 = no limit)")
	fs.Float64Var(&c.rate, "rate", 0, "average transactions rate (0 = unlimited); latency then counts from each event's intended start")
	fs.IntVar(&c.warmupS, "warmup-time", 0, "run the load this many seconds before measuring; excluded from results")
	fs.IntVar(&c.reportInterval, "report-interval", 0, "print intermediate statistics every N seconds (0 = off)")
	fs.Float64Var(&c.percentile, "percentile", 95, "latency percentile to report, in (0, 100]")
	sbflag.BoolVar(fs, &c.histogram, "histogram", false, "print the latency histogram")
	fs.StringVar(&c.ignoreErrors, "mysql-ignore-errors", "1213,1020,1205", "error codes to count and retry instead of stopping, or 'all'")
	fs.StringVar(&c.psMode, "db-ps-mode", "auto", "prepared statements: auto (server-side) or disable (text protocol)")
	fs.StringVar(&c.jsonPath, "json", "", "write the result document to this file")
	fs.StringVar(&c.name, "name", "", "name of the target in results (default: its address)")
	fs.StringVar(&c.dbDriver, "db-driver", "mysql", "database driver (only mysql)")
	fs.IntVar(&c.verbosity, "verbosity", 3, "accepted for sysbench compatibility")
	fs.BoolVarP(&c.help, "help", "h", false, "show the options")
	c.target.Bind(fs)
	c.rand.Flags(fs)
}

// findWorkload picks the workload name out of args: the first argument that
// names a registered workload (a sysbench script path such as
// /usr/share/sysbench/oltp_read_write.lua counts as its base name).
func findWorkload(args []string) (name string, idx int, found bool) {
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

func (c *benchCmd) run(ctx context.Context, env *Env, args []string) error {
	name, idx, found := findWorkload(args)
	if !found {
		if idx < 0 {
			if containsHelp(args) {
				fmt.Fprintf(env.Stdout, "usage: shakedown %s WORKLOAD [options]\n\nworkloads: %s\n", c.verb, strings.Join(workload.Names(), ", "))
				return nil
			}
			return usagef("%s: name a workload; workloads: %s", c.verb, strings.Join(workload.Names(), ", "))
		}
		return usagef("unknown workload %q; workloads: %s", name, strings.Join(workload.Names(), ", "))
	}
	rest := append(append([]string{}, args[:idx]...), args[idx+1:]...)

	meta, _ := workload.Lookup(name)
	gen := meta.New()
	fs := sbflag.NewFlagSet(c.verb)
	c.flags(fs)
	if f, ok := gen.(workload.Flagser); ok {
		fs.AddFlagSet(f.Flags())
	}
	if err := fs.Parse(rest); err != nil {
		return usagef("%s %s: %v; valid options: %s", c.verb, name, err, flagNames(fs))
	}
	if c.help {
		fmt.Fprintf(env.Stdout, "usage: shakedown %s %s [options]\n\n%s", c.verb, name, fs.FlagUsages())
		return nil
	}
	if fs.NArg() > 0 {
		return usagef("%s %s: unexpected argument %q", c.verb, name, fs.Arg(0))
	}
	rc, err := c.validate()
	if err != nil {
		return err
	}
	if v, ok := gen.(workload.Validator); ok {
		if err := v.Validate(); err != nil {
			return &UsageError{msg: fmt.Sprintf("%s: %v", name, err)}
		}
	}
	tgt, err := c.target.Resolve()
	if err != nil {
		return &UsageError{msg: err.Error()}
	}
	tgt.Name = c.name

	switch c.verb {
	case "prepare", "cleanup":
		return c.prepareOrCleanup(ctx, env, name, gen, tgt)
	default:
		op, ok := gen.(workload.Opser)
		if !ok {
			return usagef("%s has no run phase", name)
		}
		return c.runLoad(ctx, env, name, gen, op, tgt, rc, fs)
	}
}

func containsHelp(args []string) bool {
	for _, a := range args {
		if a == "--help" || a == "-h" {
			return true
		}
	}
	return false
}

func flagNames(fs *pflag.FlagSet) string {
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, "--"+f.Name) })
	sort.Strings(names)
	return strings.Join(names, " ")
}

// validate checks the general options and turns them into a runner config.
func (c *benchCmd) validate() (runner.Config, error) {
	rc := runner.Config{}
	switch {
	case c.threads < 1:
		return rc, usagef("--threads must be >= 1")
	case c.timeS < 0:
		return rc, usagef("--time must be >= 0")
	case c.events < 0:
		return rc, usagef("--events must be >= 0")
	case c.verb == "run" && c.timeS == 0 && c.events == 0:
		return rc, usagef("--time=0 needs --events: a run needs a limit")
	case c.rate < 0:
		return rc, usagef("--rate must be >= 0")
	case c.warmupS < 0:
		return rc, usagef("--warmup-time must be >= 0")
	case c.reportInterval < 0:
		return rc, usagef("--report-interval must be >= 0")
	case c.percentile <= 0 || c.percentile > 100:
		return rc, usagef("--percentile must be in (0, 100]")
	case c.dbDriver != "mysql":
		return rc, usagef("--db-driver: only mysql is supported")
	}
	switch c.psMode {
	case "auto", "disable":
	default:
		return rc, usagef("--db-ps-mode must be auto or disable")
	}
	if err := c.rand.Validate(); err != nil {
		return rc, &UsageError{msg: err.Error()}
	}
	switch strings.ToLower(strings.TrimSpace(c.ignoreErrors)) {
	case "all":
		rc.IgnoreAll = true
	case "", "none":
	default:
		rc.Ignore = map[uint16]bool{}
		for _, part := range strings.Split(c.ignoreErrors, ",") {
			n, err := strconv.ParseUint(strings.TrimSpace(part), 10, 16)
			if err != nil {
				return rc, usagef("--mysql-ignore-errors: %q is not an error code; give codes such as 1213,1205 or 'all'", part)
			}
			rc.Ignore[uint16(n)] = true
		}
	}
	rc.Threads = c.threads
	rc.Time = time.Duration(c.timeS) * time.Second
	rc.Events = c.events
	rc.Rate = c.rate
	rc.Warmup = time.Duration(c.warmupS) * time.Second
	rc.Interval = time.Duration(c.reportInterval) * time.Second
	rc.Percentile = c.percentile
	rc.Rand = c.rand
	return rc, nil
}

// pools opens one pool per endpoint and checks that the first answers.
type pools struct {
	tgt *target.Target
	eps []target.Endpoint
	dbs []*sql.DB
}

func openPools(ctx context.Context, tgt *target.Target, threads int) (*pools, target.Server, error) {
	p := &pools{tgt: tgt, eps: tgt.Endpoints()}
	per := threads/len(p.eps) + 1
	for _, ep := range p.eps {
		db, err := tgt.Open(ep, per)
		if err != nil {
			p.close()
			return nil, target.Server{}, err
		}
		p.dbs = append(p.dbs, db)
	}
	// One connection now, so a wrong password or a missing database is one
	// clear line before anything else happens.
	cctx, cancel := context.WithTimeout(ctx, tgt.ConnectTimeout+time.Second)
	defer cancel()
	conn, err := p.dbs[0].Conn(cctx)
	if err != nil {
		p.close()
		return nil, target.Server{}, tgt.Explain(p.eps[0], err)
	}
	defer conn.Close()
	srv, err := target.Detect(cctx, conn)
	if err != nil {
		p.close()
		return nil, target.Server{}, tgt.Explain(p.eps[0], err)
	}
	return p, srv, nil
}

func (p *pools) close() {
	for _, db := range p.dbs {
		db.Close()
	}
}

func (c *benchCmd) prepareOrCleanup(ctx context.Context, env *Env, name string, gen workload.Generator, tgt *target.Target) error {
	p, _, err := openPools(ctx, tgt, c.threads)
	if err != nil {
		return err
	}
	defer p.close()
	penv := &workload.PrepareEnv{DB: p.dbs[0], Threads: c.threads, Rand: c.rand, Out: env.Stdout}
	fmt.Fprintf(env.Stdout, "shakedown %s\n\n", Version)
	start := time.Now()
	if c.verb == "prepare" {
		pr, ok := gen.(workload.Preparer)
		if !ok {
			return usagef("%s has no prepare phase", name)
		}
		if err := pr.Prepare(ctx, penv); err != nil {
			return interruptedOr(ctx, fmt.Errorf("prepare %s: %w", name, err))
		}
	} else {
		cl, ok := gen.(workload.Cleaner)
		if !ok {
			return usagef("%s has no cleanup phase", name)
		}
		if err := cl.Cleanup(ctx, penv); err != nil {
			return interruptedOr(ctx, fmt.Errorf("cleanup %s: %w", name, err))
		}
	}
	fmt.Fprintf(env.Stdout, "%s done in %.2fs\n", c.verb, time.Since(start).Seconds())
	return nil
}

func interruptedOr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return errors.New("interrupted")
	}
	return err
}

func (c *benchCmd) runLoad(ctx context.Context, env *Env, name string, gen workload.Generator, op workload.Opser, tgt *target.Target, rc runner.Config, fs *pflag.FlagSet) error {
	p, srv, err := openPools(ctx, tgt, c.threads)
	if err != nil {
		return err
	}
	defer p.close()
	out := env.Stdout
	c.header(out, name, tgt, srv)
	dialer := runner.NewDialer(tgt, c.psMode != "disable")
	defer dialer.Close()
	rc.Connect = dialer.Connect
	if c.reportInterval > 0 {
		rc.OnInterval = func(iv runner.Interval) { result.WriteInterval(out, iv, c.percentile) }
	}
	if rc.Warmup > 0 {
		fmt.Fprintf(out, "Warming up for %d seconds...\n", c.warmupS)
		rc.OnWarmupDone = func() { fmt.Fprintln(out, "Warm-up done: measuring from now.") }
	}
	o, err := runner.Run(ctx, rc, op)
	if err != nil {
		if errors.Is(err, runner.ErrMissingTables) {
			return fmt.Errorf("%s on %s: %w", name, tgt, err)
		}
		if ctx.Err() != nil {
			return errors.New("interrupted before the run started; nothing measured")
		}
		return err
	}
	res, err := result.Build(o, name, c.threads, c.percentile)
	if err != nil {
		return err
	}
	res.Tool = "shakedown " + Version
	res.Target = result.Target{Name: tgt.String(), URL: tgt.Redacted(), Version: srv.Version, Flavour: srv.Flavour}
	res.StartedAt = time.Now().Add(-o.Elapsed).UTC().Truncate(time.Second)
	res.WarmupS = rc.Warmup.Seconds()
	res.Rate = c.rate
	res.Options = options(fs)

	fmt.Fprintln(out)
	if c.histogram {
		result.WriteHistogram(out, o.Latency)
	}
	res.WriteSummary(out)
	if c.jsonPath != "" {
		if err := res.WriteFile(c.jsonPath); err != nil {
			return err
		}
		fmt.Fprintf(out, "\nResult written to %s\n", c.jsonPath)
	}
	switch {
	case o.Err != nil:
		if errors.Is(o.Err, runner.ErrMissingTables) || target.Code(o.Err) == 1146 {
			return fmt.Errorf("%s on %s: %w", name, tgt, runner.ErrMissingTables)
		}
		return fmt.Errorf("run stopped: %w", o.Err)
	case o.Interrupted:
		fmt.Fprintln(env.Stderr, "shakedown: interrupted: the results above cover what ran before the stop")
		return errSilent
	}
	return nil
}

func (c *benchCmd) header(w io.Writer, name string, tgt *target.Target, srv target.Server) {
	fmt.Fprintf(w, "shakedown %s (sysbench-compatible %s)\n\n", Version, name)
	fmt.Fprintln(w, "Running the test with following options:")
	fmt.Fprintf(w, "Number of threads: %d\n", c.threads)
	if c.rate > 0 {
		fmt.Fprintf(w, "Target transaction rate: %g/sec\n", c.rate)
	}
	if c.reportInterval > 0 {
		fmt.Fprintf(w, "Report intermediate results every %d second(s)\n", c.reportInterval)
	}
	fmt.Fprintf(w, "Target: %s (%s %s)\n", tgt, srv.Flavour, srv.Version)
	if c.rand.Seed == 0 {
		fmt.Fprintln(w, "Initializing random number generator from current time")
	} else {
		fmt.Fprintf(w, "Initializing random number generator from seed (%d).\n", c.rand.Seed)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Initializing worker threads...")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Threads started!")
	fmt.Fprintln(w)
}

// options records every option's effective value except secrets.
func options(fs *pflag.FlagSet) map[string]string {
	m := map[string]string{}
	fs.VisitAll(func(f *pflag.Flag) {
		switch f.Name {
		case "mysql-password", "target", "help", "json":
			return
		}
		m[f.Name] = f.Value.String()
	})
	return m
}
