package slap

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/sqlsplit"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/usage"
)

// usagef is a mistake in the options or the SQL given: nothing ran.
var usagef = usage.Errorf

// stmtKind says how a statement is run.
type stmtKind int

const (
	plain       stmtKind = iota
	createTable          // takes the engine suffix
	keyed                // a primary key value is appended, as " 'key'"
)

// stmt is one statement of a list.
type stmt struct {
	text string
	kind stmtKind
	stat int   // index of its figures
	hot  bool  // the hot-row statement (hotRow), whose affected rows are counted
	txn  uint8 // BEGIN, COMMIT or ROLLBACK, for the hot-row count (txnKind)
}

// engineOpt is one --engine entry: "name" or "name:option".
type engineOpt struct {
	name, option string
}

// Bench is a validated mysqlslap job, ready to run.
type Bench struct {
	o       *Options
	tgt     *target.Target
	ep      target.Endpoint
	levels  []*result.Result // what the last Run measured, when results are wanted
	conc    []int
	engines []engineOpt

	query, create, pre, post []stmt
	statNames                []string
	// actualQueries is the number of statements of --query, the queries
	// per client without --number-of-queries (mysqlslap's rule).
	actualQueries uint64
	preserve      bool // do not drop the schema
	intCols       int
	charCols      int
	intIndex      bool
	charIndex     bool

	policy client.Policy
	rnd    *rand.Rand
	// hot is the hot-row statement whose effect is checked (hotrow.go);
	// nil when the list has none, and with --commit, where a statement
	// counts only once its group commits.
	hot *hotRow
}

// defaultKey is the key mysqlslap uses when it cannot read the keys
// (--only-print, blackhole tables).
const defaultKey = "796c4422-1d94-102a-9d6d-00e0812d"

// maxStats caps the statements that get figures of their own; the rest
// share one line.
const maxStats = 100

// Load checks the options, reads the SQL and splits it, so that every
// mistake is reported before anything connects. getenv supplies USER (the
// default user), and MYSQL_PWD and HOME for the password (target.Credentials).
func Load(o *Options, getenv func(string) string) (*Bench, error) {
	b := &Bench{o: o, rnd: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x51a9))}
	if err := b.checkNumbers(); err != nil {
		return nil, err
	}
	if err := b.resolveTarget(getenv); err != nil {
		return nil, err
	}
	if err := b.parseEngines(); err != nil {
		return nil, err
	}
	if err := b.parseIgnore(); err != nil {
		return nil, err
	}
	if o.AutoGenerate {
		if err := b.autoGenerate(); err != nil {
			return nil, err
		}
	} else {
		var err error
		if b.create, err = b.readStatements("create", o.Create); err != nil {
			return nil, err
		}
		if b.query, err = b.readStatements("query", o.Query); err != nil {
			return nil, err
		}
		if o.Query == "" && !o.runsAnything() {
			return nil, usagef("nothing to run: give --query (SQL, or a file of it), --auto-generate-sql, or --init-command (SQL each client runs as it connects)")
		}
		b.actualQueries = uint64(len(b.query))
		for i := range b.query {
			b.query[i].stat = min(i, maxStats)
			if i < maxStats {
				b.statNames = append(b.statNames, fmt.Sprintf("#%d %s", i+1, sqlsplit.Short(b.query[i].text, 70)))
			}
		}
		if len(b.query) > maxStats {
			b.statNames = append(b.statNames, fmt.Sprintf("#%d-#%d (together)", maxStats+1, len(b.query)))
		}
		if len(b.create) > 0 && b.engines != nil {
			b.create[0].kind = createTable
		}
		if o.Commit == 0 && !o.OnlyPrint {
			b.hot = findHotRow(b.query)
		}
	}
	var err error
	if b.pre, err = b.readStatements("pre-query", o.PreQuery); err != nil {
		return nil, err
	}
	if b.post, err = b.readStatements("post-query", o.PostQuery); err != nil {
		return nil, err
	}
	// Something created is dropped again unless --no-drop.
	b.preserve = o.NoDrop || (len(b.create) == 0 && !o.AutoGenerate)
	return b, nil
}

// runsAnything says whether a test without --query still does something
// that mysqlslap would do: an --init-command on each client's connection,
// --create, the pre- and post-statements or commands. Clients then
// connect and run no statements, and the summary is printed.
func (o *Options) runsAnything() bool {
	return o.InitCommand != "" || o.Create != "" || o.PreQuery != "" || o.PostQuery != "" || o.PreSystem != "" || o.PostSystem != ""
}

func (b *Bench) checkNumbers() error {
	o := b.o
	conc := o.Concurrency
	if conc == "" {
		conc = "1"
	}
	for _, part := range strings.Split(conc, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 {
			return usagef("--concurrency: %q is not a number of clients >= 1 (give a comma list such as 16,64)", part)
		}
		b.conc = append(b.conc, n)
	}
	switch {
	case o.Iterations < 1:
		return usagef("--iterations must be >= 1")
	case o.Commit < 0:
		return usagef("--commit must be >= 0")
	case o.Detach < 0:
		return usagef("--detach must be >= 0")
	case o.SecondaryIndexes < 0:
		return usagef("--auto-generate-sql-secondary-indexes must be >= 0")
	case o.Delimiter == "":
		return usagef("--delimiter must not be empty")
	case o.CreateSchema == "" || strings.Contains(o.CreateSchema, "`"):
		return usagef("--create-schema must name a schema (got %q)", o.CreateSchema)
	case o.IO.Check() != nil:
		return usagef("%v", o.IO.Check())
	case o.Protocol != "" && !strings.EqualFold(o.Protocol, "tcp") && !strings.EqualFold(o.Protocol, "socket"):
		return usagef("--protocol must be tcp or socket (got %q)", o.Protocol)
	}
	if o.AutoGenerate {
		switch {
		case o.Create != "" || o.Query != "":
			return usagef("--auto-generate-sql cannot be used with --create or --query: it makes both")
		case o.GUIDPrimary && o.AddAutoincrement:
			return usagef("give --auto-generate-sql-guid-primary or --auto-generate-sql-add-autoincrement, not both")
		case o.NumberOfQueries > 0 && o.ExecuteNumber > 0:
			return usagef("give --auto-generate-sql-execute-number or --number-of-queries, not both")
		}
		switch o.LoadType {
		case "mixed", "update", "write", "read":
		case "key":
			if !o.AddAutoincrement && !o.GUIDPrimary {
				return usagef("--auto-generate-sql-load-type=key needs a primary key: add --auto-generate-sql-add-autoincrement or --auto-generate-sql-guid-primary")
			}
		default:
			return usagef("--auto-generate-sql-load-type must be mixed, update, write, key or read (got %q)", o.LoadType)
		}
	}
	var err error
	if b.intCols, b.intIndex, err = cols("number-int-cols", o.NumberIntCols); err != nil {
		return err
	}
	if b.charCols, b.charIndex, err = cols("number-char-cols", o.NumberCharCols); err != nil {
		return err
	}
	return nil
}

// cols reads a column count option: "N" or "N:1" (indexed); 1 when unset.
func cols(name, v string) (int, bool, error) {
	if v == "" {
		return 1, false, nil
	}
	num, opt, _ := strings.Cut(v, ":")
	n, err := strconv.Atoi(strings.TrimSpace(num))
	if err != nil || n < 0 {
		return 0, false, usagef("--%s: %q is not a number of columns (N, or N:1 to index them)", name, v)
	}
	idx := false
	if opt != "" {
		k, err := strconv.Atoi(strings.TrimSpace(opt))
		if err != nil {
			return 0, false, usagef("--%s: %q is not a number of columns (N, or N:1 to index them)", name, v)
		}
		idx = k != 0
	}
	return n, idx, nil
}

func (b *Bench) parseEngines() error {
	if b.o.Engine == "" {
		return nil
	}
	for _, part := range strings.Split(b.o.Engine, ",") {
		part = strings.TrimSpace(part)
		name, opt, _ := strings.Cut(part, ":")
		if name == "" {
			return usagef("--engine: empty engine name in %q", b.o.Engine)
		}
		b.engines = append(b.engines, engineOpt{name: name, option: opt})
	}
	return nil
}

func (b *Bench) parseIgnore() error {
	p, err := client.ParseIgnore("--ignore-errors", b.o.IgnoreErrors)
	if err != nil {
		return usagef("%v", err)
	}
	// mysqlslap's rules: a lost connection ends the test unless its code
	// is ignored, and a failed connect is tried again up to ten times.
	p.RetryConnect = true
	b.policy = p
	return nil
}

// readStatements reads what an option gives: the file at that path when
// there is one, else the SQL itself.
func (b *Bench) readStatements(option, v string) ([]stmt, error) {
	if v == "" {
		return nil, nil
	}
	src, where := v, "--"+option
	if fi, err := os.Stat(v); err == nil {
		if !fi.Mode().IsRegular() {
			return nil, usagef("--%s %s is not a regular file", option, v)
		}
		raw, err := os.ReadFile(v)
		if err != nil {
			return nil, usagef("--%s: %v", option, err)
		}
		src, where = string(raw), "--"+option+" "+v
		if strings.TrimSpace(src) == "" {
			return nil, usagef("%s: the file is empty", where)
		}
	} else if !looksLikeSQL(v) {
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, usagef("--%s %s: %v", option, v, err)
		}
		if strings.HasSuffix(v, ".sql") || strings.ContainsRune(v, '/') {
			return nil, usagef("--%s %s: no such file (a value that names no file is taken as SQL, but this looks like a path)", option, v)
		}
	}
	stmts, err := sqlsplit.Split(src, sqlsplit.Options{Delimiter: b.o.Delimiter, Strict: true})
	if err != nil {
		return nil, usagef("%s: %v", where, err)
	}
	if len(stmts) == 0 {
		return nil, usagef("%s holds no statements", where)
	}
	out := make([]stmt, len(stmts))
	for i, s := range stmts {
		out[i] = stmt{text: s.Text}
	}
	return out, nil
}

// looksLikeSQL tells SQL apart from a path that cannot be read.
func looksLikeSQL(v string) bool {
	return strings.ContainsAny(v, " \t\n;")
}

// resolveTarget works out where to connect, as the mysql clients do: -S, or
// localhost without -P or --protocol=tcp, means the socket; else TCP.
// --target gives the defaults; explicit options override its parts.
func (b *Bench) resolveTarget(getenv func(string) string) error {
	o := b.o
	var t *target.Target
	if o.Target != "" {
		var err error
		if t, err = target.Parse(o.Target); err != nil {
			return usagef("--target: %v", err)
		}
	} else {
		t = &target.Target{Hosts: []string{"localhost"}, Ports: []int{3306}, Params: map[string]string{}}
		t.User = getenv("USER")
		if t.User == "" {
			t.User = getenv("LOGNAME")
		}
		t.ConnectTimeout = o.ConnectTimeout
	}
	if o.Changed("host") {
		t.Hosts = []string{o.Host}
	}
	if o.Changed("port") {
		if o.Port < 1 || o.Port > 65535 {
			return usagef("--port must be between 1 and 65535")
		}
		t.Ports = []int{o.Port}
	}
	if o.Changed("user") {
		t.User = o.User
	}
	if o.Changed("password") {
		t.Password, t.PasswordFrom = o.Password, "--password"
	} else if o.PasswordPrompt {
		return usagef("-p without a password: give it attached (-pSECRET), as --password=SECRET, in MYSQL_PWD, or on standard input")
	}
	if err := o.Creds.Fill(t, getenv); err != nil {
		return err
	}
	if o.Changed("connect-timeout") || t.ConnectTimeout <= 0 {
		t.ConnectTimeout = o.ConnectTimeout
	}
	t.TimeoutOption = "--connect-timeout"
	if o.SSL {
		t.TLS = "skip-verify"
	}
	t.DB = o.CreateSchema
	tcp := strings.EqualFold(o.Protocol, "tcp")
	switch {
	case o.Changed("socket"):
		t.Socket = o.Socket
	case o.Target != "":
	case !tcp && (t.Hosts[0] == "localhost" || t.Hosts[0] == "") && !o.Changed("port") || strings.EqualFold(o.Protocol, "socket"):
		t.Socket = DefaultSocket
	}
	if tcp {
		t.Socket = ""
	}
	if len(t.Hosts) > 1 || len(t.Ports) > 1 {
		return usagef("slap connects to one host and port; --target names %d hosts and %d ports", len(t.Hosts), len(t.Ports))
	}
	b.tgt = t
	b.ep = t.Endpoints()[0]
	return nil
}

// limit is mysqlslap's number of queries per client at concurrency c: the
// execute number, else --number-of-queries divided among the clients, else
// the statements of --query. 0 means one pass over the statements, and a
// test without statements (an --init-command alone) has no more than that
// (mysqlslap would loop for ever).
func (b *Bench) limit(c int) uint64 {
	switch {
	case len(b.query) == 0:
		return 0
	case b.o.ExecuteNumber > 0:
		return b.o.ExecuteNumber
	case b.o.NumberOfQueries > 0:
		return b.o.NumberOfQueries / uint64(c)
	}
	return b.actualQueries
}
