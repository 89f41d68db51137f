package cli

import (
	"context"
	"fmt"
	"github.com/shakedown/shakedown/internal/result"
	"io"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/mirror"
	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/report"
	"github.com/shakedown/shakedown/internal/store"
)

// reportCmd is "shakedown report".
type reportCmd struct {
	storePath string
	sweep     string
	format    string
	out       string
	list      bool
	runs      string
	control   string
	baseline  string
	history   bool
	workload  string
	target    string
	threads   int
	imports   []string
	bisect    string
	stall     int64
	mirrorRun int64
	help      bool
	// bisected is the result --bisect names, read before anything else.
	bisected *result.Bisect
}

func (c *reportCmd) flags(env *Env) *pflag.FlagSet {
	fs := storeFlagSet("report", env, &c.storePath, "")
	fs.StringVar(&c.sweep, "sweep", "latest", "sweep to report: its ID, or latest")
	fs.StringVar(&c.format, "format", "text", "text, md, csv, json or html; with -o and no --format, taken from the file's extension")
	fs.StringVarP(&c.out, "output", "o", "", "write to FILE instead of standard output")
	fs.String("html", "", "write the report as a self-contained HTML page to FILE (as -o FILE --format html)")
	fs.BoolVar(&c.list, "list", false, "list the sweeps in the store, and the runs made outside sweeps")
	fs.StringVar(&c.runs, "runs", "", "report runs made outside sweeps instead of a sweep: all, or their IDs (see --list)")
	fs.StringVar(&c.control, "control", "", "with --runs or result files: the target the others are compared with (default: the first)")
	fs.StringVar(&c.baseline, "baseline", "", "compare with this saved baseline; exit 3 when anything is slower")
	fs.BoolVar(&c.history, "history", false, "every workload, target and thread level across every stored sweep, with change points")
	fs.StringVar(&c.workload, "workload", "", "with --history: only this workload (or label)")
	fs.StringVar(&c.target, "target", "", "with --history: only this target")
	fs.IntVar(&c.threads, "threads", 0, "with --history: only this thread level")
	fs.StringSliceVar(&c.imports, "import", nil, "add the results a runner of a split load kept in FILE when it lost the store (it names the file), then stop")
	fs.StringVar(&c.bisect, "bisect", "", "show the result of a vars bisect (the JSON vars bisect --json wrote) right after the variables that differ")
	fs.Int64Var(&c.stall, "stall", 0, "print this run's stall captures in full (the run IDs are in the reports' stall captures and in --list)")
	fs.Int64Var(&c.mirrorRun, "mirror", 0, "show a stored mirror run: each snapshot period per candidate and the differences (the ID mirror --store printed)")
	fs.BoolVarP(&c.help, "help", "h", false, "show this help")
	return fs
}

func (c *reportCmd) exec(ctx context.Context, env *Env, fset *pflag.FlagSet) error {
	files := fset.Args()
	if len(c.imports) > 0 {
		if len(files) > 0 || c.list || c.history || c.baseline != "" || c.runs != "" {
			return usagef("report --import adds files to the store and reports nothing: give it alone, with --store")
		}
		return report.Import(ctx, env.Stdout, env.Getenv, c.storePath, c.imports)
	}
	if err := c.validate(fset, files); err != nil {
		return err
	}
	if len(files) > 0 {
		d, err := report.FromFiles(files, c.control)
		if err != nil {
			return err
		}
		return c.write(env, d, fmt.Sprintf("%d result files", len(files)))
	}
	st, runIDs, id, err := c.open(ctx, env)
	if err != nil {
		return err
	}
	defer st.Close()
	if c.mirrorRun != 0 {
		recs, err := mirror.LoadRun(ctx, st, c.mirrorRun)
		if err != nil {
			return err
		}
		return mirror.WriteRun(env.Stdout, c.mirrorRun, recs)
	}
	if c.list {
		return report.List(ctx, env.Stdout, st, store.Display(c.storePath))
	}
	if c.stall != 0 {
		return c.writeStalls(ctx, env, st)
	}
	if c.history {
		return c.writeHistory(ctx, env, st)
	}
	var base store.Baseline
	if c.baseline != "" {
		if base, err = report.LookupBaseline(ctx, st, c.baseline, "report --baseline"); err != nil {
			return err
		}
	}
	if c.runs != "" {
		return c.writeRuns(ctx, env, st, base, runIDs)
	}
	d, id, err := report.LoadSweep(ctx, st, id, store.Display(c.storePath))
	if err != nil {
		return err
	}
	if c.baseline != "" {
		return c.writeBaseline(ctx, env, st, base, d.Runs)
	}
	return c.write(env, d, fmt.Sprintf("sweep %d", id))
}

// writeBaseline reports fresh runs against a baseline and exits with 3
// when anything is slower.
func (c *reportCmd) writeBaseline(ctx context.Context, env *Env, st *store.Store, b store.Baseline, fresh []store.Run) error {
	j, err := report.JudgeBaseline(ctx, st, b, fresh)
	if err != nil {
		return err
	}
	if err := c.emit(env, func(w io.Writer) error { return report.Write(w, c.format, j.Report) }, "baseline "+b.Name); err != nil {
		return err
	}
	return sayJudgement(env, j)
}

// writeHistory reports every stored sweep as a history.
func (c *reportCmd) writeHistory(ctx context.Context, env *Env, st *store.Store) error {
	h, err := report.StoredHistory(ctx, st, store.Display(c.storePath), report.HistoryFilter{Workload: c.workload, Target: c.target, Threads: c.threads})
	if err != nil {
		return err
	}
	return c.emit(env, func(w io.Writer) error { return report.WriteHistory(w, c.format, h) }, "the history")
}

// emit writes through fn to standard output or -o.
func (c *reportCmd) emit(env *Env, fn func(io.Writer) error, what string) error {
	if c.out == "" {
		return fn(env.Stdout)
	}
	if err := outfile.Render(c.out, fn); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "report of %s written to %s\n", what, c.out)
	return nil
}

// write renders d in the chosen format to standard output or -o; what
// names the report in the message about the file.
func (c *reportCmd) write(env *Env, d *store.SweepData, what string) error {
	rep := report.Build(d)
	rep.Bisect = c.bisected
	return c.emit(env, func(w io.Writer) error { return report.Write(w, c.format, rep) }, what)
}

// validate checks which flags go together, and reads --format and
// --bisect.
func (c *reportCmd) validate(fset *pflag.FlagSet, files []string) error {
	switch {
	case len(files) > 0 && (c.runs != "" || fset.Changed("sweep") || c.list):
		return usagef("report: result files are reported on their own: leave out --runs, --sweep and --list")
	case c.runs != "" && fset.Changed("sweep"):
		return usagef("report: --runs and --sweep: choose one")
	case c.control != "" && len(files) == 0 && c.runs == "":
		return usagef("report: --control is for --runs or result files; a sweep's plan names its control")
	case c.history && (c.runs != "" || fset.Changed("sweep") || c.baseline != "" || len(files) > 0 || c.list):
		return usagef("report: --history covers every stored sweep: leave out --sweep, --runs, --baseline, --list and files")
	case !c.history && (c.workload != "" || c.target != "" || c.threads != 0):
		return usagef("report: --workload, --target and --threads are for --history")
	case c.baseline != "" && (len(files) > 0 || c.list):
		return usagef("report: --baseline compares stored results: name them with --sweep or --runs")
	}
	if fset.Changed("stall") {
		return c.validateStall(fset, files)
	}
	if err := chooseFormat("report", fset, &c.out, &c.format, report.Formats); err != nil {
		return err
	}
	if c.bisect != "" {
		if c.history || c.list || c.baseline != "" {
			return usagef("report: --bisect goes with a sweep, runs or result files: leave out --history, --list and --baseline")
		}
		res, err := report.ReadBisect(c.bisect)
		if err != nil {
			return err
		}
		c.bisected = res
	}
	return nil
}

// open reads --runs and --sweep and opens the store they are read from.
func (c *reportCmd) open(ctx context.Context, env *Env) (st *store.Store, runIDs []int64, id int64, err error) {
	if c.runs != "" {
		ids, ok := report.ParseRunIDs(c.runs)
		if !ok {
			return nil, nil, 0, usagef("report: --runs %q: want all, or run IDs such as 4,5,7 (see --list)", c.runs)
		}
		runIDs = ids
	}
	if c.sweep != "latest" {
		n, err := strconv.ParseInt(c.sweep, 10, 64)
		if err != nil || n < 1 {
			return nil, nil, 0, usagef("report: --sweep %q: want a sweep ID (see --list) or latest", c.sweep)
		}
		id = n
	}
	if store.Missing(c.storePath) {
		return nil, nil, 0, usagef("report: no store at %s: run a sweep (or shakedown run --store) first, or name the store with --store", c.storePath)
	}
	st, err = store.OpenFlag(ctx, env.Getenv, "--store", c.storePath)
	return st, runIDs, id, err
}

// writeRuns reports runs made outside sweeps, or judges them against
// base when --baseline is given.
func (c *reportCmd) writeRuns(ctx context.Context, env *Env, st *store.Store, base store.Baseline, runIDs []int64) error {
	runs, err := report.LooseRuns(ctx, st, runIDs, store.Display(c.storePath))
	if err != nil {
		return err
	}
	if c.baseline != "" {
		return c.writeBaseline(ctx, env, st, base, runs)
	}
	d, err := report.FromRuns(store.Display(c.storePath), runs, c.control)
	if err != nil {
		return usagef("report: --control: %v", err)
	}
	return c.write(env, d, fmt.Sprintf("%d runs", len(runs)))
}
