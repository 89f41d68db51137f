package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/verify"
)

const analyzeUsage = `usage: shakedown analyze TARGET [--databases a,b] [--tables ...] [--local]

Runs ANALYZE TABLE on every base table of TARGET's database, to refresh
index statistics after a migration. TARGET is a URL,
mysql://user@host:port/db: without a database (mysql://user@host:port/),
every user database (all but mysql, sys, information_schema and
performance_schema); --databases names others. A database that does not
exist, or tables that match nothing, are bad usage (exit 2). Unlike verify,
this WRITES: the server stores new statistics, and unless --local the
statement is written to the binary log so that replicas run it too.
Passwords: shakedown help targets.

Options:
`

// analyzeCmd is "shakedown analyze TARGET".
type analyzeCmd struct {
	databases sbflag.Strings
	tables    sbflag.Strings
	exclude   sbflag.Strings
	local     bool
	creds     target.Credentials
}

func (c *analyzeCmd) flags() *pflag.FlagSet {
	fs := sbflag.NewFlagSet("analyze")
	fs.Var(&c.databases, "databases", "databases whose tables to analyze (default: TARGET's database, or every user database when the URL names none)")
	fs.Var(&c.tables, "tables", "only these tables: db.table or table, * and ? allowed (comma list)")
	fs.Var(&c.exclude, "exclude", "skip these tables: same forms as --tables")
	fs.BoolVar(&c.local, "local", false, "ANALYZE NO_WRITE_TO_BINLOG: replicas do not repeat it")
	c.creds.Bind(fs)
	return fs
}

func (c *analyzeCmd) run(ctx context.Context, env *Env, args []string) error {
	fs := c.flags()
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprint(env.Stdout, analyzeUsage)
			fmt.Fprint(env.Stdout, fs.FlagUsages())
			return nil
		}
		return flagError("analyze", "analyze", fs, err)
	}
	if len(fs.Args()) != 1 {
		return usagef("analyze: want one TARGET, got %d argument(s): shakedown analyze mysql://user@host/db", len(fs.Args()))
	}
	t, err := parseURL(env, &c.creds, "analyze", fs.Arg(0))
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
