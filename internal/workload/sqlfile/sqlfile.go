// Package sqlfile is the "sql" workload: it runs the statements of a file,
// such as SQL captured from an application, as a timed, rate-limited,
// percentile-measured load, and reports each statement's count, latency and
// errors besides the run's totals.
//
// The statement file's language (annotations, @event groups, the {{...}}
// placeholders) is described once, for users, in helpText: it is what
// "shakedown run sql --help" prints.
package sqlfile

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/fingerprint"
	"github.com/shakedown/shakedown/internal/randgen"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/sqlsplit"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/workload"
)

func init() { workload.Register(newMeta()) }

func newMeta() workload.Meta {
	meta := workload.Meta{
		Name:        "sql",
		Description: "statements from a file (--file), weighted, with generated values, reported per statement",
	}
	meta.New = func() workload.Generator { return newGenerator(meta) }
	return meta
}

type generator struct {
	meta        workload.Meta
	file        string
	delimiter   string
	mix         string
	columnRows  int
	prepareFile string
	cleanupFile string
	fs          *pflag.FlagSet

	prog    *program
	prepare []sqlsplit.Statement
	cleanup []sqlsplit.Statement
}

const fileUsage = `file of statements to run (required). Statements end with ';'; a comment line "-- @weight N"
before one weighs it (default 1); "-- @event NAME weight=N" starts a group run in order as one event.
Placeholders: {{uniform A B}}, {{zipf A B [EXP]}}, {{int A B}} (--rand-type), {{string N}},
{{column [DB.]TABLE.COLUMN}}, {{file PATH}} (a line of it); {{x = uniform 1 9}} names a value that
{{x}} reuses within the event. The language in full is above`

func newGenerator(meta workload.Meta) *generator {
	g := &generator{meta: meta}
	fs := sbflag.NewFlagSet(meta.Name)
	fs.StringVar(&g.file, "file", "", fileUsage)
	fs.StringVar(&g.delimiter, "delimiter", ";", "statement delimiter of the files")
	fs.StringVar(&g.mix, "mix", "random", "random (events picked by weight) or sequence (events in file order)")
	fs.IntVar(&g.columnRows, "column-rows", 100000, "rows read per {{column ...}} placeholder before the run")
	fs.StringVar(&g.prepareFile, "prepare-file", "", "SQL script that prepare runs (tables and data the statements need)")
	fs.StringVar(&g.cleanupFile, "cleanup-file", "", "SQL script that cleanup runs")
	g.fs = fs
	return g
}

func (g *generator) Meta() workload.Meta      { return g.meta }
func (g *generator) Flags() *pflag.FlagSet    { return g.fs }
func (g *generator) StatementNames() []string { return g.names() }

func (g *generator) names() []string {
	if g.prog == nil {
		return nil
	}
	names := make([]string, len(g.prog.stmts))
	for i, s := range g.prog.stmts {
		names[i] = s.name
	}
	return names
}

// PreparedStatements is every statement of the file, each prepared once
// per thread (a statement the server cannot prepare runs as text).
func (g *generator) PreparedStatements() int {
	if g.prog == nil {
		return 0
	}
	return len(g.prog.stmts)
}

// ReadOnly says whether no statement of the file can change data, as the
// parser reads them (a SELECT without a locking clause or INTO, SHOW, ...);
// the BEGIN and COMMIT or ROLLBACK around a group do not count.
func (g *generator) ReadOnly() bool {
	if g.prog == nil || len(g.prog.stmts) == 0 {
		return false
	}
	an := fingerprint.NewAnalyzer()
	for _, st := range g.prog.stmts {
		info := an.Info(st.sql)
		switch info.Verb {
		case "BEGIN", "COMMIT", "ROLLBACK":
			continue
		}
		if !info.ReadOnly {
			return false
		}
	}
	return true
}

// EventKind says what one event is as the server counts it: a statement
// when every event is one statement (a captured workload's are), a
// transaction when every event is a group from BEGIN to COMMIT, and
// unknown when the file mixes them or groups statements without a
// transaction.
func (g *generator) EventKind() workload.EventKind {
	if g.prog == nil || len(g.prog.events) == 0 {
		return ""
	}
	kinds := map[workload.EventKind]bool{}
	for _, ev := range g.prog.events {
		if len(ev.stmts) == 0 {
			return ""
		}
		last := strings.Fields(strings.ToUpper(ev.stmts[len(ev.stmts)-1].sql))
		switch {
		case ev.trx && len(last) > 0 && last[0] == "COMMIT":
			kinds[workload.EventTransaction] = true
		case len(ev.stmts) == 1 && !ev.trx:
			kinds[workload.EventStatement] = true
		default:
			return ""
		}
	}
	if len(kinds) != 1 {
		return ""
	}
	for k := range kinds {
		return k
	}
	return ""
}

// Validate reads and checks the files, so that a mistake in one is reported
// before anything connects.
func (g *generator) Validate() error {
	switch {
	case g.file == "":
		return fmt.Errorf("--file is required: name a file of statements (see --help for its syntax)")
	case g.delimiter == "":
		return fmt.Errorf("--delimiter must not be empty")
	case g.mix != "random" && g.mix != "sequence":
		return fmt.Errorf("--mix must be random or sequence (got %q)", g.mix)
	case g.columnRows < 1:
		return fmt.Errorf("--column-rows must be >= 1")
	}
	prog, err := parseFile(g.file, g.delimiter)
	if err != nil {
		return err
	}
	g.prog = prog
	if g.prepare, err = readScript("--prepare-file", g.prepareFile, g.delimiter); err != nil {
		return err
	}
	if g.cleanup, err = readScript("--cleanup-file", g.cleanupFile, g.delimiter); err != nil {
		return err
	}
	return nil
}

func readScript(flag, path, delimiter string) ([]sqlsplit.Statement, error) {
	if path == "" {
		return nil, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	stmts, err := sqlsplit.Split(string(raw), sqlsplit.Options{Delimiter: delimiter, ClientCommands: true, Strict: true})
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, path, err)
	}
	if len(stmts) == 0 {
		return nil, fmt.Errorf("%s %s: holds no statements", flag, path)
	}
	return stmts, nil
}

// Prepare runs --prepare-file, if any.
func (g *generator) Prepare(ctx context.Context, env *workload.PrepareEnv) error {
	return runScript(ctx, env, "--prepare-file", g.prepareFile, g.prepare)
}

// Tables says that without --prepare-file and --cleanup-file prepare and
// cleanup make and drop nothing; with them, what they touch is the
// scripts' to say, not known here.
func (g *generator) Tables(int) ([]string, bool) {
	return nil, g.prepareFile == "" && g.cleanupFile == ""
}

// Cleanup runs --cleanup-file, if any.
func (g *generator) Cleanup(ctx context.Context, env *workload.PrepareEnv) error {
	return runScript(ctx, env, "--cleanup-file", g.cleanupFile, g.cleanup)
}

func runScript(ctx context.Context, env *workload.PrepareEnv, flag, path string, stmts []sqlsplit.Statement) error {
	if len(stmts) == 0 {
		fmt.Fprintf(env.Out, "sql: no %s: nothing to do\n", flag)
		return nil
	}
	conn, err := env.DB.Conn(ctx) // one session, so that SET and USE carry over
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, st := range stmts {
		if _, err := conn.ExecContext(ctx, st.Text); err != nil {
			return fmt.Errorf("%s %s: statement %d (line %d) %q: %w", flag, path, st.N, st.Line, sqlsplit.Short(st.Text, 60), err)
		}
	}
	fmt.Fprintf(env.Out, "sql: ran %d statements of %s\n", len(stmts), path)
	return nil
}

// PrepareRun reads the values of the {{column ...}} placeholders.
func (g *generator) PrepareRun(ctx context.Context, env *workload.PrepareEnv) error {
	if g.prog == nil {
		return fmt.Errorf("sql: options not validated")
	}
	specs := make([]string, 0, len(g.prog.sources))
	for spec, src := range g.prog.sources {
		if src.column != "" {
			specs = append(specs, spec)
		}
	}
	sort.Strings(specs)
	for _, spec := range specs {
		src := g.prog.sources[spec]
		if err := src.load(ctx, env.DB, g.columnRows); err != nil {
			return fmt.Errorf("{{%s}}: %w", spec, err)
		}
	}
	return nil
}

func (s *source) load(ctx context.Context, db *sql.DB, limit int) error {
	q := fmt.Sprintf("SELECT %s FROM %s WHERE %s IS NOT NULL LIMIT %d", s.column, s.table, s.column, limit)
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	var vals []string
	for rows.Next() {
		var v sql.RawBytes
		if err := rows.Scan(&v); err != nil {
			return err
		}
		vals = append(vals, string(v))
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(vals) == 0 {
		return fmt.Errorf("the column has no values")
	}
	s.setValues(vals)
	return nil
}

// NewWorker prepares every statement on the thread's connection.
func (g *generator) NewWorker(ctx context.Context, env *workload.WorkerEnv) (workload.Worker, error) {
	p := g.prog
	if p == nil {
		return nil, fmt.Errorf("sql: options not validated")
	}
	for spec, src := range p.sources {
		if !src.loaded {
			return nil, fmt.Errorf("{{%s}}: values not read before the run", spec)
		}
	}
	w := &worker{p: p, conn: env.Conn, rnd: env.Rand, rec: env.Stmts, seq: g.mix == "sequence", seed: env.Rand.Uint64(), id: env.ID}
	w.stmts = make([]workload.Stmt, len(p.stmts))
	maxArgs, maxVars := 0, 0
	for i, s := range p.stmts {
		st, err := env.Conn.Prepare(ctx, s.sql)
		if err != nil {
			if target.Code(err) == target.ERUnsupportedPS { // runs as text
				continue
			}
			w.Finish(ctx)
			return nil, fmt.Errorf("prepare %q: %w", sqlsplit.Short(s.sql, 60), err)
		}
		w.stmts[i] = st
		maxArgs = max(maxArgs, len(s.args))
	}
	for _, ev := range p.events {
		maxVars = max(maxVars, ev.nvars)
	}
	w.args = make([]any, maxArgs)
	w.vars = make([]any, maxVars)
	return w, nil
}

type worker struct {
	p     *program
	conn  workload.Conn
	rnd   *randgen.Rand
	rec   *workload.StmtRecorder
	stmts []workload.Stmt // nil: runs as text
	args  []any
	vars  []any
	zipf  map[float64]*randgen.Rand
	seq   bool
	next  int
	seed  uint64
	id    int
}

// Finish closes the prepared statements.
func (w *worker) Finish(context.Context) error {
	for i, s := range w.stmts {
		if s != nil {
			s.Close()
			w.stmts[i] = nil
		}
	}
	return nil
}

func (w *worker) pick() *event {
	evs := w.p.events
	if w.seq {
		ev := evs[w.next]
		w.next = (w.next + 1) % len(evs)
		return ev
	}
	if len(evs) == 1 {
		return evs[0]
	}
	x := w.rnd.Uniform(1, w.p.cum[len(w.p.cum)-1])
	i := sort.Search(len(w.p.cum), func(i int) bool { return w.p.cum[i] >= x })
	return evs[i]
}

// Event runs one event: a statement, or a group of them in order.
func (w *worker) Event(ctx context.Context) error {
	ev := w.pick()
	for k, s := range ev.stmts {
		args := w.fill(s)
		start := time.Now()
		var err error
		switch st := w.stmts[s.idx]; {
		case st != nil && s.rows:
			err = st.Query(ctx, args...)
		case st != nil:
			_, err = st.Exec(ctx, args...)
		case s.rows:
			err = w.conn.Query(ctx, s.sql, args...)
		default:
			_, err = w.conn.Exec(ctx, s.sql, args...)
		}
		if err != nil {
			if ev.trx && k > 0 && ctx.Err() == nil && !w.conn.Broken() && !target.IsConnLost(err) {
				w.conn.Exec(ctx, "ROLLBACK") // best effort; the statement's error is what counts
			}
			// The runner counts it, for the statement and in the totals.
			return workload.InStatement(s.idx, err)
		}
		w.rec.Record(s.idx, time.Since(start))
	}
	return nil
}

// fill draws the values of s's placeholders.
func (w *worker) fill(s *stmt) []any {
	args := w.args[:len(s.args)]
	for i := range s.args {
		a := &s.args[i]
		var v any
		switch a.kind {
		case argRef:
			v = w.vars[a.slot]
		case argUniform:
			v = w.rnd.Uniform(a.a, a.b)
		case argInt:
			v = w.rnd.Default(a.a, a.b)
		case argZipf:
			v = w.zipfRand(a.exp).Zipfian(a.a, a.b)
		case argString:
			b := make([]byte, a.n)
			for j := range b {
				b[j] = 'a' + byte(w.rnd.Uniform(0, 25))
			}
			v = string(b)
		case argSource:
			k := w.rnd.Uniform(0, int64(a.src.n()-1))
			if a.src.ints != nil {
				v = a.src.ints[k]
			} else {
				v = a.src.strs[k]
			}
		}
		if a.define {
			w.vars[a.slot] = v
		}
		args[i] = v
	}
	return args
}

// zipfRand returns the generator for zipfian values with exponent e (0: the
// thread's own, with --rand-zipfian-exp).
func (w *worker) zipfRand(e float64) *randgen.Rand {
	if e == 0 {
		return w.rnd
	}
	if r := w.zipf[e]; r != nil {
		return r
	}
	if w.zipf == nil {
		w.zipf = map[float64]*randgen.Rand{}
	}
	cfg := randgen.Defaults()
	cfg.Type = randgen.Zipfian
	cfg.ZipfianExp = e
	cfg.Seed = int64(w.seed>>1) | 1
	r := cfg.New(w.id)
	w.zipf[e] = r
	return r
}
