package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/dbcopy"
	"github.com/shakedown/shakedown/internal/follow"
	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/progress"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/target"
)

// copyCmd is "shakedown copy SOURCE TARGET".
type copyCmd struct {
	withCreds
	databases sbflag.Strings
	where     []string
	sample    string
	opts      dbcopy.Options
	followFK  bool
	jsonFile  string
	progress  time.Duration
	follow    bool
	f         follow.Flags
}

func (c *copyCmd) flags(_ *Env) *pflag.FlagSet {
	fs := sbflag.NewFlagSet("copy")
	o := &c.opts
	fs.Var(&c.databases, "databases", "databases to copy, by the same names on TARGET (default: SOURCE's database into TARGET's)")
	fs.BoolVar(&o.AllowWrite, "allow-write", false, "write to TARGET (required)")
	fs.BoolVar(&o.Replace, "replace", false, "drop a target database that holds tables, and copy afresh")
	fs.IntVar(&o.Threads, "threads", 4, "ranges copied at once (each holds a connection on both servers)")
	fs.Int64Var(&o.ChunkRows, "chunk-rows", 10_000, "rows per range")
	fs.StringVar(&o.Consistency, "consistency", dbcopy.ConsistencyLock, "lock: one point in time for every table, by a brief global lock; none: no lock, each range as read")
	fs.StringVar(&o.Schema, "schema", dbcopy.SchemaCreate, "create: TARGET's tables from SOURCE's; existing: load into the empty tables TARGET has (made beforehand)")
	fs.BoolVar(&o.Accounts, "accounts", false, "also copy the accounts with privileges on the copied databases, and those privileges")
	fs.BoolVar(&o.IndexesWithData, "indexes-with-data", false, "create secondary indexes with the tables, not after the rows")
	fs.StringArrayVar(&c.where, "where", nil, "copy the rows of a table matching a condition: 'db.table: condition' (repeatable)")
	fs.StringVar(&c.sample, "sample", "", "copy this share of rows, e.g. 10%, of every table without --where and without a foreign key")
	fs.BoolVar(&c.followFK, "follow-fk", true, "with a subset: bring the rows that reference chosen rows (to --fk-depth) and the rows they reference")
	fs.IntVar(&o.FKDepth, "fk-depth", 3, "levels of referencing rows --follow-fk brings")
	fs.StringVar(&o.Checkpoint, "checkpoint", "", "record finished ranges in FILE (a copy stopped by Ctrl-C leaves it)")
	fs.BoolVar(&o.Resume, "resume", false, "continue the copy that --checkpoint FILE recorded")
	fs.BoolVar(&o.NoVerify, "no-verify", false, "skip the final verify")
	fs.StringVar(&c.jsonFile, "json", "", "write the result as JSON to FILE (- for standard output)")
	fs.DurationVar(&c.progress, "progress", 2*time.Second, "progress line interval on standard error (0: none)")
	fs.BoolVar(&c.follow, "follow", false, "then apply the source's binary log from the snapshot's position until stopped (as shakedown follow)")
	c.f.Bind(fs, false)
	return fs
}

func (c *copyCmd) exec(ctx context.Context, env *Env, fs *pflag.FlagSet) error {
	if err := c.check(fs); err != nil {
		return err
	}
	src, err := c.creds.ParseArg(env.Getenv, "copy: SOURCE", fs.Arg(0))
	if err != nil {
		return err
	}
	dst, err := c.creds.ParseArg(env.Getenv, "copy: TARGET", fs.Arg(1))
	if err != nil {
		return err
	}
	if err := outfile.Check(outfile.File{Flag: "--json", Path: c.jsonFile}); err != nil {
		return err
	}
	c.opts.Databases = c.databases
	c.opts.Log = env.Stderr
	var fopts follow.Options
	if c.follow {
		if fopts, err = c.followOptions(ctx, src, dst); err != nil {
			return err
		}
	}
	var line *progress.Line // nil: no progress line
	if c.progress > 0 {
		line = progress.New(env.Stderr, progress.IsTerminal(env.Stderr), c.progress, time.Now)
		c.opts.OnProgress = func(p dbcopy.Progress) { line.Set(p.String()) }
	}
	res, err := dbcopy.Run(ctx, src, dst, c.opts)
	line.Clear()
	if c.follow && res != nil {
		res.Notes = append(res.Notes, "the source changes on while it is followed: verify beside the follower (or --verify-every) compares a chunk that differs again once the follower has passed it")
	}
	switch {
	case errors.Is(err, dbcopy.ErrWriteNotAllowed), errors.Is(err, dbcopy.ErrTargetNotEmpty),
		errors.Is(err, dbcopy.ErrNothingToCopy), errors.Is(err, dbcopy.ErrBadOptions):
		return usagef("copy: %v", err)
	case res == nil:
		return err
	}
	if c.jsonFile != "-" {
		if werr := dbcopy.WriteText(env.Stdout, res); werr != nil && err == nil {
			err = werr
		}
	}
	if c.jsonFile != "" {
		b, jerr := json.MarshalIndent(res, "", "  ")
		if jerr == nil {
			jerr = outfile.Write(env.Stdout, outfile.File{Flag: "--json", Path: c.jsonFile}, append(b, '\n'))
		}
		err = errors.Join(err, jerr)
	}
	if err != nil {
		if c.opts.Checkpoint != "" {
			fmt.Fprintf(env.Stderr, "copy: stopped; --checkpoint %s --resume continues it\n", c.opts.Checkpoint)
		}
		return err
	}
	if res.Verify != nil && !res.Verify.Equal {
		return ErrDifferences
	}
	if c.follow {
		if res.BinlogFile == "" {
			return fmt.Errorf("copy --follow: the snapshot has no binary log position to follow from (%s)", res.Consistency)
		}
		fopts.From = follow.Position{File: res.BinlogFile, Pos: uint32(res.BinlogPos), GTID: res.GTID}
		fopts.Databases = nil
		for _, p := range res.Databases {
			fopts.Databases = append(fopts.Databases, follow.Pair{Source: p.Source, Target: p.Target})
		}
		return runFollower(ctx, env, &c.f, src, dst, fopts)
	}
	return nil
}

// followOptions are --follow's, checked against both servers before the
// copy begins.
func (c *copyCmd) followOptions(ctx context.Context, src, dst *target.Target) (follow.Options, error) {
	c.f.AllowWrite, c.f.Progress = c.opts.AllowWrite, c.progress
	fopts, err := c.f.Resolve("copy")
	if err != nil {
		return fopts, err
	}
	switch {
	case c.opts.Consistency == dbcopy.ConsistencyNone:
		return fopts, usagef("copy: --follow needs the consistent snapshot's position: drop --consistency none")
	case len(c.opts.Where) > 0 || c.opts.Sample > 0:
		return fopts, usagef("copy: --follow follows whole databases: drop --where and --sample")
	}
	for _, d := range c.databases {
		fopts.Databases = append(fopts.Databases, follow.Pair{Source: d, Target: d})
	}
	if err := follow.Preflight(ctx, src, dst, fopts); err != nil {
		if errors.Is(err, follow.ErrPrerequisites) {
			return fopts, usagef("copy --follow: %v", err)
		}
		return fopts, fmt.Errorf("copy --follow: %w", err)
	}
	// The source changes on while the copy ends: verify compares once the
	// follower applies the changes (verify beside it, or --verify-every).
	c.opts.DeferTriggers, c.opts.NoVerify = true, true
	return fopts, nil
}

// check validates the flags before anything connects.
func (c *copyCmd) check(fs *pflag.FlagSet) error {
	o := &c.opts
	if fs.NArg() != 2 {
		return usagef("copy: want SOURCE and TARGET, got %d argument(s): shakedown copy mysql://user@source/db mysql://user@target/db --allow-write", fs.NArg())
	}
	if err := o.Validate(); err != nil {
		return err
	}
	for _, w := range c.where {
		table, cond, err := dbcopy.ParseWhere(w)
		if err != nil {
			return usagef("copy: --where: %v", err)
		}
		if o.Where == nil {
			o.Where = map[string]string{}
		}
		o.Where[table] = cond
	}
	if c.sample != "" {
		f, err := dbcopy.ParseSample(c.sample)
		if err != nil {
			return usagef("copy: --sample: %v", err)
		}
		o.Sample = f
	}
	o.NoFollowFK = !c.followFK
	return nil
}

// helpSections are copy's options as its help lists them.
func (c *copyCmd) helpSections() []sbflag.Section {
	return []sbflag.Section{
		{Title: "What is copied", Options: []string{"databases", "schema", "accounts", "indexes-with-data", "where", "sample", "follow-fk", "fk-depth"}},
		{Title: "Writing and checking", Options: []string{"allow-write", "replace", "threads", "chunk-rows", "consistency", "checkpoint", "resume", "no-verify"}},
		{Title: "Output", Options: []string{"json", "progress", "help"}},
		{Title: "Following the binary log (with --follow; shakedown follow --help)", Options: []string{"follow", "until-caught-up", "follow-for", "workers",
			"batch-rows", "skip-ddl", "from-next", "server-id", "verify-every", "metrics-addr"}},
		{Title: "Passwords (shakedown help targets)", Options: []string{"password-file", "defaults-file", "defaults-extra-file", "login-path", "no-defaults"}},
	}
}
