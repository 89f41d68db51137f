package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/follow"
	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/readiness"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/verify"
)

// verifyCmd is "shakedown verify SOURCE TARGET".
type verifyCmd struct {
	tableChoice
	withCreds
	opts     verify.Options
	fixSQL   string
	resume   string
	rechecks int
	out      findings
}

func (c *verifyCmd) flags(env *Env) *pflag.FlagSet {
	fs := sbflag.NewFlagSet("verify")
	o := &c.opts
	c.tableChoice.bind(fs, "databases to compare, the same names on both sides (default: SOURCE's database against TARGET's; every user database when the URLs name none)")
	fs.StringVar(&o.Where, "where", "", "compare only rows matching this SQL condition, on both sides")
	fs.IntVar(&o.Threads, "threads", 4, "chunks checked at once (each uses a connection on both servers)")
	fs.DurationVar(&o.ChunkTime, "chunk-time", 100*time.Millisecond, "target time per chunk checksum; chunk sizes adapt to it (smaller chunks: less to read again when one differs, shorter snapshots)")
	fs.IntVar(&o.MaxLoad, "max-load", 0, "pause while the source's Threads_running is above this (0: never); verify's own queries count")
	fs.StringVar(&c.fixSQL, "fix-sql", "", "write repair SQL for the target to FILE (never run by shakedown)")
	fs.StringVar((*string)(&o.FixTriggers), "fix-sql-triggers", string(verify.FixTriggersSkip),
		"what --fix-sql does with a target table that has triggers, which its writes would fire: skip (its statements are written as comments only) or drop (the file locks the table, drops its triggers around its statements and recreates them as they were)")
	c.out.bindFiles(fs, "result")
	fs.StringVar(&c.resume, "resume", "", "checkpoint FILE: record finished chunks there, and skip those an earlier run of the same check recorded")
	fs.IntVar(&o.Recheck, "recheck", 3, "read differing rows again up to this many times before reporting them, so that a live source's in-flight changes are not reported (skipped when neither server has written since the check began)")
	fs.DurationVar(&o.RecheckWait, "recheck-wait", 500*time.Millisecond, "wait before each re-read of differing rows")
	fs.IntVar(&c.rechecks, "rechecks", 3, "while a follower applies the source's changes to TARGET: compare a chunk that differs again after the follower has passed the source's position, up to this many times")
	fs.IntVar(&o.MaxRows, "max-rows", 1000, "differing rows listed per table (all are counted and in --fix-sql)")
	fs.DurationVar(&o.ProgressInterval, "progress", 2*time.Second, "progress line interval, on stderr (0: only a line per finished table)")
	c.out.bindStore(fs, env, "save the result for shakedown readiness")
	return fs
}

func (c *verifyCmd) exec(ctx context.Context, env *Env, fs *pflag.FlagSet) error {
	src, dst, err := sides(env, &c.creds, "verify", fs.Args(), func() error {
		if err := c.opts.Validate(); err != nil {
			return err
		}
		if fs.Changed("fix-sql-triggers") && c.fixSQL == "" {
			return usagef("verify: --fix-sql-triggers applies to --fix-sql FILE, which is not given")
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Where the results go is checked before anything is read.
	if err := c.out.check(ctx, env, outfile.File{Flag: "--fix-sql", Path: c.fixSQL}); err != nil {
		return err
	}
	sSide, dSide, err := verify.Sides(ctx, src, dst, c.opts.Threads+2)
	if err != nil {
		return err
	}
	defer sSide.DB.Close()
	defer dSide.DB.Close()
	databases, err := verify.Databases(ctx, sSide, c.databases)
	if err != nil {
		return err
	}
	opts := c.opts
	opts.Databases, opts.Tables, opts.Exclude, opts.Progress = databases, c.tables, c.exclude, env.Stderr
	opts.FromFlags()
	if w := follow.NewWatcher(sSide.DB, dSide.DB, followed(dst.DB, databases)); c.rechecks > 0 && w.Alive(ctx) {
		opts.Rechecks, opts.Settle, opts.Align = c.rechecks, w.Settle, w.Align
		fmt.Fprintf(env.Stderr, "verify: a follower is applying the source's changes to the target: a chunk that differs is compared again after it has passed the source's position, up to %d times (--rechecks)\n", c.rechecks)
	}
	closeAll, err := opts.OpenFiles(c.fixSQL, c.resume, verify.Fingerprint{
		Source: src.Redacted(), Target: dst.Redacted(), Databases: c.databases, Tables: c.tables, Exclude: c.exclude, Where: opts.Where,
	})
	defer closeAll()
	if err != nil {
		return err
	}

	rep, runErr := verify.Run(ctx, sSide, dSide, opts)
	if errors.Is(runErr, verify.ErrNothingToCompare) {
		return usagef("verify: %v", runErr)
	}
	if rep == nil {
		return runErr
	}
	if err := verify.WriteText(env.Stdout, rep, min(opts.MaxRows, 50)); err != nil {
		return err
	}
	err = c.out.keep(ctx, env, func(w io.Writer) error { return verify.WriteJSON(w, rep) },
		func(w io.Writer) error { return verify.WriteHTML(w, rep, opts.MaxRows) },
		func() ([]*store.Evidence, error) { return one(readiness.VerifyEvidence(rep, runErr, Version)) })
	if err != nil {
		return err
	}
	return c.outcome(rep, runErr)
}

// followed are the target databases a follower of this verify's target
// would be saved under.
func followed(db string, databases []string) []string {
	if db != "" {
		return []string{db}
	}
	return databases
}

// outcome is how the command ends once the results are out.
func (c *verifyCmd) outcome(rep *verify.Report, runErr error) error {
	switch {
	case errors.Is(runErr, verify.ErrInterrupted):
		if c.resume != "" {
			return fmt.Errorf("interrupted: finished chunks are recorded in %s; run the same command again to resume", c.resume)
		}
		return errors.New("interrupted: the results above cover what was checked; use --resume FILE to be able to continue")
	case runErr != nil:
		return runErr
	case !rep.Equal:
		return ErrDifferences
	}
	return nil
}
