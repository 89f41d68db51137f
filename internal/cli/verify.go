package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/helptext"
	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/readiness"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/schema"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/verify"
)

// verifyCmd is "shakedown verify SOURCE TARGET".
type verifyCmd struct {
	databases   sbflag.Strings
	tables      sbflag.Strings
	exclude     sbflag.Strings
	where       string
	threads     int
	chunkTime   time.Duration
	maxLoad     int
	fixSQL      string
	jsonFile    string
	htmlFile    string
	resume      string
	recheck     int
	recheckWait time.Duration
	maxRows     int
	progress    time.Duration
	storePath   string

	creds target.Credentials
}

func (c *verifyCmd) flags(env *Env) *pflag.FlagSet {
	fs := sbflag.NewFlagSet("verify")
	fs.Var(&c.databases, "databases", "databases to compare, the same names on both sides (default: SOURCE's database against TARGET's; every user database when the URLs name none)")
	fs.Var(&c.tables, "tables", "only these tables: db.table or table, * and ? allowed (comma list)")
	fs.Var(&c.exclude, "exclude", "skip these tables: same forms as --tables")
	fs.StringVar(&c.where, "where", "", "compare only rows matching this SQL condition, on both sides")
	fs.IntVar(&c.threads, "threads", 4, "chunks checked at once (each uses a connection on both servers)")
	fs.DurationVar(&c.chunkTime, "chunk-time", 100*time.Millisecond, "target time per chunk checksum; chunk sizes adapt to it (smaller chunks: less to read again when one differs, shorter snapshots)")
	fs.IntVar(&c.maxLoad, "max-load", 0, "pause while the source's Threads_running is above this (0: never); verify's own queries count")
	fs.StringVar(&c.fixSQL, "fix-sql", "", "write repair SQL for the target to FILE (never run by shakedown)")
	fs.StringVar(&c.jsonFile, "json", "", "write the result as JSON to FILE")
	fs.StringVar(&c.htmlFile, "html", "", "write the result as a self-contained HTML page to FILE")
	fs.StringVar(&c.resume, "resume", "", "checkpoint FILE: record finished chunks there, and skip those an earlier run of the same check recorded")
	fs.IntVar(&c.recheck, "recheck", 3, "read differing rows again up to this many times before reporting them, so that a live source's in-flight changes are not reported (skipped when neither server has written since the check began)")
	fs.DurationVar(&c.recheckWait, "recheck-wait", 500*time.Millisecond, "wait before each re-read of differing rows")
	fs.IntVar(&c.maxRows, "max-rows", 1000, "differing rows listed per table (all are counted and in --fix-sql)")
	fs.DurationVar(&c.progress, "progress", 2*time.Second, "progress line interval, on stderr (0: only a line per finished table)")
	fs.StringVar(&c.storePath, "store", "", store.FlagUsage(env.Getenv, "save the result for shakedown readiness"))

	c.creds.Bind(fs)
	return fs
}

func (c *verifyCmd) run(ctx context.Context, env *Env, args []string) error {
	fs := c.flags(env)
	if help, err := parseFlags(env, fs, args, "verify", helptext.Verify); help || err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) != 2 {
		return usagef("verify: want SOURCE and TARGET, got %d argument(s): shakedown verify mysql://user@source/db mysql://user@target/db", len(rest))
	}
	if err := c.validate(); err != nil {
		return err
	}
	src, err := c.creds.ParseArg(env.Getenv, "verify: SOURCE", rest[0])
	if err != nil {
		return err
	}
	dst, err := c.creds.ParseArg(env.Getenv, "verify: TARGET", rest[1])
	if err != nil {
		return err
	}
	// Where the results go is checked before anything is read.
	if err := outfile.Check(outfile.File{Flag: "--fix-sql", Path: c.fixSQL}, outfile.File{Flag: "--json", Path: c.jsonFile}, outfile.File{Flag: "--html", Path: c.htmlFile}); err != nil {
		return err
	}
	if err := store.CheckFlag(ctx, env.Getenv, "--store", c.storePath); err != nil {
		return err
	}
	// A URL without a database takes the other's.
	switch {
	case src.NamesDB() && !dst.NamesDB():
		dst.DB = src.DB
	case dst.NamesDB() && !src.NamesDB():
		src.DB = dst.DB
	}

	size := c.threads + 2
	var sSide, dSide *schema.Side
	if sSide, err = verify.Connect(ctx, "source", src, size); err != nil {
		return err
	}
	defer sSide.DB.Close()
	if dSide, err = verify.Connect(ctx, "target", dst, size); err != nil {
		return err
	}
	defer dSide.DB.Close()
	databases := []string(c.databases)
	if len(databases) > 0 || src.DB == "" {
		// The URLs' databases are checked by verify itself, which also
		// pairs two different names.
		if databases, err = src.Databases(ctx, sSide.DB, c.databases, target.EveryDatabase, "verify: SOURCE"); err != nil {
			return err
		}
	}

	opts, closeAll, err := c.options(env, databases, src, dst)
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
	if err := verify.WriteText(env.Stdout, rep, min(c.maxRows, 50)); err != nil {
		return err
	}
	if err := c.keep(ctx, env, rep, runErr); err != nil {
		return err
	}
	return c.outcome(rep, runErr)
}

// storeVerify saves a verify result for readiness pages.
func storeVerify(ctx context.Context, path string, rep *verify.Report, runErr error) error {
	ev, err := readiness.VerifyEvidence(rep, runErr, Version)
	if err != nil {
		return err
	}
	return addEvidence(ctx, path, ev)
}

// addEvidence saves what a tool found in the store --store names, for
// readiness pages; an interrupted run is saved too.
func addEvidence(ctx context.Context, path string, evs ...*store.Evidence) error {
	ctx = context.WithoutCancel(ctx)
	st, err := store.OpenFlag(ctx, nil, "--store", path)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, ev := range evs {
		if _, err := st.AddEvidence(ctx, ev); err != nil {
			return fmt.Errorf("--store: %w", err)
		}
	}
	return nil
}

// validate checks the flags' values.
func (c *verifyCmd) validate() error {
	switch {
	case c.threads < 1:
		return usagef("verify: --threads must be >= 1")
	case c.chunkTime <= 0:
		return usagef("verify: --chunk-time must be > 0, e.g. 100ms")
	case c.maxLoad < 0:
		return usagef("verify: --max-load must be >= 0")
	case c.recheck < 0:
		return usagef("verify: --recheck must be >= 0")
	case c.recheckWait < 0:
		return usagef("verify: --recheck-wait must be >= 0")
	case c.maxRows < 1:
		return usagef("verify: --max-rows must be >= 1")
	case c.progress < 0:
		return usagef("verify: --progress must be >= 0")
	case strings.Contains(c.where, ";"):
		return usagef("verify: --where is one condition, without ';'")
	}
	return nil
}

// options are verify's options from the flags, with the --fix-sql file
// and the --resume checkpoint open; closeAll closes them.
func (c *verifyCmd) options(env *Env, databases []string, src, dst *target.Target) (opts verify.Options, closeAll func(), err error) {
	var closers []func()
	closeAll = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	opts = verify.Options{
		Databases:   databases,
		Tables:      c.tables,
		Exclude:     c.exclude,
		Where:       c.where,
		Threads:     c.threads,
		ChunkTime:   c.chunkTime,
		MaxLoad:     c.maxLoad,
		Recheck:     c.recheck,
		RecheckWait: c.recheckWait,
		MaxRows:     c.maxRows,
		Progress:    env.Stderr,
	}
	if c.recheckWait == 0 {
		opts.RecheckWait = time.Nanosecond
	}
	if c.progress > 0 {
		opts.ProgressInterval = c.progress
	} else {
		opts.ProgressInterval = 1000 * time.Hour
	}
	if c.fixSQL != "" {
		f, err := os.Create(c.fixSQL)
		if err != nil {
			return opts, closeAll, fmt.Errorf("create --fix-sql file: %w", err)
		}
		closers = append(closers, func() { f.Close() })
		opts.Fix = f
	}
	if c.resume != "" {
		ck, err := verify.OpenCheckpoint(c.resume, verify.Fingerprint{
			Source:    src.Redacted(),
			Target:    dst.Redacted(),
			Databases: c.databases,
			Tables:    c.tables,
			Exclude:   c.exclude,
			Where:     c.where,
		})
		if errors.Is(err, verify.ErrCheckpointMismatch) {
			return opts, closeAll, usagef("verify: --resume: %v", err)
		}
		if err != nil {
			return opts, closeAll, err
		}
		closers = append(closers, func() { ck.Close() })
		opts.Checkpoint = ck
		if ck.Resumed() {
			fmt.Fprintf(env.Stderr, "verify: resuming from %s\n", c.resume)
		}
	}
	return opts, closeAll, nil
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

// keep writes the result to the files and the store the flags name.
func (c *verifyCmd) keep(ctx context.Context, env *Env, rep *verify.Report, runErr error) error {
	if c.jsonFile != "" {
		if err := outfile.Create(c.jsonFile, func(w io.Writer) error { return verify.WriteJSON(w, rep) }); err != nil {
			return err
		}
	}
	if c.htmlFile != "" {
		if err := outfile.Create(c.htmlFile, func(w io.Writer) error { return verify.WriteHTML(w, rep, c.maxRows) }); err != nil {
			return err
		}
	}
	if c.storePath != "" {
		if err := storeVerify(ctx, c.storePath, rep, runErr); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "stored in %s (shakedown readiness)\n", store.Display(c.storePath))
	}
	return nil
}
