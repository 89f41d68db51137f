package cli

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/check"
	"github.com/shakedown/shakedown/internal/readiness"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/verify"
)

// checkCmd is "shakedown check SOURCE TARGET".
type checkCmd struct {
	withCreds
	databases    sbflag.Strings
	skipAccounts sbflag.Strings
	opts         check.Options
	out          findings
}

func (c *checkCmd) flags(env *Env) *pflag.FlagSet {
	fs := sbflag.NewFlagSet("check")
	o := &c.opts
	fs.Var(&c.databases, "databases", "databases to check, the same names on both sides (default: every database of SOURCE but the system ones)")
	c.out.bindFiles(fs, "findings")
	c.out.bindStore(fs, env, "save the findings for shakedown readiness")
	fs.DurationVar(&o.CopyTime, "copy-time", 24*time.Hour, "how long the initial copy is expected to take: SOURCE must keep its binary logs longer")
	fs.StringVar(&o.MigrationUser, "migration-user", "", "the SOURCE account the migration tool uses, 'user'@'host' (default: the account in SOURCE's URL)")
	fs.Var(&c.skipAccounts, "skip-accounts", "accounts not compared: user names or 'user'@'host' (comma list; replaces the default, '' compares all)")
	fs.Lookup("skip-accounts").DefValue = strings.Join(check.DefaultSkipAccounts, ",")
	fs.Int64Var(&o.MaxScanRows, "max-scan-rows", 1000000, "look for zero dates in the data of tables up to this many (estimated) rows; larger ones are listed as not checked (0: no limit)")
	fs.DurationVar(&o.QueryTimeout, "query-timeout", 30*time.Second, "give up a query after this long and list what it would have checked as not checked")
	return fs
}

func (c *checkCmd) exec(ctx context.Context, env *Env, fs *pflag.FlagSet) error {
	if !fs.Changed("skip-accounts") {
		c.skipAccounts = append(sbflag.Strings{}, check.DefaultSkipAccounts...)
	}
	src, dst, err := sides(env, &c.creds, "check", fs.Args(), c.opts.Validate)
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
	databases, err := check.Databases(ctx, sSide, c.databases)
	if err != nil {
		return err
	}
	dSide, err := verify.ConnectFreshStats(ctx, "target", dst, 2)
	if err != nil {
		return err
	}
	defer dSide.DB.Close()

	opts := c.opts
	opts.Databases, opts.SkipAccounts = databases, c.skipAccounts
	rep, err := check.Run(ctx, sSide, dSide, opts)
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

// sides reads the SOURCE and TARGET arguments of a two-sided command (verb)
// with their passwords: their count first, then the flags' values
// (validate), then the URLs.
func sides(env *Env, creds *target.Credentials, verb string, args []string, validate func() error) (src, dst *target.Target, err error) {
	if len(args) != 2 {
		return nil, nil, usagef("%s: want SOURCE and TARGET, got %d argument(s): shakedown %s mysql://user@source/db mysql://user@target/db", verb, len(args), verb)
	}
	if err := validate(); err != nil {
		return nil, nil, err
	}
	if src, err = creds.ParseArg(env.Getenv, verb+": SOURCE", args[0]); err != nil {
		return nil, nil, err
	}
	dst, err = creds.ParseArg(env.Getenv, verb+": TARGET", args[1])
	return src, dst, err
}
