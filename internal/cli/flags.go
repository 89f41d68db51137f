package cli

import (
	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/target"
)

// bindStorePath declares --store for the commands that read the results
// store, defaulting to the user's; note, when not empty, follows the forms
// in the help (sweep says that split runners share it).
func bindStorePath(fs *pflag.FlagSet, env *Env, p *string, note string) {
	fs.StringVar(p, "store", store.DefaultPath(env.Getenv), "results store: a SQLite file, or mysql://user@host:port/db"+note+" (password: SHAKEDOWN_STORE_PASSWORD)")
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
	all, json bool
	creds     target.Credentials
}

// bind declares them; all is --all's help, which says what it adds.
func (d *serverDiff) bind(fs *pflag.FlagSet, all string) {
	fs.BoolVar(&d.all, "all", false, all)
	fs.BoolVar(&d.json, "json", false, "print the comparison as JSON")
	d.creds.Bind(fs)
}
