package slap

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/target"
)

// Options are mysqlslap's options, with its names, short forms and
// defaults, plus shakedown's own (--target, --ignore-errors, --client-io).
type Options struct {
	AutoGenerate      bool
	AddAutoincrement  bool
	ExecuteNumber     uint64
	GUIDPrimary       bool
	LoadType          string
	SecondaryIndexes  int
	UniqueQueryNumber uint64
	UniqueWriteNumber uint64
	WriteNumber       uint64
	Commit            int
	Concurrency       string
	Create            string
	CreateSchema      string
	CSV               string // "" off, "-" standard output, else a file appended to
	Delimiter         string
	Detach            int
	Engine            string
	Host              string
	InitCommand       string
	Iterations        int
	NoDrop            bool
	NumberCharCols    string
	NumberIntCols     string
	NumberOfQueries   uint64
	OnlyPrint         bool
	Password          string
	// PasswordPrompt is set by a bare -p or --password: the caller asks
	// for the password (or refuses) before Load.
	PasswordPrompt bool
	Port           int
	PostQuery      string
	PostSystem     string
	PreQuery       string
	PreSystem      string
	Protocol       string
	Query          string
	Silent         bool
	Socket         string
	SSL            bool
	User           string
	Verbose        int
	Version        bool
	Help           bool
	// Creds say where the password comes from when -p gives none.
	Creds target.Credentials

	// shakedown's own
	Target         string
	IgnoreErrors   string
	ConnectTimeout time.Duration
	IO             client.IOChoice // --client-io, and the tuning the caller read (client.ReadIOTuning)
	JSON           string          // result documents, one per concurrency level
	Store          string          // results store the levels are recorded in
	Name           string          // the target's name in results
	// AllowDropSchema lets --create and --auto-generate-sql drop a
	// --create-schema that holds something (schema.go).
	AllowDropSchema bool

	fs *pflag.FlagSet
}

// DefaultSocket is where Debian's MariaDB and MySQL clients look for the
// server's socket.
const DefaultSocket = "/run/mysqld/mysqld.sock"

// Flags returns the flag set bound to o, with mysqlslap's defaults. It is
// built once.
func (o *Options) Flags() *pflag.FlagSet {
	if o.fs != nil {
		return o.fs
	}
	fs := sbflag.NewFlagSet("slap")
	boolP := func(p *bool, name, short string, usage string) {
		*p = false
		fs.VarPF((*sbflag.Bool)(p), name, short, usage).NoOptDefVal = "on"
	}
	boolP(&o.AutoGenerate, "auto-generate-sql", "a", "generate SQL where not supplied by file or command line")
	boolP(&o.AddAutoincrement, "auto-generate-sql-add-autoincrement", "", "add an AUTO_INCREMENT column to auto-generated tables")
	fs.Uint64Var(&o.ExecuteNumber, "auto-generate-sql-execute-number", 0, "number of queries each client runs (auto-generated SQL)")
	boolP(&o.GUIDPrimary, "auto-generate-sql-guid-primary", "", "add GUID based primary keys to auto-generated tables")
	fs.StringVar(&o.LoadType, "auto-generate-sql-load-type", "mixed", "test load type: mixed, update, write, key or read")
	fs.IntVar(&o.SecondaryIndexes, "auto-generate-sql-secondary-indexes", 0, "number of secondary indexes to add to auto-generated tables")
	fs.Uint64Var(&o.UniqueQueryNumber, "auto-generate-sql-unique-query-number", 10, "number of unique queries to generate for automatic tests")
	fs.Uint64Var(&o.UniqueWriteNumber, "auto-generate-sql-unique-write-number", 10, "number of unique queries to generate for --auto-generate-sql-write-number")
	fs.Uint64Var(&o.WriteNumber, "auto-generate-sql-write-number", 100, "number of row inserts to perform for each thread")
	fs.IntVar(&o.Commit, "commit", 0, "commit every X statements (autocommit off)")
	fs.StringVarP(&o.Concurrency, "concurrency", "c", "", "number of clients to simulate for query to run; a comma list runs each (default 1)")
	fs.StringVar(&o.Create, "create", "", "file or string to use to create tables")
	fs.StringVar(&o.CreateSchema, "create-schema", "mysqlslap", "schema to run tests in")
	fs.StringVar(&o.CSV, "csv", "", "write CSV (engine,load type,avg,min,max,clients,queries per client) to the named file, or to standard output with no name")
	fs.Lookup("csv").NoOptDefVal = "-"
	fs.StringVarP(&o.Delimiter, "delimiter", "F", "\n", "delimiter of the statements in --query, --create, --pre-query and --post-query (any string)")
	fs.IntVar(&o.Detach, "detach", 0, "detach (close and reopen) connections after X statements")
	fs.StringVarP(&o.Engine, "engine", "e", "", "comma list of storage engines to create the tables with; the test runs for each (engine:option passes an option, e.g. memory:max_rows=2300)")
	fs.StringVarP(&o.Host, "host", "h", "", "connect to host")
	fs.StringVar(&o.InitCommand, "init-command", "", "SQL to run on every client connection when it connects")
	fs.IntVarP(&o.Iterations, "iterations", "i", 1, "number of times to run the tests")
	boolP(&o.NoDrop, "no-drop", "", "do not drop the schema after the test")
	fs.StringVarP(&o.NumberCharCols, "number-char-cols", "x", "", "number of VARCHAR columns of the auto-generated table (N, or N:1 to index them)")
	fs.StringVarP(&o.NumberIntCols, "number-int-cols", "y", "", "number of INT columns of the auto-generated table (N, or N:1 to index them)")
	fs.Uint64Var(&o.NumberOfQueries, "number-of-queries", 0, "limit each client to about this number divided by the clients of queries")
	boolP(&o.OnlyPrint, "only-print", "", "do not connect: print what would have been done")
	fs.StringVarP(&o.Password, "password", "p", "", "password to use when connecting (attached: -pSECRET); a bare -p asks for it on standard input")
	fs.BoolVar(&o.PasswordPrompt, "password-prompt", false, "a bare -p")
	fs.MarkHidden("password-prompt")
	fs.IntVarP(&o.Port, "port", "P", 3306, "port number to use for connection")
	fs.StringVar(&o.PostQuery, "post-query", "", "query, or file of queries, to run after the tests")
	fs.StringVar(&o.PostSystem, "post-system", "", "shell command to run after the tests")
	fs.StringVar(&o.PreQuery, "pre-query", "", "query, or file of queries, to run before the tests")
	fs.StringVar(&o.PreSystem, "pre-system", "", "shell command to run before the tests")
	fs.StringVar(&o.Protocol, "protocol", "", "protocol to use for connection: tcp or socket")
	fs.StringVarP(&o.Query, "query", "q", "", "query, or file of queries, to run")
	boolP(&o.Silent, "silent", "s", "run in silent mode: no output")
	fs.StringVarP(&o.Socket, "socket", "S", "", "socket file to use for connection (default "+DefaultSocket+" for localhost)")
	boolP(&o.SSL, "ssl", "", "use TLS (without verifying the server's certificate)")
	fs.StringVarP(&o.User, "user", "u", "", "user for login if not current user")
	fs.CountVarP(&o.Verbose, "verbose", "v", "more verbose output; repeat for more (-vvv prints every statement)")
	fs.BoolVarP(&o.Version, "version", "V", false, "print the version and exit")
	fs.BoolVar(&o.Help, "help", false, "show the options")
	o.Creds.Bind(fs) // --password-file, --defaults-file, --defaults-extra-file, --login-path, --no-defaults
	fs.StringVar(&o.Target, "target", "", "target URL mysql://user:password@host:port (shakedown extension; -h, -P, -u, -p, -S override its parts)")
	fs.StringVar(&o.IgnoreErrors, "ignore-errors", "", "count failing statements by error code and go on; a comma list of codes, or all (bare --ignore-errors); without it a failing statement stops the test (shakedown extension)")
	fs.Lookup("ignore-errors").NoOptDefVal = "all"
	fs.DurationVar(&o.ConnectTimeout, "connect-timeout", 10*time.Second, "give up connecting after this long (shakedown extension)")
	client.BindIO(fs, &o.IO.Mode)
	fs.Lookup("client-io").Usage += " (shakedown extension)"
	fs.StringVar(&o.JSON, "json", "", "write a result document per concurrency level to this file, as a JSON list (shakedown extension)")
	fs.StringVar(&o.Store, "store", "", "also record each concurrency level as a run in this results store, for shakedown report --runs (shakedown extension)")
	boolP(&o.AllowDropSchema, "allow-drop-schema", "", "let --create or --auto-generate-sql drop a --create-schema that already holds tables, as mysqlslap does; without it slap refuses such a schema before anything runs (shakedown extension)")
	fs.StringVar(&o.Name, "name", "", "name of the target in results (default: its address; shakedown extension)")
	o.fs = fs
	return fs
}

// Changed reports whether the option name was given on the command line.
func (o *Options) Changed(name string) bool {
	f := o.Flags().Lookup(name)
	return f != nil && f.Changed
}

// Parse reads a mysqlslap command line into o. It accepts what the MySQL
// clients accept: attached short values (-uroot -pSECRET -P3306), '_' for
// '-' in names, unique prefixes of long names, --skip-X, --disable-X and
// --enable-X for booleans, --loose-X (ignored when unknown) and -? for help.
func (o *Options) Parse(args []string) error {
	fs := o.Flags()
	args = normalizeArgs(fs, args)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		if o.PasswordPrompt {
			return fmt.Errorf("unexpected argument %q: -p takes its password attached (-pSECRET); a bare -p asks for it", fs.Arg(0))
		}
		return fmt.Errorf("unexpected argument %q: slap takes options only", fs.Arg(0))
	}
	return nil
}

func normalizeArgs(fs *pflag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args))
	isBool := func(name string) bool {
		f := fs.Lookup(name)
		return f != nil && f.NoOptDefVal == "on"
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		if a == "-?" {
			out = append(out, "--help")
			continue
		}
		if strings.HasPrefix(a, "-p") {
			// -pSECRET: the rest of the word is the password; -p alone
			// asks for it, and a word after it is not the password.
			if len(a) > 2 {
				out = append(out, "--password="+a[2:])
			} else {
				out = append(out, "--password-prompt")
			}
			continue
		}
		if !strings.HasPrefix(a, "--") {
			out = append(out, a)
			continue
		}
		name, val, hasVal := strings.Cut(a[2:], "=")
		name = strings.ReplaceAll(name, "_", "-")
		if !hasVal && resolve(fs, name) == "password" {
			out = append(out, "--password-prompt")
			continue
		}
		if rest, ok := strings.CutPrefix(name, "loose-"); ok {
			name = rest
			if fs.Lookup(name) == nil && unique(fs, name) == "" {
				// mysqlslap ignores unknown --loose- options; so do we,
				// with the value that may follow.
				if !hasVal && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
					i++
				}
				continue
			}
		}
		for _, p := range []struct {
			prefix, value string
		}{{"skip-", "off"}, {"disable-", "off"}, {"enable-", "on"}} {
			if rest, ok := strings.CutPrefix(name, p.prefix); ok && fs.Lookup(name) == nil {
				if n := resolve(fs, rest); isBool(n) && !hasVal {
					name, val, hasVal = n, p.value, true
				}
			}
		}
		name = resolve(fs, name)
		if hasVal {
			out = append(out, "--"+name+"="+val)
		} else {
			out = append(out, "--"+name)
		}
	}
	return out
}

// resolve returns the option that name names exactly or as a unique prefix,
// else name itself.
func resolve(fs *pflag.FlagSet, name string) string {
	if fs.Lookup(name) != nil {
		return name
	}
	if u := unique(fs, name); u != "" {
		return u
	}
	return name
}

func unique(fs *pflag.FlagSet, prefix string) string {
	found := ""
	n := 0
	fs.VisitAll(func(f *pflag.Flag) {
		if strings.HasPrefix(f.Name, prefix) {
			found = f.Name
			n++
		}
	})
	if n == 1 {
		return found
	}
	return ""
}

// HelpSections are slap's options as its help lists them: mysqlslap's
// first, in the groups its manual gives them, then shakedown's own.
var HelpSections = []sbflag.Section{
	{Title: "Connection", Options: []string{"host", "port", "user", "password", "socket", "protocol", "ssl", "init-command",
		"target", "password-file", "defaults-file", "defaults-extra-file", "login-path", "no-defaults", "connect-timeout", "client-io"}},
	{Title: "The test", Options: []string{"concurrency", "iterations", "number-of-queries", "query", "create", "create-schema",
		"delimiter", "commit", "detach", "engine", "pre-query", "post-query", "pre-system", "post-system", "no-drop",
		"allow-drop-schema", "ignore-errors"}},
	{Title: "Generated SQL (--auto-generate-sql)", Options: []string{"auto-generate-sql", "auto-generate-sql-add-autoincrement",
		"auto-generate-sql-execute-number", "auto-generate-sql-guid-primary", "auto-generate-sql-load-type",
		"auto-generate-sql-secondary-indexes", "auto-generate-sql-unique-query-number", "auto-generate-sql-unique-write-number",
		"auto-generate-sql-write-number", "number-char-cols", "number-int-cols"}},
	{Title: "Output and store", Options: []string{"csv", "silent", "verbose", "only-print", "json", "store", "name", "version", "help"}},
}
