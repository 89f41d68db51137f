package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/bisect"
	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/target"
)

// bisectCmd is "shakedown vars bisect".
type bisectCmd struct {
	cfg      bisect.Config
	threads  int
	allow    bool
	jsonPath string
	htmlPath string
	creds    target.Credentials
	help     bool
}

func (c *bisectCmd) flags() *pflag.FlagSet {
	fs := sbflag.NewFlagSet("vars bisect")
	cfg := &c.cfg
	fs.StringVar(&cfg.Workload, "workload", "", "workload to measure (as shakedown run takes it), e.g. oltp_write_only")
	fs.IntVar(&c.threads, "threads", 0, "client threads for every measurement")
	fs.BoolVar(&c.allow, "allow-set-global", false, "allow changing the control's global variables (restored at the end)")
	fs.IntVar(&cfg.Repeats, "repeats", bisect.DefaultRepeats, "runs of each server as it is, and pairs of runs a round (>= 4: fewer give no 95% interval; a round makes 6 pairs at least)")
	fs.IntVar(&cfg.MaxRepeats, "max-repeats", 0, "runs (pairs) at most when the first ones leave the answer open (default twice --repeats)")
	fs.DurationVar(&cfg.Budget, "budget", 0, "stop with the answer so far when the next round would end after this long (e.g. 10m; 0 = no limit)")
	fs.StringVar(&c.jsonPath, "json", "", "also write the result as JSON to this file")
	fs.StringVar(&c.htmlPath, "html", "", "also write the result as an HTML page to this file")
	fs.StringVar(&cfg.UndoPath, "undo", "bisect-undo.json", "undo file: written before the first change; with no CANDIDATE, restore the control from it")
	fs.StringVar(&cfg.SandboxHome, "sandbox-home", "", "where to look for the control as a sandbox to restart (default: $SHAKEDOWN_HOME/sandboxes or ~/.shakedown/sandboxes)")
	c.creds.Bind(fs)
	fs.BoolVarP(&c.help, "help", "h", false, "show this help")
	return fs
}

func (c *bisectCmd) run(ctx context.Context, env *Env, args []string) error {
	fs := c.flags()
	own, targets, runArgs, err := bisect.SplitArgs(fs, args)
	if err != nil {
		return err
	}
	if err := fs.Parse(own); err != nil {
		return usagef("vars bisect: %v (see shakedown vars bisect --help)", err)
	}
	if c.help {
		fmt.Fprint(env.Stdout, bisectHelp, fs.FlagUsages())
		return nil
	}
	undoOnly := fs.Changed("undo") && len(targets) < 2
	if undoOnly {
		return c.restore(ctx, env, targets, runArgs)
	}
	if len(targets) != 2 {
		return usagef("vars bisect: give two target URLs, CONTROL then CANDIDATE (got %d)", len(targets))
	}
	if c.threads < 1 && c.cfg.Workload != "" {
		return usagef("vars bisect: --threads must be >= 1")
	}
	if err := c.cfg.Validate(); err != nil {
		return err
	}
	cfg := c.cfg
	if cfg.Control, err = bisect.ParseTarget(&c.creds, env.Getenv, "vars bisect", targets[0]); err != nil {
		return err
	}
	if cfg.Candidate, err = bisect.ParseTarget(&c.creds, env.Getenv, "vars bisect", targets[1]); err != nil {
		return err
	}
	// Where the results go is checked before anything is read, measured
	// or changed: a bisect measures for minutes.
	outs := []outfile.File{{Flag: "--json", Path: c.jsonPath}, {Flag: "--html", Path: c.htmlPath}}
	if c.allow {
		outs = append(outs, outfile.File{Flag: "--undo", Path: cfg.UndoPath})
	}
	if err := outfile.Check(outs...); err != nil {
		return err
	}
	if cfg.SandboxHome == "" {
		cfg.SandboxHome = sandbox.DefaultHome(env.Getenv)
	}
	cfg.Threads, cfg.RunArgs = c.threads, runArgs
	cfg.Progress, cfg.Tool, cfg.Version = env.Stderr, "shakedown "+Version, Version
	if !c.allow {
		return c.dryRun(ctx, env, cfg)
	}
	res, runErr := bisect.Run(ctx, cfg)
	if res == nil || (runErr != nil && len(res.Measurements) == 0) {
		// Stopped before measuring anything: the error says it all.
		return runErr
	}
	if err := c.write(env, res); err != nil {
		return errors.Join(runErr, err)
	}
	if errors.Is(runErr, bisect.ErrInterrupted) {
		return errors.New("interrupted: the results above cover what ran before the stop")
	}
	return runErr
}

// dryRun lists what a bisect would change and refuses to go on.
func (c *bisectCmd) dryRun(ctx context.Context, env *Env, cfg bisect.Config) error {
	diffs, err := bisect.Plan(ctx, cfg)
	if err != nil {
		return err
	}
	if len(diffs) == 0 {
		fmt.Fprintln(env.Stdout, "No differing variables between the control and the candidate (per-instance values such as server_id, ports and paths are ignored): nothing to bisect.")
		return nil
	}
	bisect.WritePlan(env.Stderr, cfg.Control, diffs)
	return usagef("vars bisect: it changes the control's global variables (%d listed above): pass --allow-set-global to let it", len(diffs))
}

// write prints the result and writes --json and --html.
func (c *bisectCmd) write(env *Env, res *result.Bisect) error {
	if err := result.WriteBisectText(env.Stdout, res); err != nil {
		return err
	}
	for _, f := range []struct {
		path, what string
		write      func(io.Writer) error
	}{
		{c.jsonPath, "Result", func(w io.Writer) error { return result.WriteBisectJSON(w, res) }},
		{c.htmlPath, "HTML", func(w io.Writer) error { return result.WriteBisectHTMLPage(w, res) }},
	} {
		if f.path == "" {
			continue
		}
		if err := outfile.Render(f.path, f.write); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "%s written to %s\n", f.what, f.path)
	}
	return nil
}

// restore is "vars bisect --undo FILE [CONTROL]".
func (c *bisectCmd) restore(ctx context.Context, env *Env, targets, rest []string) error {
	if len(rest) > 0 {
		return usagef("vars bisect --undo FILE [CONTROL]: unexpected %q", rest[0])
	}
	raw, err := bisect.UndoControl(c.cfg.UndoPath, targets)
	if err != nil {
		return err
	}
	tgt, err := bisect.ParseTarget(&c.creds, env.Getenv, "vars bisect --undo", raw)
	if err != nil {
		return err
	}
	r, err := bisect.Undo(ctx, c.cfg.UndoPath, tgt, env.Stdout)
	if r != nil {
		r.Write(env.Stdout, c.cfg.UndoPath, err == nil)
	}
	return err
}
