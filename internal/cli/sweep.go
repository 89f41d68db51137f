package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/helptext"
	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/report"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/segment"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/sweep"
	"github.com/shakedown/shakedown/internal/target"
)

// sweepCmd is "shakedown sweep PLAN".
type sweepCmd struct {
	storePath string
	verbose   bool
	dryRun    bool
	resume    string
	baseline  string
	help      bool
	creds     target.Credentials
	split     segment.Flags
}

func (c *sweepCmd) flags(env *Env) *pflag.FlagSet {
	fs := sbflag.NewFlagSet("sweep")
	fs.StringVar(&c.storePath, "store", store.DefaultPath(env.Getenv), "results store: a SQLite file, or mysql://user@host:port/db shared by split runners (password: SHAKEDOWN_STORE_PASSWORD)")
	fs.BoolVarP(&c.verbose, "verbose", "v", false, "print every second of every run, and prepare's progress")
	fs.BoolVar(&c.dryRun, "dry-run", false, "check the plan and the targets, list the steps, run nothing")
	fs.StringVar(&c.resume, "resume", "", "continue an interrupted sweep, or run a sweep's failed steps again: its ID (--resume ID or --resume=ID), or latest")
	fs.Lookup("resume").NoOptDefVal = "latest"
	fs.StringVar(&c.baseline, "baseline", "", "compare the results with this saved baseline; exit 3 when anything is slower")
	fs.BoolVarP(&c.help, "help", "h", false, "show this help")
	c.creds.Bind(fs)
	c.split.Bind(fs)
	return fs
}

func (c *sweepCmd) run(ctx context.Context, env *Env, args []string) error {
	fs := c.flags(env)
	if err := fs.Parse(args); err != nil {
		return flagError("sweep", "sweep", fs, err)
	}
	if c.help {
		fmt.Fprint(env.Stdout, helptext.Sweep)
		fmt.Fprint(env.Stdout, fs.FlagUsages())
		return nil
	}
	sp, err := c.split.Resolve(env.Getenv, time.Now())
	if err != nil {
		return err
	}
	if c.resume != "" {
		if sp.On {
			return usagef("sweep --resume continues a sweep from one process: leave out --segment (a split sweep is run again with a new --start-at)")
		}
		return c.runResume(ctx, env, fs.Args())
	}
	p, err := sweep.LoadPlan(fs.Args(), env.Getenv, &c.creds, sp)
	if err != nil {
		return err
	}
	var st *store.Store
	if c.baseline != "" {
		// A baseline that is not there is bad input: say so before the
		// sweep, not after it.
		if st, err = store.OpenExisting(ctx, env.Getenv, c.storePath, "sweep: --baseline"); err != nil {
			return err
		}
		defer st.Close()
		if _, err := report.LookupBaseline(ctx, st, c.baseline, "sweep"); err != nil {
			return err
		}
	}
	if st == nil {
		// Where the results go is checked before any target is reached.
		if err := store.CheckFlag(ctx, env.Getenv, "--store", c.storePath); err != nil {
			return err
		}
	}
	envs, err := c.preflight(ctx, env, p, sp)
	if err != nil {
		return err
	}
	if c.dryRun {
		for _, s := range p.Steps() {
			fmt.Fprintf(env.Stdout, "%4d  %-10s %s\n", s.Index, s.Target.Name, strings.Join(p.Args(s.Workload, s.Threads), " "))
		}
		return nil
	}
	if st == nil {
		if st, err = store.OpenFlag(ctx, env.Getenv, "--store", c.storePath); err != nil {
			return err
		}
		defer st.Close()
	}
	host, _ := os.Hostname()
	sum, err := sweep.Run(ctx, p, envs, sweep.Options{
		Store: st, Progress: env.Stderr, Live: isTerminal(env.Stderr), Verbose: c.verbose,
		Host: host, Version: Version, Split: &sp, UnsavedDir: filepath.Dir(store.DefaultPath(env.Getenv)),
	})
	if err := finishSweep(ctx, env, st, sum, err); err != nil {
		return err
	}
	if c.baseline != "" {
		return compareWithBaseline(ctx, env, st, c.baseline, sum.SweepID)
	}
	return nil
}

// runResume continues an interrupted sweep from its stored plan.
func (c *sweepCmd) runResume(ctx context.Context, env *Env, args []string) error {
	// --resume takes its value optionally, so "--resume 7" reaches here
	// as --resume=latest and the argument 7: that is the ID.
	if c.resume == "latest" && len(args) == 1 && sweep.IsResumeArg(args[0]) {
		c.resume, args = args[0], nil
	}
	if len(args) > 0 {
		return usagef("sweep --resume takes the plan from the store: leave out %s (see shakedown sweep --help)", args[0])
	}
	st, err := store.OpenExisting(ctx, env.Getenv, c.storePath, "sweep --resume")
	if err != nil {
		return err
	}
	defer st.Close()
	sw, failed, err := sweep.FindResume(ctx, st, c.resume, store.Display(c.storePath))
	if err != nil {
		return err
	}
	id := sw.ID
	if failed > 0 {
		fmt.Fprintf(env.Stdout, "sweep %d ended with %d failed steps: running them again\n", id, failed)
	}
	p, err := sweep.ParsePlan(sw.PlanPath, []byte(sw.Plan), env.Getenv)
	if err != nil {
		return fmt.Errorf("sweep --resume: the plan stored with sweep %d: %w", id, err)
	}
	fmt.Fprintf(env.Stdout, "resuming sweep %d %q of plan %s in %s\n", id, sw.Name, sw.PlanPath, store.Display(c.storePath))
	envs, err := sweep.CheckWait(ctx, p, sweep.DefaultDownWait, env.Stderr)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	sum, err := sweep.Run(ctx, p, envs, sweep.Options{
		Store: st, Progress: env.Stderr, Live: isTerminal(env.Stderr), Verbose: c.verbose,
		Host: host, Version: Version, Resume: id,
	})
	return finishSweep(ctx, env, st, sum, err)
}

// finishSweep prints the comparison of a finished (or interrupted) sweep
// and says where it is stored.
func finishSweep(ctx context.Context, env *Env, st *store.Store, sum *sweep.Summary, runErr error) error {
	if sum == nil || sum.SweepID == 0 {
		return runErr
	}
	rec := context.WithoutCancel(ctx)
	if d, err := st.Load(rec, sum.SweepID); err == nil && sum.OK > 0 {
		fmt.Fprintln(env.Stdout)
		if err := report.WriteSummary(env.Stdout, report.Build(d)); err != nil {
			return err
		}
	}
	fmt.Fprintf(env.Stdout, "\nsweep %d: %d of %d steps ok in %s; stored in %s\n", sum.SweepID, sum.OK, sum.Steps,
		sum.Elapsed.Round(time.Second), st.Path())
	fmt.Fprintf(env.Stdout, "full report: shakedown report %s --sweep %d --format html -o report.html\n", storeArg(st.Path()), sum.SweepID)
	switch {
	case errors.Is(runErr, sweep.ErrInterrupted):
		return fmt.Errorf("interrupted: %d of %d steps finished and are stored as sweep %d; continue it with shakedown sweep --resume %d %s",
			sum.OK+sum.Failed, sum.Steps, sum.SweepID, sum.SweepID, storeArg(st.Path()))
	case runErr != nil:
		return runErr
	case sum.Failed > 0:
		return fmt.Errorf("%d of %d steps failed (stored as failed in sweep %d; the report lists them); once the cause is fixed, run them again with shakedown sweep --resume %d --store %s",
			sum.Failed, sum.Steps, sum.SweepID, sum.SweepID, sweep.Quote(st.Path()))
	}
	return nil
}

// isTerminal reports whether w is a terminal, for a progress line redrawn
// in place.
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Stat() (os.FileInfo, error) })
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// preflight says what the plan will run, connects to every target and
// checks the data, before anything runs.
func (c *sweepCmd) preflight(ctx context.Context, env *Env, p *plan.Plan, sp segment.Split) ([]sweep.Env, error) {
	fmt.Fprintln(env.Stdout, sweep.PlanLine(p, sp))
	envs, err := sweep.Check(ctx, p)
	if err != nil {
		return nil, err
	}
	for _, e := range envs {
		fmt.Fprintf(env.Stdout, "  %-10s %-9s %s %s at %s\n", e.Target.Name, e.Target.Role, e.Server.Flavour, e.Server.Version, e.Target.Target.Redacted())
	}
	for _, line := range sweep.SameServers(envs) {
		fmt.Fprintf(env.Stdout, "  %s\n", line)
	}
	// In a split sweep only the first runner prepares: the others find the
	// data it made, not data in the way.
	if !sp.On || sp.First() {
		if err := sweep.CheckData(ctx, p, envs); err != nil {
			return nil, err
		}
	}
	return envs, nil
}
