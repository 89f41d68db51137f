package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/progress"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/segment"
	"github.com/shakedown/shakedown/internal/slap"
	"github.com/shakedown/shakedown/internal/store"
)

// slapCmd is "shakedown slap [mysqlslap options]".
type slapCmd struct {
	opts slap.Options
}

func (c *slapCmd) run(ctx context.Context, env *Env, args []string) error {
	o := &c.opts
	if err := o.Parse(args); err != nil {
		if f := segment.FlagIn(args); f != "" {
			return usagef("slap: %s: slap cannot be split over runners: its levels end after a number of queries, not at a time every runner knows; a run with --time can be split instead (see shakedown run --help)", f)
		}
		return usagef("slap: %s", sbflag.Explain(o.Flags(), err, "shakedown slap --help"))
	}
	switch {
	case o.Help:
		fmt.Fprint(env.Stdout, strings.TrimSuffix(slapHelp, "\nOptions:\n"))
		sbflag.WriteSections(env.Stdout, o.Flags(), slap.HelpSections)
		return nil
	case o.Version:
		fmt.Fprintf(env.Stdout, "shakedown slap %s (mysqlslap-compatible, Ver 1.0)\n", Version)
		return nil
	}
	if err := o.Prompt(env.Stdin); err != nil {
		return err
	}
	o.IO.Tuning = client.ReadIOTuning(env.Getenv)
	b, err := slap.Load(o, env.Getenv)
	if err != nil {
		return err
	}
	// Where the results go is checked before the load.
	csv := o.CSV
	if csv == "-" {
		csv = ""
	}
	if err := outfile.Check(outfile.File{Flag: "--json", Path: o.JSON}, outfile.File{Flag: "--csv", Path: csv}); err != nil {
		return err
	}
	st, out, closeStore, err := loadOutputs(ctx, env, o.Store, o.JSON)
	if err != nil {
		return err
	}
	defer closeStore()
	// The status line goes to standard error, so that standard output
	// stays mysqlslap's.
	err = b.Run(ctx, slap.Env{Out: out, Err: env.Stderr, Progress: env.Stderr, Live: progress.IsTerminal(env.Stderr)})
	// What was measured is kept, however the test ended.
	return loadEnd(env, slapError(err), c.saveResults(context.WithoutCancel(ctx), env, out, st, b.Results()))
}

func slapError(err error) error {
	if errors.Is(err, slap.ErrInterrupted) {
		return errors.New("interrupted: the summary above covers what ran before the stop")
	}
	return err
}

// saveResults writes --json (a list of result documents, one per
// concurrency level) and records each level in the store, saying so on
// out. What cannot be saved goes to standard error as JSON.
func (c *slapCmd) saveResults(ctx context.Context, env *Env, out io.Writer, st *store.Store, levels []*result.Result) error {
	o := &c.opts
	if len(levels) == 0 {
		return nil
	}
	for _, r := range levels {
		r.Tool = "shakedown " + Version
	}
	var errs []error
	if o.JSON != "" {
		b, err := json.MarshalIndent(levels, "", "  ")
		if err != nil {
			return err
		}
		if err := outfile.Write(env.Stdout, outfile.File{Flag: "--json", Path: o.JSON}, append(b, '\n')); err != nil {
			errs = append(errs, err)
		}
	}
	if st != nil {
		if err := slap.Store(ctx, st, levels); err != nil {
			errs = append(errs, fmt.Errorf("--store %s: %w", st.Path(), err))
		} else if !o.Silent {
			fmt.Fprintf(out, "%d concurrency level(s) stored in %s (shakedown report --runs)\n", len(levels), o.Store)
		}
	}
	if len(errs) > 0 {
		return rescue(env.Stderr, errors.Join(errs...), levels)
	}
	return nil
}
