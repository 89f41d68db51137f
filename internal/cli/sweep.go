package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/progress"
	"github.com/shakedown/shakedown/internal/report"
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
	fs := storeFlagSet("sweep", env, &c.storePath, " shared by split runners")
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

func (c *sweepCmd) exec(ctx context.Context, env *Env, fs *pflag.FlagSet) error {
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
	search, err := planCapacity(env, p, sp.On)
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
	envs, err := sweep.Preflight(ctx, env.Stdout, p, sp, false)
	if err != nil {
		return err
	}
	if c.dryRun {
		return sweep.WriteSteps(env.Stdout, p)
	}
	if st == nil {
		if st, err = store.OpenFlag(ctx, env.Getenv, "--store", c.storePath); err != nil {
			return err
		}
		defer st.Close()
	}
	sum, err := sweep.Run(ctx, p, envs, c.options(env, st, sweep.Options{Split: &sp, UnsavedDir: filepath.Dir(store.DefaultPath(env.Getenv))}))
	// A capacity below the control's is a difference, as a slower
	// baseline is: both are said before the exit.
	err = finishSweep(ctx, env, st, sum, err, search)
	if c.baseline == "" || err != nil && !errors.Is(err, ErrDifferences) {
		return err
	}
	j, jerr := report.JudgeSweep(ctx, env.Stdout, st, c.baseline, sum.SweepID)
	if jerr != nil {
		return jerr
	}
	return cmp.Or(sayJudgement(env, j), err)
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
	r, err := sweep.Resume(ctx, env.Stdout, env.Stderr, st, c.resume, store.Display(c.storePath), env.Getenv)
	if err != nil {
		return err
	}
	search, err := planCapacity(env, r.Plan, false)
	if err != nil {
		return err
	}
	sum, err := sweep.Run(ctx, r.Plan, r.Envs, c.options(env, st, sweep.Options{Resume: r.ID}))
	return finishSweep(ctx, env, st, sum, err, search)
}

// finishSweep prints the comparison of a finished (or interrupted) sweep
// and says where it is stored; then, once every step is done, it runs
// the plan's capacity search, if any (sweep.Summary.Search).
func finishSweep(ctx context.Context, env *Env, st *store.Store, sum *sweep.Summary, runErr error, search func(context.Context, *store.Store) error) error {
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
	return sum.Search(ctx, st, sum.Finish(env.Stdout, st.Path(), runErr), search)
}

// options are the sweep's options from the flags and env, added to o.
func (c *sweepCmd) options(env *Env, st *store.Store, o sweep.Options) sweep.Options {
	o.Store, o.Progress, o.Live, o.Verbose, o.Version = st, env.Stderr, progress.IsTerminal(env.Stderr), c.verbose, Version
	o.Host, _ = os.Hostname()
	return o
}
