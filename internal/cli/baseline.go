package cli

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/report"
	"github.com/shakedown/shakedown/internal/store"
)

// baselineCmd is "shakedown baseline".
type baselineCmd struct {
	storePath string
	sweep     string
	runs      string
	target    string
	help      bool
}

func (c *baselineCmd) flags(env *Env) *pflag.FlagSet {
	fs := storeFlagSet("baseline", env, &c.storePath, "")
	fs.StringVar(&c.sweep, "sweep", "latest", "save: the sweep whose runs make the baseline: its ID, or latest")
	fs.StringVar(&c.runs, "runs", "", "save: runs made outside sweeps instead: all, or their IDs (see shakedown report --list)")
	fs.StringVar(&c.target, "target", "", "save: the target whose runs make the baseline (default: the sweep's control, or the first)")
	fs.BoolVarP(&c.help, "help", "h", false, "show this help")
	return fs
}

var baselineNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

func (c *baselineCmd) run(ctx context.Context, env *Env, args []string) error {
	fs := c.flags(env)
	if err := fs.Parse(args); err != nil {
		return usagef("baseline: %v (see shakedown baseline --help)", err)
	}
	if c.help {
		fmt.Fprint(env.Stdout, baselineHelp)
		fmt.Fprint(env.Stdout, fs.FlagUsages())
		return nil
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return usagef("baseline: say save NAME, list or delete NAME (see shakedown baseline --help)")
	}
	verb, rest := rest[0], rest[1:]
	switch verb {
	case "save", "delete":
		if len(rest) != 1 {
			return usagef("baseline %s: name one baseline, e.g. shakedown baseline %s nightly", verb, verb)
		}
		if !baselineNameRE.MatchString(rest[0]) {
			return usagef("baseline %s: name %q: use letters, digits, '_', '.' or '-' (at most 64)", verb, rest[0])
		}
	case "list":
		if len(rest) != 0 {
			return usagef("baseline list takes no arguments")
		}
	default:
		return usagef("baseline: unknown action %q: want save, list or delete (see shakedown baseline --help)", verb)
	}
	if verb != "save" && (fs.Changed("sweep") || fs.Changed("runs") || fs.Changed("target")) {
		return usagef("baseline %s: --sweep, --runs and --target are for save", verb)
	}
	if fs.Changed("sweep") && c.runs != "" {
		return usagef("baseline save: --sweep and --runs: choose one")
	}
	st, err := store.OpenExisting(ctx, env.Getenv, c.storePath, "baseline")
	if err != nil {
		return err
	}
	defer st.Close()
	switch verb {
	case "save":
		return c.save(ctx, env, st, rest[0])
	case "delete":
		if _, err := report.LookupBaseline(ctx, st, rest[0], "baseline delete"); err != nil {
			return err
		}
		if err := st.DeleteBaseline(ctx, rest[0]); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "baseline %s deleted (its runs stay in the store)\n", rest[0])
		return nil
	}
	return c.list(ctx, env, st)
}

func (c *baselineCmd) save(ctx context.Context, env *Env, st *store.Store, name string) error {
	runs, source, control, err := report.BaselineRuns(ctx, st, c.runs, c.sweep, store.Display(c.storePath))
	if err != nil {
		return err
	}
	tg := c.target
	if tg == "" {
		tg = control
	}
	b, workloads := report.NewBaseline(name, source, tg, time.Now().UTC(), runs)
	if len(b.RunIDs) == 0 {
		return usagef("baseline save: %s holds no successful runs of target %q", source, tg)
	}
	if err := st.SaveBaseline(ctx, &b); err != nil {
		if errors.Is(err, store.ErrExists) {
			return usagef("baseline save: %s already exists: delete it first (shakedown baseline delete %s) or choose another name", name, name)
		}
		return err
	}
	fmt.Fprintf(env.Stdout, "baseline %s saved: %d runs of %s from %s (%s)\n", name, len(b.RunIDs), tg, source, strings.Join(workloads, ", "))
	return nil
}

func (c *baselineCmd) list(ctx context.Context, env *Env, st *store.Store) error {
	bs, err := st.Baselines(ctx)
	if err != nil {
		return err
	}
	return report.WriteBaselines(env.Stdout, store.Display(c.storePath), bs)
}

// sayJudgement writes what a comparison with a baseline found to stderr:
// ErrDifferences (exit 3) when anything came out slower.
func sayJudgement(env *Env, j *report.BaselineJudgement) error {
	if j.Say(env.Stderr) {
		return ErrDifferences
	}
	return nil
}
