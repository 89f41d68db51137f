package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/shakedown/shakedown/internal/outfile"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/capacity"
	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/progress"
	"github.com/shakedown/shakedown/internal/report"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/store"
)

// capacityCmd is "shakedown capacity WORKLOAD --slo ... [run options]".
type capacityCmd struct {
	slo                      []string
	targets                  []string
	control, jsonPath, store string
	htmlPath                 string
	bracketPct               float64
	peak                     string
	repeats, stepTime, warm  int
	searches                 int
	budget                   time.Duration
}

func (c *capacityCmd) flags() *pflag.FlagSet {
	fs := sbflag.NewFlagSet("capacity")
	fs.StringArrayVar(&c.slo, "slo", nil, "objective(s): "+capacity.SLOForm)
	fs.StringArrayVar(&c.targets, "target", nil, "a target, URL or NAME=URL; repeat for several (the first is the control)")
	fs.StringVar(&c.control, "control", "", "the target the others are compared with (default: the first)")
	fs.Float64Var(&c.bracketPct, "bracket", 100*capacity.Defaults.Options.Bracket, "stop bisecting when the failing rate is within this many percent of the holding one")
	fs.IntVar(&c.repeats, "repeats", capacity.Defaults.Options.Repeats, "run the answer this many more times to confirm it")
	fs.IntVar(&c.searches, "searches", 1, "search each target this many times, in rounds; 4 a side give a 95% interval of the capacity ratio")
	fs.IntVar(&c.stepTime, "step-time", capacity.Defaults.Time, "seconds each step measures")
	fs.IntVar(&c.warm, "step-warmup", capacity.Defaults.Warmup, "seconds of warm-up before each step measures")
	fs.DurationVar(&c.budget, "budget", 0, "cap the search's time, e.g. 15m (0: no cap)")
	fs.StringVar(&c.peak, "peak", "", "the production peak: events per second (such as 1200 or 1200/s), or a file watch --json wrote (its highest tps or qps); adds the headroom")
	fs.StringVar(&c.jsonPath, "json", "", "write the report as JSON to this file (- for standard output)")
	fs.StringVar(&c.htmlPath, "html", "", "write the latency-against-rate curves of every target as an HTML page to this file")
	fs.StringVar(&c.store, "store", "", "also record each target's capacity in this results store")
	return fs
}

func (c *capacityCmd) run(ctx context.Context, env *Env, args []string) error {
	fs := c.flags()
	own, rest := capacity.SplitArgs(fs, args)
	if help, err := parseFlags(env, fs, own, "capacity", capacityHelp); help || err != nil {
		return err
	}
	slo, err := capacity.ParseSLO(c.slo)
	if err != nil {
		return usagef("capacity: %v", err)
	}
	cfg := capacity.Config{Args: rest, Targets: c.targets, Control: c.control, Warmup: c.warm, Time: c.stepTime, Searches: c.searches,
		Password: env.Getenv, Version: Version, Log: env.Stderr,
		Options: capacity.Options{SLO: slo, Bracket: c.bracketPct / 100, Repeats: c.repeats, Budget: c.budget}}
	if err := cfg.Validate(); err != nil {
		return err
	}
	targets, err := capacity.Plan(cfg)
	if err != nil {
		return err
	}
	if cfg.Peak, cfg.PeakFrom, err = capacity.ReadPeak(c.peak, "", targets); err != nil {
		return usagef("capacity: --peak %v", err)
	}
	if err := outfile.Check(outfile.File{Flag: "--json", Path: c.jsonPath}, outfile.File{Flag: "--html", Path: c.htmlPath}); err != nil {
		return err
	}
	st, out, closeStore, err := loadOutputs(ctx, env, c.store, c.jsonPath)
	if err != nil {
		return err
	}
	defer closeStore()
	return c.search(ctx, env, out, st, cfg, targets)
}

// search runs cfg's search under its progress line and ends it as finish
// does.
func (c *capacityCmd) search(ctx context.Context, env *Env, out io.Writer, st *store.Store, cfg capacity.Config, targets []capacity.Target) error {
	line := progress.New(env.Stderr, progress.IsTerminal(env.Stderr), 10*time.Second, time.Now)
	rep, runErr := capacity.Run(ctx, cfg, targets, func(t string, p capacity.Progress) { line.Set(capacity.ProgressText(t, p)) })
	line.Clear()
	return c.finish(ctx, env, out, st, rep, runErr)
}

// planCapacity is the search a sweep plan's capacity: section asks for,
// with the capacity command's defaults for what it leaves out; nil when
// it has none or the sweep is split, whose runners share no one search.
func planCapacity(env *Env, p *plan.Plan, split bool) (func(context.Context, *store.Store) error, error) {
	if p.Capacity != nil && split {
		fmt.Fprintf(env.Stderr, "shakedown: %s:%d: a split sweep runs no capacity search: run the plan without --segment for it\n", p.Path, p.Capacity.Line)
		p.Capacity = nil // the plan this sweep runs, as --dry-run lists it
	}
	d := capacity.Defaults
	d.Version, d.Log = Version, env.Stderr
	cfg, targets, err := capacity.FromPlan(p.Capacity, p, p.ProductionPeak, p.ProductionPeakLine, d)
	if cfg == nil || err != nil {
		return nil, err
	}
	return func(ctx context.Context, st *store.Store) error {
		fmt.Fprintln(env.Stdout)
		return (&capacityCmd{}).search(ctx, env, env.Stdout, st, *cfg, targets)
	}, nil
}

// finish prints, writes and stores the report, and says how it ended.
func (c *capacityCmd) finish(ctx context.Context, env *Env, out io.Writer, st *store.Store, rep *capacity.Report, runErr error) error {
	rep.WriteText(out)
	if c.jsonPath != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := outfile.Write(env.Stdout, outfile.File{Flag: "--json", Path: c.jsonPath}, append(b, '\n')); err != nil {
			return err
		}
	}
	if c.htmlPath != "" {
		var b bytes.Buffer
		if err := report.WriteCapacityHTML(&b, capacityPage(rep)); err != nil {
			return err
		}
		if err := outfile.Write(env.Stdout, outfile.File{Flag: "--html", Path: c.htmlPath}, b.Bytes()); err != nil {
			return err
		}
	}
	if st != nil {
		if err := rep.Save(context.WithoutCancel(ctx), st, Version); err != nil {
			return err
		}
		fmt.Fprintf(out, "\nStored in %s\n", st.Path())
	}
	if runErr != nil {
		return runErr
	}
	if err := rep.Unfinished(); err != nil {
		return err
	}
	if why := rep.Shortfall(); why != "" {
		fmt.Fprintf(env.Stderr, "shakedown: capacity: %s\n", why)
		return ErrDifferences
	}
	return nil
}

// capacityPage is the report's plain figures of rep, for its HTML page.
func capacityPage(rep *capacity.Report) report.CapacityPage {
	p := report.CapacityPage{Title: "capacity of " + rep.Workload, SLO: rep.SLO, Peak: rep.PeakText(), Tool: "shakedown " + Version}
	for _, t := range rep.Targets {
		ct := report.CapacityTarget{Name: t.Target, Summary: rep.Headline(t), Rate: t.Capacity}
		for _, s := range t.Steps {
			if s.Offered > 0 {
				ct.Steps = append(ct.Steps, report.CapacityStep{Offered: s.Offered, Achieved: s.Achieved, P50: s.P50MS, P95: s.P95MS, P99: s.P99MS, Held: s.Held})
			}
		}
		p.Targets = append(p.Targets, ct)
	}
	for _, v := range rep.Versus {
		p.Versus = append(p.Versus, v.Candidate+": "+v.Text())
	}
	return p
}
