package cli

import (
	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/target"
)

// withCreds gives a command the credential options of the URLs it takes
// (--password-file and the option files): commandFlags declares them after
// the command's own.
type withCreds struct {
	creds target.Credentials
}

func (w *withCreds) credentials() *target.Credentials { return &w.creds }

// commandFlags is c's flag set: its own flags, then the credential options
// when it takes URLs.
func commandFlags(env *Env, c parsedCmd) *pflag.FlagSet {
	fs := c.flags(env)
	if wc, ok := c.(interface{ credentials() *target.Credentials }); ok {
		wc.credentials().Bind(fs)
	}
	return fs
}

// storeFlagSet is the flag set of a command that reads the results store,
// with its --store, which defaults to the user's; note, when not empty,
// follows the forms in the help (sweep says that split runners share it).
func storeFlagSet(name string, env *Env, p *string, note string) *pflag.FlagSet {
	fs := sbflag.NewFlagSet(name)
	fs.StringVar(p, "store", store.DefaultPath(env.Getenv), "results store: a SQLite file, or mysql://user@host:port/db"+note+" (password: SHAKEDOWN_STORE_PASSWORD)")
	return fs
}

// tableChoice is --databases, --tables and --exclude of the commands that
// work table by table (verify, analyze).
type tableChoice struct {
	databases, tables, exclude sbflag.Strings
}

// bind declares the three flags; databases is --databases' help, which
// says what each command does with them and its default.
func (t *tableChoice) bind(fs *pflag.FlagSet, databases string) {
	fs.Var(&t.databases, "databases", databases)
	fs.Var(&t.tables, "tables", "only these tables: db.table or table, * and ? allowed (comma list)")
	fs.Var(&t.exclude, "exclude", "skip these tables: same forms as --tables")
}

// serverDiff is the options of the commands that compare servers (vars
// diff, host diff): --all, --json and the credentials of their URLs.
type serverDiff struct {
	withCreds
	all, json bool
}

// flagSet is the command name's flag set, which has these options alone;
// all is --all's help, which says what it adds.
func (d *serverDiff) flagSet(name, all string) *pflag.FlagSet {
	fs := sbflag.NewFlagSet(name)
	fs.BoolVar(&d.all, "all", false, all)
	fs.BoolVar(&d.json, "json", false, "print the comparison as JSON")
	return fs
}
