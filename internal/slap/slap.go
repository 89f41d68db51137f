// Package slap is shakedown's mysqlslap: the same options, the same
// statements sent in the same order, the same summary lines, and what
// mysqlslap does not say (queries per second, latency percentiles overall
// and per statement, connect time, errors by code).
//
// For each --engine, each --concurrency value and each of --iterations, it
// drops and creates --create-schema (only with --create or
// --auto-generate-sql), runs --create, --pre-query, the load and
// --post-query. In the load, N clients start together; each connects inside
// the timed window and runs the statement list in order over the text
// protocol, repeating it up to its number of queries (--number-of-queries
// divided among the clients, else one pass), with --commit and --detach as
// mysqlslap has them. The time of an iteration is from the start of the
// clients to the end of the last one, connecting included, as in mysqlslap.
//
// Where shakedown differs on purpose: statements are split by a splitter
// that knows quotes and comments and takes a delimiter of several
// characters (mysqlslap splits at the delimiter's first character anywhere);
// a failing statement stops the test with a clear message unless
// --ignore-errors (mysqlslap exits at once with status 0), but for a
// cluster node out of its primary component (client.Policy), which is
// counted and reconnected from; --no-drop with
// several iterations re-creates the schema it made (mysqlslap fails); a
// --create-schema that holds tables is dropped only with
// --allow-drop-schema, an empty one is left as it was found, a missing one
// is created for a test without --create (mysqlslap's clients fail to
// connect), and a test that stops early leaves the schema as a finished
// one does (see schema.go); a test of an --init-command alone repeats
// nothing (mysqlslap loops for ever with --number-of-queries).
package slap

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/clock"
	"github.com/shakedown/shakedown/internal/histogram"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/workload"
)

// ErrInterrupted means the context ended the test; what ran is reported.
var ErrInterrupted = errors.New("interrupted")

// ErrLostUpdates means the hot-row check found that the server did not
// keep the updates it acknowledged: the test failed, whatever its speed.
var ErrLostUpdates = errors.New("hot-row check failed")

// Env is where the test writes.
type Env struct {
	Out io.Writer // the summary, --only-print, -v
	Err io.Writer // warnings
	// Progress, when set, gets a status line with the time left (not
	// with --silent or --only-print); Live says it is a terminal, where
	// the line is rewritten in place.
	Progress io.Writer
	Live     bool
}

// session is one run of a Bench.
type session struct {
	b      *Bench
	srv    target.Server // for result documents
	env    Env
	outMu  sync.Mutex
	main   *sql.Conn
	mainDB *sql.DB
	dialer *client.Dialer // the clients' connections
	plan   client.IOPlan  // how the clients wait for replies (IOChoice.ForRun); without loops, a goroutine each
	csv    io.Writer
	made   bool     // this session created the schema at least once
	prog   *tracker // nil without a status line

	// What planSchema decided about the schema it found (schema.go).
	found       bool   // it existed, and slap may drop it: it was empty, or --allow-drop-schema
	createSQL   string // makes the schema: "" for CREATE SCHEMA, else how the empty one found was made
	restore     bool   // at the end, make the empty schema found again
	missing     bool   // a test without --create found no schema (connectMain)
	madeMissing bool   // and made it: dropped at the end unless --no-drop
}

// Run carries out the test.
func (b *Bench) Run(ctx context.Context, env Env) error {
	s := &session{b: b, env: env}
	b.levels = nil
	o := b.o
	if o.CSV != "" {
		if o.CSV == "-" {
			s.csv = env.Out
		} else {
			f, err := os.OpenFile(o.CSV, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
			if err != nil {
				return fmt.Errorf("open csv file: %w", err)
			}
			defer f.Close()
			s.csv = f
		}
	}
	most := 0
	for _, c := range b.conc {
		most = max(most, c)
	}
	// The clients wait for replies as a run's threads do (ForRun): held
	// loops spend much less CPU than loops that hand their processor back
	// on the hot-row command, whose row-lock waits are long enough for
	// the runtime to take a waiting loop's processor (docs/PERFORMANCE.md,
	// "slap against mysqlslap"). Its queries are taken to write, as
	// mysqlslap's usually do.
	s.plan = o.IO.ForRun(most, false, b.tgt)
	// Clients connect as mysqlslap's do: on the schema, with
	// multi-statements, over the text protocol.
	s.dialer = client.NewDialer(b.tgt, client.Options{
		DB: o.CreateSchema, Plan: s.plan, Init: o.InitCommand,
		Configure: multiStatements, Explain: s.explain,
	})
	if !o.OnlyPrint {
		if err := s.connectMain(ctx); err != nil {
			return err
		}
		defer s.mainDB.Close()
		defer s.main.Close()
		if b.wantResults() {
			s.srv = s.server(ctx)
		}
		if err := s.planSchema(ctx); err != nil {
			return err
		}
	}

	if env.Progress != nil && !o.Silent && !o.OnlyPrint {
		s.prog = b.newTracker(env.Progress, env.Live, clock.Real{})
		pctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { s.prog.run(pctx); close(done) }()
		defer func() { stop(); <-done }()
	}
	engines := b.engines
	if engines == nil {
		engines = []engineOpt{{}}
	}
	for _, eng := range engines {
		s.verbose(2, "Starting Concurrency Test\n")
		for _, c := range b.conc {
			if err := s.level(ctx, eng, c); err != nil {
				return s.stopped(ctx, err)
			}
		}
		if !b.preserve {
			if err := s.mainExec(ctx, dropSchemaSQL(o.CreateSchema)); err != nil {
				return fmt.Errorf("drop schema %s: %w", o.CreateSchema, err)
			}
		}
	}
	return s.leaveSchema(ctx)
}

// leaveSchema ends the test with the schema as planSchema decided: the
// empty schema found is made again, a schema made for a test without
// --create is dropped unless --no-drop.
func (s *session) leaveSchema(ctx context.Context) error {
	o := s.b.o
	switch {
	case s.restore:
		if err := s.mainExec(ctx, s.createSQL); err != nil {
			return fmt.Errorf("create schema %s again, empty as it was found: %w", o.CreateSchema, err)
		}
	case s.madeMissing && !o.NoDrop:
		if err := s.mainExec(ctx, dropSchemaSQL(o.CreateSchema)); err != nil {
			return fmt.Errorf("drop schema %s, which slap made: %w", o.CreateSchema, err)
		}
	}
	return nil
}

// leaveTimeout bounds putting the schema right after a test that stopped.
const leaveTimeout = 30 * time.Second

// stopped leaves the schema of a test that stopped early (a failure, an
// interrupt) as a finished test leaves it, so that the next test finds it
// as this one did: a schema left holding the test's tables would be one
// that the next test refuses to drop. It returns err, with what went wrong
// in putting the schema right.
func (s *session) stopped(ctx context.Context, err error) error {
	o := s.b.o
	if o.OnlyPrint || s.b.preserve && !(s.madeMissing && !o.NoDrop) {
		return err // nothing a finished test would drop or make
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaveTimeout)
	defer cancel()
	// An interrupt may have cut the main connection in the middle of a
	// statement; then a new one puts the schema right.
	if s.main.PingContext(cctx) != nil {
		s.main.Close() // frees the pool's one connection
		conn, cerr := s.mainDB.Conn(cctx)
		if cerr != nil {
			return errors.Join(err, fmt.Errorf("put schema %s right: %w", o.CreateSchema, cerr))
		}
		defer conn.Close()
		s.main = conn
	}
	if !s.b.preserve {
		if derr := s.mainExec(cctx, dropSchemaSQL(o.CreateSchema)); derr != nil {
			return errors.Join(err, fmt.Errorf("drop schema %s: %w", o.CreateSchema, derr))
		}
	}
	if lerr := s.leaveSchema(cctx); lerr != nil {
		return errors.Join(err, lerr)
	}
	return err
}

func dropSchemaSQL(schema string) string { return "DROP SCHEMA IF EXISTS `" + schema + "`" }

// verbose prints at -v level n and above.
func (s *session) verbose(n int, format string, args ...any) {
	if s.b.o.Verbose >= n {
		s.outMu.Lock()
		fmt.Fprintf(s.env.Out, format, args...)
		s.outMu.Unlock()
	}
}

// connectMain opens the connection that creates, pre-queries and
// post-queries. With --create (or --auto-generate-sql) it has no default
// database, as mysqlslap's. Without, it connects on the schema, which
// tells whether the schema exists without a statement that mysqlslap does
// not send; when it does not, it connects without one and says so in
// missing, and planSchema creates the schema.
func (s *session) connectMain(ctx context.Context) error {
	schema := ""
	if len(s.b.create) == 0 {
		schema = s.b.o.CreateSchema
	}
	err := s.openMain(ctx, schema)
	if schema != "" && target.Code(err) == target.ERBadDB {
		s.missing = true
		err = s.openMain(ctx, "")
	}
	return err
}

// openMain opens the main connection with db as its default database.
func (s *session) openMain(ctx context.Context, db string) error {
	pool, err := s.b.tgt.OpenConfig(s.config(db), 1)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", s.b.ep, err)
	}
	pool.SetMaxOpenConns(1)
	cctx, cancel := context.WithTimeout(ctx, s.b.tgt.ConnectTimeout+time.Second)
	defer cancel()
	conn, err := pool.Conn(cctx)
	if err != nil {
		pool.Close()
		return s.explain(s.b.ep, err)
	}
	s.mainDB, s.main = pool, conn
	return nil
}

// config is the driver configuration of a connection with db as its
// default database, as mysqlslap connects.
func (s *session) config(db string) *mysql.Config {
	cfg := s.b.tgt.Config(s.b.ep, db)
	multiStatements(cfg)
	return cfg
}

// multiStatements is how mysqlslap's connections talk: several statements
// in one query, sent as text.
func multiStatements(cfg *mysql.Config) {
	cfg.MultiStatements = true
	cfg.InterpolateParams = false
}

// explain turns a connection failure into one line naming the options to
// change; it wraps err. It never shows the password.
func (s *session) explain(ep target.Endpoint, err error) error {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case target.ERAccessDenied:
			return target.Explained(fmt.Sprintf("connect to %s: access denied for user %q: check -u and -p (or --target)", ep, s.b.tgt.User), err)
		case target.ERBadDB:
			return target.Explained(fmt.Sprintf("connect to %s: database %q does not exist: slap found or made it at the start, so something dropped it during the test", ep, s.b.o.CreateSchema), err)
		case target.ERDBAccessDenied:
			return target.Explained(fmt.Sprintf("connect to %s: user %q may not use database %q: grant it or name another with --create-schema", ep, s.b.tgt.User, s.b.o.CreateSchema), err)
		}
	}
	return s.b.tgt.Explain(ep, err)
}

// mainExec runs a statement on the main connection and discards its rows;
// with --only-print it prints it instead.
func (s *session) mainExec(ctx context.Context, q string) error {
	if s.b.o.OnlyPrint {
		fmt.Fprintf(s.env.Out, "%s;\n", q)
		return nil
	}
	s.verbose(3, "%s;\n", q)
	rows, err := s.main.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return err
	}
	return rows.Close()
}

// system runs a --pre-system or --post-system command, as system(3) would.
func (s *session) system(ctx context.Context, option, command string) {
	if command == "" || s.b.o.OnlyPrint {
		return
	}
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Stdout, cmd.Stderr = s.env.Out, s.env.Err
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(s.env.Err, "Warning: Execution of %s option returned: %v.\n", option, err)
	}
}

// createSchema makes the schema and runs the create statements on the
// main connection, as mysqlslap's create_schema.
func (s *session) createSchema(ctx context.Context, eng engineOpt) error {
	b, o := s.b, s.b.o
	schema := o.CreateSchema
	if o.NoDrop && (s.made || s.found) {
		// mysqlslap fails here (the schema exists); remake it, as it
		// may be dropped (planSchema).
		if err := s.mainExec(ctx, dropSchemaSQL(schema)); err != nil {
			return fmt.Errorf("drop schema %s: %w", schema, err)
		}
	}
	s.verbose(2, "Loading Pre-data\n")
	create := s.createSQL
	if create == "" {
		create = "CREATE SCHEMA " + quoteSchema(schema)
	}
	if err := s.mainExec(ctx, create); err != nil {
		if target.Code(err) == target.ERDBCreateExists {
			return fmt.Errorf("create schema %s: it exists already, made since slap looked at it: drop it, or name another with --create-schema", schema)
		}
		return fmt.Errorf("create schema %s: %w", schema, err)
	}
	s.made = true
	if o.OnlyPrint {
		fmt.Fprintf(s.env.Out, "use %s;\n", schema)
	} else if err := s.mainExec(ctx, "USE `"+schema+"`"); err != nil {
		return fmt.Errorf("use schema %s: %w", schema, err)
	}
	// With --auto-generate-sql, --auto-generate-sql-write-number statements
	// run, the CREATE TABLE counted, the INSERTs repeated as needed.
	run := func(st stmt) error {
		q := st.text
		if st.kind == createTable && eng.name != "" {
			q += " Engine = " + eng.name
			if eng.option != "" {
				q += " " + eng.option
			}
		}
		if err := s.mainExec(ctx, q); err != nil {
			return fmt.Errorf("--create: statement %q: %w", shortText(q), err)
		}
		return nil
	}
	if !o.AutoGenerate {
		for _, st := range b.create {
			if err := run(st); err != nil {
				return err
			}
		}
		return nil
	}
	for count, i := uint64(0), 0; count < o.WriteNumber; count++ {
		if err := run(b.create[i]); err != nil {
			return err
		}
		if i++; i == len(b.create) {
			if i == 1 {
				break // no INSERTs to repeat (mysqlslap loops for ever here)
			}
			i = 1
		}
	}
	return nil
}

// keys reads the primary keys of t1 for keyed statements, as mysqlslap's
// generate_primary_key_list.
func (s *session) keys(ctx context.Context, eng engineOpt) ([]string, error) {
	if s.b.o.OnlyPrint || strings.Contains(eng.name, "blackhole") {
		return []string{defaultKey}, nil
	}
	s.verbose(3, "SELECT id from t1;\n")
	rows, err := s.main.QueryContext(ctx, "SELECT id from t1")
	if err != nil {
		return nil, fmt.Errorf("read the primary keys of t1: %w", err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k sql.RawBytes
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		keys = append(keys, string(k))
	}
	return keys, rows.Err()
}

// level runs every iteration at concurrency c and prints the summary.
func (s *session) level(ctx context.Context, eng engineOpt, c int) error {
	b, o := s.b, s.b.o
	limit := b.limit(c)
	lv := &levelStats{clients: c, limit: limit, engine: eng.name, stats: workload.NewStmtStats(b.statNames), connLat: histogram.New(), errors: map[uint16]int64{}}
	started := time.Now()
	var runErr error
	for it := 0; it < o.Iterations; it++ {
		s.prog.at("concurrency %d, iteration %d of %d", c, it+1, o.Iterations)
		if !b.preserve {
			if err := s.mainExec(ctx, dropSchemaSQL(o.CreateSchema)); err != nil {
				return fmt.Errorf("drop schema %s: %w", o.CreateSchema, err)
			}
		}
		if len(b.create) > 0 {
			if err := s.createSchema(ctx, eng); err != nil {
				return err
			}
		}
		var keys []string
		s.verbose(2, "Generating primary key list\n")
		if o.AutoGenerate && b.hasKey() {
			var err error
			if keys, err = s.keys(ctx, eng); err != nil {
				return err
			}
		}
		if o.Commit > 0 {
			if err := s.mainExec(ctx, "SET AUTOCOMMIT=0"); err != nil {
				return err
			}
		}
		s.system(ctx, "pre_system", o.PreSystem)
		for _, st := range b.pre {
			if err := s.mainExec(ctx, st.text); err != nil {
				return fmt.Errorf("--pre-query: statement %q: %w", shortText(st.text), err)
			}
		}
		var before int64
		if b.hot != nil {
			var err error
			if before, err = b.hot.read(ctx, s.main); err != nil {
				return err
			}
			lv.hotRows, lv.hotUnsure = 0, 0
		}
		lv.probe.Start()
		r := s.round(ctx, c, limit, keys, lv)
		lv.probe.End()
		lv.add(r)
		if r.err != nil {
			runErr = r.err
			break
		}
		if b.hot != nil {
			// Read once the clients have all stopped, before
			// --post-query, which may change the rows.
			after, err := b.hot.read(ctx, s.main)
			if err != nil {
				return err
			}
			lv.hot.add(before, after, lv.hotRows, lv.hotUnsure)
		}
		for _, st := range b.post {
			if err := s.mainExec(ctx, st.text); err != nil {
				return fmt.Errorf("--post-query: statement %q: %w", shortText(st.text), err)
			}
		}
		s.system(ctx, "post_system", o.PostSystem)
	}
	s.verbose(2, "Generating stats\n")
	if len(lv.times) > 0 && (lv.queries > 0 || runErr == nil) {
		lv.client = s.clientLoad(lv)
		lv.dataCheck = lv.hot.check(b.hot)
		s.outMu.Lock()
		if s.prog != nil {
			s.prog.line.Clear() // the summary goes where the status line may be showing
		}
		if !o.Silent && !o.OnlyPrint && o.CSV == "" {
			s.printLevel(lv)
		}
		if s.csv != nil {
			s.printCSV(lv)
		}
		s.outMu.Unlock()
		if b.wantResults() && !o.OnlyPrint {
			res, err := s.levelResult(lv, started, s.srv)
			if err != nil {
				return err
			}
			b.levels = append(b.levels, res)
		}
	}
	if runErr == nil && !lv.dataCheck.OK() {
		// The test fails, whatever its speed: what the server
		// acknowledged is not what it kept.
		return fmt.Errorf("%w: %s", ErrLostUpdates, lv.dataCheck.Finding())
	}
	return runErr
}

func shortText(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	if len(q) > 80 {
		return q[:77] + "..."
	}
	return q
}
