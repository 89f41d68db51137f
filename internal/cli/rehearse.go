package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/progress"
	"github.com/shakedown/shakedown/internal/readiness"
	"github.com/shakedown/shakedown/internal/rehearse"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/sweep"
)

// rehearseCmd is "shakedown rehearse PLAN.yaml".
type rehearseCmd struct {
	storePath string
	pages     string
	resume    string
	json      bool
}

func (c *rehearseCmd) flags(env *Env) *pflag.FlagSet {
	fs := storeFlagSet("rehearse", env, &c.storePath, "")
	fs.StringVar(&c.pages, "pages", ".", "directory the readiness pages are written to")
	fs.StringVar(&c.resume, "resume", "", "continue a stored rehearsal after its last finished step: its ID, or latest")
	fs.Lookup("resume").NoOptDefVal = "latest"
	fs.BoolVar(&c.json, "json", false, "print the rehearsal's summary as JSON instead of text")
	return fs
}

func (c *rehearseCmd) exec(ctx context.Context, env *Env, fs *pflag.FlagSet) error {
	if st, err := os.Stat(c.pages); err != nil || !st.IsDir() {
		return usagef("rehearse: --pages %s: not a directory", c.pages)
	}
	var st *store.Store
	var p *plan.Rehearsal
	var err error
	var resume int64
	if c.resume != "" {
		if c.resume == "latest" && fs.NArg() == 1 && sweep.IsResumeArg(fs.Arg(0)) {
			c.resume = fs.Arg(0) // --resume 7: the ID is parsed as an argument
		} else if fs.NArg() > 0 {
			return usagef("rehearse --resume takes the plan from the store: leave out %s", fs.Arg(0))
		}
		if st, err = store.OpenExisting(ctx, env.Getenv, c.storePath, "rehearse --resume"); err != nil {
			return err
		}
		defer st.Close()
		if p, resume, err = rehearse.Stored(ctx, env.Getenv, env.Stderr, st, c.resume, store.Display(c.storePath)); err != nil {
			return err
		}
	} else {
		if fs.NArg() != 1 {
			return usagef("rehearse: name one plan file, e.g. shakedown rehearse rehearsal.yaml (see shakedown rehearse --help)")
		}
		src, err := os.ReadFile(fs.Arg(0))
		if err != nil {
			return usagef("rehearse: read plan: %v", err)
		}
		if p, err = rehearse.ParsePlan(fs.Arg(0), src, env.Getenv); err != nil {
			return err
		}
		if st, err = store.OpenFlag(ctx, env.Getenv, "--store", c.storePath); err != nil {
			return err
		}
		defer st.Close()
	}
	host, _ := os.Hostname()
	out := env.Stdout
	if c.json {
		out = env.Stderr
	}
	sum, err := rehearse.Run(ctx, p, rehearse.Options{
		Store: st, StoreFlag: storeArg(store.Display(c.storePath)), Out: out, Progress: env.Stderr, Live: progress.IsTerminal(env.Stderr),
		PageDir: c.pages, Version: Version, Host: host, Resume: resume,
	})
	if sum == nil {
		return err
	}
	return c.finish(env, sum, err)
}

// finish prints the summary and turns the outcome into the exit status.
func (c *rehearseCmd) finish(env *Env, sum *rehearse.Summary, err error) error {
	if c.json {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if jerr := enc.Encode(sum); jerr != nil {
			return jerr
		}
	} else {
		for _, pg := range sum.Pages {
			fmt.Fprintf(env.Stdout, "%s: %s: %s\n", pg.Candidate, pg.Verdict, pg.Path)
		}
		fmt.Fprintf(env.Stdout, "rehearsal %d %s in %s; stored in %s\n", sum.ID, sum.Status, sum.Elapsed.Round(1e9), store.Display(c.storePath))
	}
	switch {
	case errors.Is(err, rehearse.ErrInterrupted):
		return fmt.Errorf("interrupted: the finished steps are stored; continue with shakedown rehearse --resume %d %s", sum.ID, storeArg(store.Display(c.storePath)))
	case err != nil:
		return fmt.Errorf("rehearsal %d stopped: %w; once fixed, continue with shakedown rehearse --resume %d %s", sum.ID, err, sum.ID, storeArg(store.Display(c.storePath)))
	case sum.Verdict == readiness.NotReady:
		return ErrDifferences
	}
	return nil
}
