package oltp

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/loaddata"
	"github.com/shakedown/shakedown/internal/randgen"
	"github.com/shakedown/shakedown/internal/workload"

	"github.com/shakedown/shakedown/internal/target"
)

// Prepare creates the workload's tables and rows: what sysbench's prepare
// command makes, loaded faster.
func (g *generator) Prepare(ctx context.Context, env *workload.PrepareEnv) error {
	if g.kind == bulkInsert {
		return bulkPrepare(ctx, env)
	}
	o := g.opts
	if g.kind == insert && !o.AutoInc {
		// oltp_insert.lua leaves the tables empty when ids come from the
		// client, so that they cannot collide with the unique ids of the run.
		o.TableSize = 0
	}
	l := &loader{env: env, opts: &o, chunkRows: defaultChunkRows}
	return l.run(ctx)
}

// Cleanup drops the workload's tables, as sysbench's cleanup does.
func (g *generator) Cleanup(ctx context.Context, env *workload.PrepareEnv) error {
	switch g.kind {
	case bulkInsert:
		return bulkCleanup(ctx, env)
	case randomPoints, randomRanges:
		// The scripts refuse this (their prepare does not).
		if g.opts.Tables != 1 {
			return fmt.Errorf("%s does not support --tables > 1", g.meta.Name)
		}
	}
	return dropTables(ctx, env, g.opts.Tables)
}

func dropTables(ctx context.Context, env *workload.PrepareEnv, n int) error {
	for i := 1; i <= n; i++ {
		fmt.Fprintf(env.Out, "Dropping table 'sbtest%d'...\n", i)
		if _, err := env.DB.ExecContext(ctx, dropTableSQL(i)); err != nil {
			return fmt.Errorf("drop table sbtest%d: %w", i, err)
		}
	}
	return nil
}

// defaultChunkRows caps the rows one LOAD DATA (one transaction) carries.
const defaultChunkRows = 1 << 20

// insertBatchBytes is the size of one multi-row INSERT when the server refuses
// LOAD DATA LOCAL INFILE; well under every server's max_allowed_packet.
const insertBatchBytes = 1 << 20

// loader fills the tables sbtest1..N. It splits every table's id range into
// chunks and has up to env.Threads connections load them at once, so tables
// fill in parallel with each other and, when there are fewer tables than
// threads and the server can take it, within themselves. The connection that
// loads the last chunk of a table then builds its secondary index.
type loader struct {
	env       *workload.PrepareEnv
	opts      *Options
	chunkRows int64
	noSplit   bool // load each table on one connection at a time

	outMu sync.Mutex

	// noLoadData is set once the server refused LOAD DATA LOCAL INFILE;
	// from then on every chunk goes as multi-row INSERTs.
	noLoadData atomic.Bool
	fallback   sync.Once

	// progress is, per table (index 0 is sbtest1), what is done of it, so
	// that a prepare that stops part way says which tables are incomplete.
	progress []tableProgress
}

// tableProgress is what the loader has done to one table.
type tableProgress struct {
	created atomic.Bool
	rows    atomic.Int64 // committed
	indexed atomic.Bool
}

type chunk struct {
	table    int
	from, to int64 // ids, inclusive
	first    bool  // the table's first chunk: announce the table
	left     *atomic.Int32
}

func (l *loader) printf(format string, args ...any) {
	l.outMu.Lock()
	defer l.outMu.Unlock()
	fmt.Fprintf(l.env.Out, format, args...)
}

func (l *loader) run(ctx context.Context) error {
	l.progress = make([]tableProgress, l.opts.Tables)
	if err := l.fill(ctx); err != nil {
		if list := l.incomplete(); len(list) > 0 {
			return &workload.IncompleteError{Err: err, Tables: list}
		}
		return err
	}
	return nil
}

// incomplete describes the tables the loader did not finish; nothing when
// it created none (it failed before changing anything).
func (l *loader) incomplete() []string {
	o := l.opts
	created := false
	for i := range l.progress {
		created = created || l.progress[i].created.Load()
	}
	if !created {
		return nil
	}
	return tableRuns(len(l.progress), func(i int) (string, string) {
		p := &l.progress[i]
		switch rows := p.rows.Load(); {
		case !p.created.Load():
			return "was not created", "were not created"
		case rows < int64(o.TableSize):
			return fmt.Sprintf("holds %d of %d rows", rows, o.TableSize), fmt.Sprintf("hold %d of %d rows", rows, o.TableSize)
		case o.CreateSecondary && !p.indexed.Load():
			return "lacks the secondary index", "lack the secondary index"
		}
		return "", ""
	})
}

// tableRuns says what is wrong with tables sbtest1..n, once for each run of
// tables in the same state: "sbtest3 to sbtest8 hold 0 of 20000 rows".
// state returns what is wrong with table i+1 said of one table and of
// several, "" when nothing is.
func tableRuns(n int, state func(i int) (one, many string)) []string {
	var out []string
	for i := 0; i < n; {
		one, many := state(i)
		j := i + 1
		for j < n {
			if o, _ := state(j); o != one {
				break
			}
			j++
		}
		switch {
		case one == "":
		case j-i == 1:
			out = append(out, tableName(i+1)+" "+one)
		case j-i == 2:
			out = append(out, tableName(i+1)+" and "+tableName(j)+" "+many)
		default:
			out = append(out, tableName(i+1)+" to "+tableName(j)+" "+many)
		}
		i = j
	}
	return out
}

func (l *loader) fill(ctx context.Context) error {
	start := time.Now()
	o := l.opts
	workers := max(l.env.Threads, 1)

	// Tables first, in parallel as sysbench does: table t by worker
	// t mod threads.
	err := l.parallel(ctx, min(workers, o.Tables), func(ctx context.Context, w int, _ *sql.Conn, _ *randgen.Rand) error {
		for t := w + 1; t <= o.Tables; t += workers {
			l.printf("Creating table 'sbtest%d'...\n", t)
			if _, err := l.env.DB.ExecContext(ctx, createTableSQL(t, o)); err != nil {
				var me *mysql.MySQLError
				if errors.As(err, &me) && me.Number == target.ERTableExists {
					return fmt.Errorf("create table sbtest%d: it exists already: run cleanup first (with the same --tables), or prepare into another database", t)
				}
				return fmt.Errorf("create table sbtest%d: %w", t, err)
			}
			l.progress[t-1].created.Store(true)
		}
		return nil
	}, false)
	if err != nil {
		return err
	}

	if !l.noSplit && !l.splittable(ctx) {
		l.noSplit = true
	}
	jobs := l.jobs(workers)
	queue := make(chan []chunk, len(jobs))
	for _, j := range jobs {
		queue <- j
	}
	close(queue)
	err = l.parallel(ctx, min(workers, len(jobs)), func(ctx context.Context, w int, conn *sql.Conn, rnd *randgen.Rand) error {
		for job := range queue {
			for _, c := range job {
				if err := l.runChunk(ctx, conn, rnd, c); err != nil {
					return err
				}
			}
		}
		return nil
	}, true)
	if err != nil {
		return err
	}
	rows := int64(o.Tables) * int64(o.TableSize)
	el := time.Since(start)
	l.printf("Prepared %d tables with %d rows each in %.2fs (%.0f rows/s)\n",
		o.Tables, o.TableSize, el.Seconds(), float64(rows)/el.Seconds())
	return nil
}

// runChunk loads one chunk, then builds the table's secondary index if the
// chunk was its last.
func (l *loader) runChunk(ctx context.Context, conn *sql.Conn, rnd *randgen.Rand, c chunk) error {
	o := l.opts
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if c.first && o.TableSize > 0 {
		l.printf("Inserting %d records into 'sbtest%d'\n", o.TableSize, c.table)
	}
	if c.to >= c.from {
		if err := l.load(ctx, conn, rnd, c); err != nil {
			return fmt.Errorf("load sbtest%d: %w", c.table, err)
		}
	}
	if c.left.Add(-1) == 0 && o.CreateSecondary {
		l.printf("Creating a secondary index on 'sbtest%d'...\n", c.table)
		if _, err := conn.ExecContext(ctx, createIndexSQL(c.table)); err != nil {
			return fmt.Errorf("create index on sbtest%d: %w", c.table, err)
		}
		l.progress[c.table-1].indexed.Store(true)
	}
	return nil
}

// splittable reports whether several connections can load one table at
// once. With InnoDB's default innodb_autoinc_lock_mode=1 (MariaDB) a LOAD
// DATA into a table with an AUTO_INCREMENT column holds a table lock to its
// end, so concurrent loads of one table would only queue (and could time
// out); mode 2 (MySQL 8's default) and tables without AUTO_INCREMENT have no
// such lock. Other engines lock whole tables.
func (l *loader) splittable(ctx context.Context) bool {
	if !strings.EqualFold(l.opts.StorageEngine, "innodb") {
		return false
	}
	if !l.opts.AutoInc {
		return true
	}
	var mode sql.NullInt64
	if err := l.env.DB.QueryRowContext(ctx, "SELECT @@innodb_autoinc_lock_mode").Scan(&mode); err != nil {
		return true // not InnoDB as MySQL knows it (TiDB, say): no such lock
	}
	return mode.Int64 == 2
}

// jobs groups the chunks into units of work for one connection each: every
// chunk alone, or with noSplit all the chunks of a table in order.
func (l *loader) jobs(workers int) [][]chunk {
	var jobs [][]chunk
	for _, c := range l.chunks(workers) {
		if l.noSplit && !c.first {
			jobs[len(jobs)-1] = append(jobs[len(jobs)-1], c)
			continue
		}
		jobs = append(jobs, []chunk{c})
	}
	return jobs
}

// chunks splits the tables' id ranges: into at least enough pieces to keep
// every worker busy (unless noSplit), and none larger than chunkRows.
func (l *loader) chunks(workers int) []chunk {
	o := l.opts
	size := int64(o.TableSize)
	per := int64(1)
	if o.Tables < workers && !l.noSplit {
		per = int64((workers + o.Tables - 1) / o.Tables)
	}
	if l.chunkRows > 0 {
		per = max(per, (size+l.chunkRows-1)/l.chunkRows)
	}
	per = max(min(per, size), 1)
	var out []chunk
	for t := 1; t <= o.Tables; t++ {
		left := new(atomic.Int32)
		left.Store(int32(per))
		for i := int64(0); i < per; i++ {
			out = append(out, chunk{
				table: t,
				from:  size*i/per + 1,
				to:    size * (i + 1) / per,
				first: i == 0,
				left:  left,
			})
		}
	}
	return out
}

// parallel runs fn on n goroutines, each with its own connection when
// withConn is set, and returns the first error; an error cancels the others.
func (l *loader) parallel(ctx context.Context, n int, fn func(ctx context.Context, w int, conn *sql.Conn, rnd *randgen.Rand) error, withConn bool) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	fail := func(err error) {
		once.Do(func() { first = err; cancel(err) })
	}
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var conn *sql.Conn
			if withConn {
				var err error
				if conn, err = l.env.DB.Conn(ctx); err != nil {
					fail(fmt.Errorf("connect: %w", err))
					return
				}
				defer conn.Close()
			}
			if err := fn(ctx, w, conn, l.env.Rand.New(w)); err != nil {
				fail(err)
			}
		}(w)
	}
	wg.Wait()
	return first
}

// load inserts the rows of one chunk.
func (l *loader) load(ctx context.Context, conn *sql.Conn, rnd *randgen.Rand, c chunk) error {
	if !l.noLoadData.Load() {
		err := l.loadData(ctx, conn, rnd, c)
		if err == nil {
			l.progress[c.table-1].rows.Add(c.to - c.from + 1) // one transaction
		}
		if err == nil || !loadDataRefused(err) {
			return err
		}
		l.fallback.Do(func() {
			l.noLoadData.Store(true)
			l.printf("LOAD DATA LOCAL INFILE is not allowed (%v); loading with multi-row INSERTs\n", err)
		})
	}
	return l.insertRows(ctx, conn, rnd, c)
}

// loadData streams the chunk's rows to the server with LOAD DATA LOCAL
// INFILE, generating them as the driver reads.
func (l *loader) loadData(ctx context.Context, conn *sql.Conn, rnd *randgen.Rand, c chunk) error {
	rr := &rowReader{gen: rowGen{rnd: rnd, tableSize: int64(l.opts.TableSize), sep: '\t'}, next: c.from, to: c.to}
	_, err := loaddata.Exec(ctx, conn, "shakedown-oltp", rr, "INTO TABLE "+tableName(c.table)+" (id, k, c, pad)")
	return err
}

// loadDataRefused reports whether err says LOAD DATA LOCAL is not allowed.
var loadDataRefused = loaddata.Refused

// insertRows inserts the chunk's rows with multi-row INSERTs of about
// insertBatchBytes each.
func (l *loader) insertRows(ctx context.Context, conn *sql.Conn, rnd *randgen.Rand, c chunk) error {
	gen := rowGen{rnd: rnd, tableSize: int64(l.opts.TableSize)}
	prefix := "INSERT INTO " + tableName(c.table) + "(id, k, c, pad) VALUES "
	buf := make([]byte, 0, insertBatchBytes+512)
	for id := c.from; id <= c.to; {
		buf = append(buf[:0], prefix...)
		n := 0
		for ; id <= c.to && len(buf) < insertBatchBytes; n++ {
			if n > 0 {
				buf = append(buf, ',')
			}
			buf = gen.appendValues(buf, id)
			id++
		}
		if _, err := conn.ExecContext(ctx, string(buf)); err != nil {
			return err
		}
		l.progress[c.table-1].rows.Add(int64(n))
	}
	return nil
}

// rowGen makes the rows of oltp_common.lua's prepare: k from --rand-type over
// 1..table-size, c and pad from the digit templates.
type rowGen struct {
	rnd       *randgen.Rand
	tableSize int64
	sep       byte // LOAD DATA field separator
}

// appendLine appends one LOAD DATA line: id, k, c, pad separated by sep.
func (g *rowGen) appendLine(dst []byte, id int64) []byte {
	dst = appendInt(dst, id)
	dst = append(dst, g.sep)
	dst = appendInt(dst, g.rnd.Default(1, g.tableSize))
	dst = append(dst, g.sep)
	dst = g.rnd.AppendString(dst, cTemplate)
	dst = append(dst, g.sep)
	dst = g.rnd.AppendString(dst, padTemplate)
	return append(dst, '\n')
}

// appendValues appends one INSERT row: (id, k, 'c', 'pad').
func (g *rowGen) appendValues(dst []byte, id int64) []byte {
	dst = append(dst, '(')
	dst = appendInt(dst, id)
	dst = append(dst, ", "...)
	dst = appendInt(dst, g.rnd.Default(1, g.tableSize))
	dst = append(dst, ", '"...)
	dst = g.rnd.AppendString(dst, cTemplate)
	dst = append(dst, "', '"...)
	dst = g.rnd.AppendString(dst, padTemplate)
	return append(dst, "')"...)
}

// appendInt appends a non-negative decimal number.
func appendInt(dst []byte, v int64) []byte {
	var b [20]byte
	i := len(b)
	for v >= 10 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	i--
	b[i] = byte('0' + v)
	return append(dst, b[i:]...)
}

// rowReader generates a chunk's LOAD DATA lines as they are read. It needs no
// context: when the statement's context ends, the driver closes the
// connection and stops reading.
type rowReader struct {
	gen      rowGen
	next, to int64 // ids still to generate
	buf      []byte
	off      int
}

const rowReaderFill = 64 << 10

func (r *rowReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if r.off == len(r.buf) {
			if r.next > r.to {
				if n == 0 {
					return 0, io.EOF
				}
				return n, nil
			}
			r.buf, r.off = r.buf[:0], 0
			for len(r.buf) < rowReaderFill && r.next <= r.to {
				r.buf = r.gen.appendLine(r.buf, r.next)
				r.next++
			}
		}
		c := copy(p[n:], r.buf[r.off:])
		n += c
		r.off += c
	}
	return n, nil
}

// CheckData checks, before a run, that every table the run uses exists and
// holds ids up to about --table-size. MAX(id) is read from the primary key
// and costs nothing, so a table that an interrupted prepare left empty or
// part-filled stops the run before it measures the wrong thing. (A table
// missing rows in the middle passes: only counting would see it.)
func (g *generator) CheckData(ctx context.Context, env *workload.PrepareEnv) error {
	o := g.opts
	tables, want := o.Tables, int64(o.TableSize)
	switch g.kind {
	case bulkInsert:
		return nil // its tables are its own and start empty
	case insert:
		if !o.AutoInc {
			want = 0 // prepare leaves them empty
		}
	case randomPoints, randomRanges:
		tables = 1
	}
	// MAX(id) of each table: -1 when it does not exist, 0 when empty.
	maxIDs := make([]int64, tables)
	for t := 1; t <= tables; t++ {
		var maxID sql.NullInt64
		err := env.DB.QueryRowContext(ctx, "SELECT MAX(id) FROM "+tableName(t)).Scan(&maxID)
		var me *mysql.MySQLError
		switch {
		case errors.As(err, &me) && me.Number == target.ERNoSuchTable:
			maxIDs[t-1] = -1
		case err != nil:
			return fmt.Errorf("check %s: %w", tableName(t), err)
		default:
			maxIDs[t-1] = maxID.Int64
		}
	}
	problems := tableRuns(tables, func(i int) (string, string) {
		switch id := maxIDs[i]; {
		case id < 0:
			return "does not exist", "do not exist"
		case want > 0 && id == 0:
			return "is empty", "are empty"
		case want > 0 && id < want*9/10:
			// Runs that delete rows may lower MAX(id) a little; an
			// interrupted prepare lowers it a lot.
			return fmt.Sprintf("holds ids up to %d of --table-size %d", id, want), fmt.Sprintf("hold ids up to %d of --table-size %d", id, want)
		}
		return "", ""
	})
	if len(problems) > 0 {
		return fmt.Errorf("%s: %w", strings.Join(problems, ", "), workload.ErrNotPrepared)
	}
	return nil
}

// Tables names what prepare makes and cleanup drops: sbtest1 to sbtestN,
// N being --tables, or prepare's --threads for bulk_insert (a table per
// thread).
func (g *generator) Tables(threads int) ([]string, bool) {
	n := g.opts.Tables
	if g.kind == bulkInsert {
		n = max(threads, 1)
	}
	names := make([]string, n)
	for i := range names {
		names[i] = tableName(i + 1)
	}
	return names, true
}
