package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/readiness"
	"github.com/shakedown/shakedown/internal/rehearse"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/store"
)

const rehearseUsage = `usage: shakedown rehearse PLAN.yaml [--store FILE] [--pages DIR] [--json]
       shakedown rehearse --resume [ID|latest] [--store FILE]

Rehearses a migration unattended, from one plan: check, copy, verify,
analyze, vars diff, replay, sweep and capacity, in that order, then one
readiness page per candidate. Each step's result is stored as it finishes
(check, verify, vars and replay as evidence, the sweep as a sweep), so
--resume continues a killed rehearsal after its last finished step. A step
that fails stops the chain with its reason, unless the plan gives it
continue_on_failure: true; the pages are made either way.

analyze writes index statistics on the candidates; replay runs only
statements that cannot write unless the plan says allow_writes: true; the
sweep loads the source and the candidates as sweep does. data: copy
writes the candidates as shakedown copy does (it needs allow-write: true);
capacity searches the sweep's first workload as shakedown capacity does.

Plan:
  source: {name: prod, url: mysql://shakedown@10.0.0.1:3306/app, password_env: PROD_PW}
  candidates:
    - {name: new, url: mysql://shakedown@10.0.0.2:3306/app, password_env: NEW_PW}
  databases: [app]                 # default: the source URL's database
  data: present                    # or copy: {allow-write: true, where: ...}
  replay: {capture: app.capture}   # optional; also speed, concurrency,
                                   # timeout, allow_writes
  sweep:                           # optional: a sweep plan without targets
    workloads: [oltp_point_select]
    threads: [1, 4]
    time: 10
  capacity: {slo: "p99<=20ms"}     # optional; also step_time, warmup, searches
  production_peak: 1200 qps        # optional, for capacity
  steps:                           # optional, per step
    check: {continue_on_failure: true}
    analyze: {skip: true}

Exit status: 0 ready (or ready with warnings), 3 not ready, 1 a step or
the tool failed, 2 bad usage or a bad plan.

Options:
`

// rehearseCmd is "shakedown rehearse PLAN.yaml".
type rehearseCmd struct {
	storePath string
	pages     string
	resume    string
	json      bool
}

func (c *rehearseCmd) flags(env *Env) *pflag.FlagSet {
	fs := sbflag.NewFlagSet("rehearse")
	fs.StringVar(&c.storePath, "store", store.DefaultPath(env.Getenv), "results store: a SQLite file, or mysql://user@host:port/db (password: SHAKEDOWN_STORE_PASSWORD)")
	fs.StringVar(&c.pages, "pages", ".", "directory the readiness pages are written to")
	fs.StringVar(&c.resume, "resume", "", "continue a stored rehearsal after its last finished step: its ID, or latest")
	fs.Lookup("resume").NoOptDefVal = "latest"
	fs.BoolVar(&c.json, "json", false, "print the rehearsal's summary as JSON instead of text")
	return fs
}

func (c *rehearseCmd) run(ctx context.Context, env *Env, args []string) error {
	fs := c.flags(env)
	if help, err := parseFlags(env, fs, args, "rehearse", rehearseUsage); help || err != nil {
		return err
	}
	if st, err := os.Stat(c.pages); err != nil || !st.IsDir() {
		return usagef("rehearse: --pages %s: not a directory", c.pages)
	}
	var st *store.Store
	var p *plan.Rehearsal
	var err error
	var resume int64
	if c.resume != "" {
		if c.resume == "latest" && fs.NArg() == 1 && resumeID(fs.Arg(0)) {
			c.resume = fs.Arg(0) // --resume 7: the ID is parsed as an argument
		} else if fs.NArg() > 0 {
			return usagef("rehearse --resume takes the plan from the store: leave out %s", fs.Arg(0))
		}
		if st, err = openExistingStore(ctx, env, c.storePath, "rehearse --resume"); err != nil {
			return err
		}
		defer st.Close()
		if p, resume, err = c.stored(ctx, env, st); err != nil {
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
		if p, err = plan.ParseRehearsal(fs.Arg(0), src, env.Getenv); err != nil {
			return err
		}
		if st, err = openStore(ctx, env, "--store", c.storePath); err != nil {
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
		Store: st, StoreFlag: storeArg(store.Display(c.storePath)), Out: out, Progress: env.Stderr, Live: isTerminal(env.Stderr),
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

// stored reads the rehearsal to resume and its plan from the store.
func (c *rehearseCmd) stored(ctx context.Context, env *Env, st *store.Store) (*plan.Rehearsal, int64, error) {
	var id int64
	if c.resume == "latest" {
		list, err := st.Rehearsals(ctx)
		if err != nil {
			return nil, 0, err
		}
		for _, r := range list {
			if r.Status != store.RehearsalDone {
				id = r.ID
				break
			}
		}
		if id == 0 {
			return nil, 0, usagef("rehearse --resume: %s holds no unfinished rehearsal", store.Display(c.storePath))
		}
	} else if n, err := strconv.ParseInt(c.resume, 10, 64); err != nil || n < 1 {
		return nil, 0, usagef("rehearse --resume %q: want a rehearsal ID, or nothing for the latest unfinished", c.resume)
	} else {
		id = n
	}
	r, err := st.GetRehearsal(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, usagef("rehearse --resume: no rehearsal %d in %s", id, store.Display(c.storePath))
	}
	if err != nil {
		return nil, 0, err
	}
	if r.Status == store.RehearsalDone {
		return nil, 0, usagef("rehearse --resume: rehearsal %d is done: nothing to resume (run the plan again for a new one)", id)
	}
	p, err := plan.ParseRehearsal(r.PlanPath, []byte(r.Plan), env.Getenv)
	if err != nil {
		return nil, 0, fmt.Errorf("rehearse --resume: the plan stored with rehearsal %d: %w", id, err)
	}
	fmt.Fprintf(env.Stderr, "resuming rehearsal %d %q of plan %s\n", id, r.Name, r.PlanPath)
	return p, id, nil
}
