package cli

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/check"
	"github.com/shakedown/shakedown/internal/helptext"
	"github.com/shakedown/shakedown/internal/readiness"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/verify"
)

// checkCmd is "shakedown check SOURCE TARGET".
type checkCmd struct {
	databases     sbflag.Strings
	out           findings
	copyTime      time.Duration
	migrationUser string
	skipAccounts  sbflag.Strings
	maxScanRows   int64
	queryTimeout  time.Duration
	creds         target.Credentials
}

func (c *checkCmd) flags(env *Env) *pflag.FlagSet {
	fs := sbflag.NewFlagSet("check")
	fs.Var(&c.databases, "databases", "databases to check, the same names on both sides (default: every database of SOURCE but the system ones)")
	c.out.bindFiles(fs, "findings")
	c.out.bindStore(fs, env, "save the findings for shakedown readiness")
	fs.DurationVar(&c.copyTime, "copy-time", 24*time.Hour, "how long the initial copy is expected to take: SOURCE must keep its binary logs longer")
	fs.StringVar(&c.migrationUser, "migration-user", "", "the SOURCE account the migration tool uses, 'user'@'host' (default: the account in SOURCE's URL)")
	fs.Var(&c.skipAccounts, "skip-accounts", "accounts not compared: user names or 'user'@'host' (comma list; replaces the default, '' compares all)")
	fs.Lookup("skip-accounts").DefValue = strings.Join(check.DefaultSkipAccounts, ",")
	fs.Int64Var(&c.maxScanRows, "max-scan-rows", 1000000, "look for zero dates in the data of tables up to this many (estimated) rows; larger ones are listed as not checked (0: no limit)")
	fs.DurationVar(&c.queryTimeout, "query-timeout", 30*time.Second, "give up a query after this long and list what it would have checked as not checked")
	c.creds.Bind(fs)
	return fs
}

func (c *checkCmd) run(ctx context.Context, env *Env, args []string) error {
	fs := c.flags(env)
	if help, err := parseFlags(env, fs, args, "check", helptext.Check); help || err != nil {
		return err
	}
	if !fs.Changed("skip-accounts") {
		c.skipAccounts = append(sbflag.Strings{}, check.DefaultSkipAccounts...)
	}
	rest := fs.Args()
	if len(rest) != 2 {
		return usagef("check: want SOURCE and TARGET, got %d argument(s): shakedown check mysql://user@source/db mysql://user@target/db", len(rest))
	}
	if err := c.validate(); err != nil {
		return err
	}
	src, err := c.creds.ParseArg(env.Getenv, "check: SOURCE", rest[0])
	if err != nil {
		return err
	}
	dst, err := c.creds.ParseArg(env.Getenv, "check: TARGET", rest[1])
	if err != nil {
		return err
	}
	// Where the results go is checked before anything is read.
	if err := c.out.check(ctx, env); err != nil {
		return err
	}
	sSide, err := verify.ConnectFreshStats(ctx, "source", src, 2)
	if err != nil {
		return err
	}
	defer sSide.DB.Close()
	// A URL without a database means every user database of SOURCE; one
	// that is named, or --databases, must exist there.
	databases, err := src.Databases(ctx, sSide.DB, c.databases, target.EveryDatabase, "check: SOURCE")
	if err != nil {
		return err
	}
	if len(c.databases) == 0 && !src.NamesDB() {
		databases = nil // check's own rule: every user database of SOURCE
	}
	dSide, err := verify.ConnectFreshStats(ctx, "target", dst, 2)
	if err != nil {
		return err
	}
	defer dSide.DB.Close()

	rep, err := check.Run(ctx, sSide, dSide, check.Options{
		Databases:     databases,
		CopyTime:      c.copyTime,
		MigrationUser: c.migrationUser,
		SkipAccounts:  c.skipAccounts,
		MaxScanRows:   c.maxScanRows,
		QueryTimeout:  c.queryTimeout,
	})
	if err != nil {
		return err
	}
	if err := check.WriteText(env.Stdout, rep); err != nil {
		return err
	}
	err = c.out.keep(ctx, env, func(w io.Writer) error { return check.WriteJSON(w, rep) },
		func(w io.Writer) error { return check.WriteHTML(w, rep) },
		func() ([]*store.Evidence, error) { return one(readiness.CheckEvidence(rep, Version)) })
	if err != nil {
		return err
	}
	if rep.Errors > 0 {
		return ErrDifferences
	}
	return nil
}

// sideArg reads the SOURCE or TARGET argument of a two-sided command.
func sideArg(verb, what, raw string) (*target.Target, error) {
	if !strings.HasPrefix(raw, "mysql://") {
		return nil, usagef("%s: %s %q is not a target URL: use mysql://user:password@host:port/db", verb, what, target.RedactArg(raw))
	}
	t, err := target.Parse(raw)
	if err != nil {
		return nil, usagef("%s: %s: %v", verb, what, err)
	}
	return t, nil
}

// validate checks the flags' values.
func (c *checkCmd) validate() error {
	switch {
	case c.copyTime <= 0:
		return usagef("check: --copy-time must be > 0, e.g. 6h")
	case c.maxScanRows < 0:
		return usagef("check: --max-scan-rows must be >= 0")
	case c.queryTimeout <= 0:
		return usagef("check: --query-timeout must be > 0, e.g. 30s")
	case c.migrationUser != "" && !strings.Contains(c.migrationUser, "@"):
		return usagef("check: --migration-user must be 'user'@'host', e.g. 'dm'@'%%'")
	}
	return nil
}
