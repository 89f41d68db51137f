package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/verify"
)

// analyzeCmd is "shakedown analyze TARGET".
type analyzeCmd struct {
	tableChoice
	withCreds
	local bool
}

func (c *analyzeCmd) flags(_ *Env) *pflag.FlagSet {
	fs := sbflag.NewFlagSet("analyze")
	c.tableChoice.bind(fs, "databases whose tables to analyze (default: TARGET's database, or every user database when the URL names none)")
	fs.BoolVar(&c.local, "local", false, "ANALYZE NO_WRITE_TO_BINLOG: replicas do not repeat it")
	return fs
}

func (c *analyzeCmd) exec(ctx context.Context, env *Env, fs *pflag.FlagSet) error {
	if len(fs.Args()) != 1 {
		return usagef("analyze: want one TARGET, got %d argument(s): shakedown analyze mysql://user@host/db", len(fs.Args()))
	}
	t, err := c.creds.ParseArg(env.Getenv, "analyze", fs.Arg(0))
	if err != nil {
		return err
	}
	side, err := verify.Connect(ctx, "target", t, 1)
	if err != nil {
		return err
	}
	defer side.DB.Close()
	dbs, err := t.Databases(ctx, side.DB, c.databases, target.EveryDatabase, "analyze")
	if err != nil {
		return err
	}
	n, err := verify.Analyze(ctx, side, verify.AnalyzeOptions{
		Databases: dbs,
		Tables:    c.tables,
		Exclude:   c.exclude,
		Local:     c.local,
		Out:       env.Stdout,
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return usagef("analyze: no table of %s matches --tables and --exclude: nothing analyzed", strings.Join(dbs, ", "))
	}
	_, err = fmt.Fprintf(env.Stdout, "analyzed %d tables in %s on %s\n", n, strings.Join(dbs, ", "), t.Redacted())
	return err
}
