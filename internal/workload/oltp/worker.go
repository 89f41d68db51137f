package oltp

import (
	"context"
	"errors"
	"fmt"
	"unsafe"

	"github.com/shakedown/shakedown/internal/randgen"
	"github.com/shakedown/shakedown/internal/workload"
)

// NewWorker returns the worker of one thread. It prepares, on env.Conn, the
// statements the workload's script prepares: server-side unless the
// connection is in text mode.
func (g *generator) NewWorker(ctx context.Context, env *workload.WorkerEnv) (workload.Worker, error) {
	if g.kind != bulkInsert && g.opts.TableSize < 1 {
		return nil, fmt.Errorf("--table-size must be >= 1 to run %s", g.meta.Name)
	}
	switch g.kind {
	case insert:
		return newInsertWorker(env, &g.opts), nil
	case randomPoints, randomRanges:
		return newRandomSelectWorker(ctx, g.kind, env, &g.opts)
	case bulkInsert:
		return g.newBulkWorker(env), nil
	}
	return newOLTPWorker(ctx, g.kind, env, &g.opts)
}

// PreparedStatements is how many statements a thread prepares: the
// script's statement groups on every table, and BEGIN and COMMIT.
func (g *generator) PreparedStatements() int {
	switch g.kind {
	case insert, bulkInsert:
		return 0 // text statements
	case randomPoints, randomRanges:
		return 1
	}
	p := planFor(g.kind, &g.opts)
	n := 0
	for _, on := range p.prepared {
		if on {
			n += g.opts.Tables
		}
	}
	if p.trx {
		n += 2
	}
	return n
}

// value is a reusable buffer for a random CHAR value with an argument that
// refers to it. The argument is a string sharing the buffer's bytes, boxed
// once, so passing a fresh value per statement allocates nothing. The driver
// reads the bytes during the call and keeps no reference after it returns;
// a string (not []byte) makes the text protocol quote it as sysbench does
// ('...' rather than _binary'...').
type value struct {
	buf  []byte
	arg  any
	tmpl string
}

func newValue(tmpl string) *value {
	v := &value{buf: make([]byte, len(tmpl)), tmpl: tmpl}
	v.arg = unsafe.String(unsafe.SliceData(v.buf), len(v.buf))
	return v
}

// next fills the buffer with a new random value and returns its argument.
func (v *value) next(r *randgen.Rand) any {
	r.FillString(v.buf, v.tmpl)
	return v.arg
}

// oltpWorker runs the events of the oltp_* scripts built on
// oltp_common.lua's statement groups.
type oltpWorker struct {
	rnd  *randgen.Rand
	plan plan

	begin, commit workload.Stmt
	stmts         [][numGroups]workload.Stmt // [table-1][group]

	tables    int64
	tableSize int64
	rangeSize int64

	c, pad *value
	args   [4]any // argument scratch, reused by every statement
}

func newOLTPWorker(ctx context.Context, k kind, env *workload.WorkerEnv, o *Options) (*oltpWorker, error) {
	w := &oltpWorker{
		rnd:       env.Rand,
		plan:      planFor(k, o),
		stmts:     make([][numGroups]workload.Stmt, o.Tables),
		tables:    int64(o.Tables),
		tableSize: int64(o.TableSize),
		rangeSize: int64(o.RangeSize),
		c:         newValue(cTemplate),
		pad:       newValue(padTemplate),
	}
	var err error
	if w.plan.trx {
		if w.begin, err = env.Conn.Prepare(ctx, "BEGIN"); err != nil {
			return nil, err
		}
		if w.commit, err = env.Conn.Prepare(ctx, "COMMIT"); err != nil {
			w.Finish(ctx)
			return nil, err
		}
	}
	for g := group(0); g < numGroups; g++ {
		if !w.plan.prepared[g] {
			continue
		}
		for t := range w.stmts {
			if w.stmts[t][g], err = env.Conn.Prepare(ctx, statementFor(g, t+1)); err != nil {
				w.Finish(ctx)
				return nil, err
			}
		}
	}
	return w, nil
}

// Finish closes the prepared statements, as sysbench's thread_done does.
func (w *oltpWorker) Finish(context.Context) error {
	var errs []error
	for _, s := range []workload.Stmt{w.begin, w.commit} {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	for t := range w.stmts {
		for g, s := range w.stmts[t] {
			if s != nil {
				errs = append(errs, s.Close())
				w.stmts[t][g] = nil
			}
		}
	}
	w.begin, w.commit = nil, nil
	return errors.Join(errs...)
}

// table picks the table of a statement group, uniformly, as get_table_num.
func (w *oltpWorker) table() *[numGroups]workload.Stmt {
	return &w.stmts[w.rnd.Uniform(1, w.tables)-1]
}

// id picks a row id with --rand-type, as get_id.
func (w *oltpWorker) id() int64 { return w.rnd.Default(1, w.tableSize) }

// Event runs one event of the script: BEGIN, the statement groups in the
// script's order, COMMIT. A server error ends it at once, unchanged.
func (w *oltpWorker) Event(ctx context.Context) error {
	p := &w.plan
	if p.trx {
		if _, err := w.begin.Exec(ctx); err != nil {
			return err
		}
	}
	if n := p.count[gPoint]; n > 0 {
		s := w.table()[gPoint]
		for i := 0; i < n; i++ {
			w.args[0] = w.id()
			if err := s.Query(ctx, w.args[:1]...); err != nil {
				return err
			}
		}
	}
	for g := gSimple; g <= gDistinct; g++ {
		if err := w.ranges(ctx, g, p.count[g]); err != nil {
			return err
		}
	}
	if n := p.count[gIndexUpdate]; n > 0 {
		s := w.table()[gIndexUpdate]
		for i := 0; i < n; i++ {
			w.args[0] = w.id()
			if _, err := s.Exec(ctx, w.args[:1]...); err != nil {
				return err
			}
		}
	}
	if n := p.count[gNonIndexUpdate]; n > 0 {
		s := w.table()[gNonIndexUpdate]
		for i := 0; i < n; i++ {
			w.args[0] = w.c.next(w.rnd)
			w.args[1] = w.id()
			if _, err := s.Exec(ctx, w.args[:2]...); err != nil {
				return err
			}
		}
	}
	if n := p.count[gDelete]; n > 0 {
		if err := w.deletes(ctx, n); err != nil {
			return err
		}
	}
	if p.trx {
		if _, err := w.commit.Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

// ranges runs n range SELECTs of group g on one table.
func (w *oltpWorker) ranges(ctx context.Context, g group, n int) error {
	if n == 0 {
		return nil
	}
	s := w.table()[g]
	for i := 0; i < n; i++ {
		id := w.id()
		w.args[0] = id
		w.args[1] = id + w.rangeSize - 1
		if err := s.Query(ctx, w.args[:2]...); err != nil {
			return err
		}
	}
	return nil
}

// deletes runs n DELETEs on one table, each followed by an INSERT of the same
// id when the plan pairs them (execute_delete_inserts).
func (w *oltpWorker) deletes(ctx context.Context, n int) error {
	t := w.table()
	for i := 0; i < n; i++ {
		id := w.id()
		if !w.plan.deleteInserts {
			w.args[0] = id
			if _, err := t[gDelete].Exec(ctx, w.args[:1]...); err != nil {
				return err
			}
			continue
		}
		k := w.id()
		w.args[0] = id
		if _, err := t[gDelete].Exec(ctx, w.args[:1]...); err != nil {
			return err
		}
		w.args[0] = id
		w.args[1] = k
		w.args[2] = w.c.next(w.rnd)
		w.args[3] = w.pad.next(w.rnd)
		if _, err := t[gInsert].Exec(ctx, w.args[:4]...); err != nil {
			return err
		}
	}
	return nil
}

// insertWorker runs oltp_insert.lua: one text INSERT per event, with id 0
// (AUTO_INCREMENT) or, with --auto-inc=off, a process-wide unique id.
type insertWorker struct {
	conn      workload.Conn
	rnd       *randgen.Rand
	tables    int64
	tableSize int64
	autoInc   bool
	c, pad    []byte
	buf       []byte
}

func newInsertWorker(env *workload.WorkerEnv, o *Options) *insertWorker {
	return &insertWorker{
		conn:      env.Conn,
		rnd:       env.Rand,
		tables:    int64(o.Tables),
		tableSize: int64(o.TableSize),
		autoInc:   o.AutoInc,
		c:         make([]byte, len(cTemplate)),
		pad:       make([]byte, len(padTemplate)),
		buf:       make([]byte, 0, 256),
	}
}

func (w *insertWorker) Event(ctx context.Context) error {
	table := int(w.rnd.Uniform(1, w.tables))
	k := w.rnd.Default(1, w.tableSize)
	w.rnd.FillString(w.c, cTemplate)
	w.rnd.FillString(w.pad, padTemplate)
	var id int64
	if !w.autoInc {
		// A unique uint32 moved into the range of a signed INTEGER.
		id = int64(w.rnd.Unique()) - 1<<31
	}
	w.buf = appendInsertSQL(w.buf[:0], table, id, k, w.c, w.pad)
	// The query string shares w.buf, which is not touched until the call
	// returns; neither database/sql nor the driver keeps it.
	_, err := w.conn.Exec(ctx, unsafe.String(unsafe.SliceData(w.buf), len(w.buf)))
	return err
}

// randomSelectWorker runs select_random_points.lua and
// select_random_ranges.lua: one prepared SELECT on sbtest1 per event, with
// values of k from this thread's slice of 0..table-size.
type randomSelectWorker struct {
	rnd        *randgen.Rand
	stmt       workload.Stmt
	ranges     bool  // select_random_ranges
	n          int   // points, or ranges
	delta      int64 // ranges: width of each BETWEEN
	rmin, rmax int64
	args       []any
}

func newRandomSelectWorker(ctx context.Context, k kind, env *workload.WorkerEnv, o *Options) (*randomSelectWorker, error) {
	w := &randomSelectWorker{rnd: env.Rand, ranges: k == randomRanges, delta: int64(o.Delta)}
	var query string
	if w.ranges {
		w.n = o.NumberOfRanges
		query = randomRangesSQL(w.n)
		w.args = make([]any, 2*w.n)
	} else {
		w.n = o.RandomPoints
		query = randomPointsSQL(w.n)
		w.args = make([]any, w.n)
	}
	w.rmin, w.rmax = threadSlice(o.TableSize, env.ID, env.Threads)
	var err error
	if w.stmt, err = env.Conn.Prepare(ctx, query); err != nil {
		return nil, err
	}
	return w, nil
}

// threadSlice returns the bounds of thread id's share of 0..tableSize, as the
// scripts compute them: rlen = table_size/threads in floating point, the
// bounds rlen*id and rlen*id+rlen truncated to integers.
func threadSlice(tableSize, id, threads int) (lo, hi int64) {
	if threads < 1 {
		threads = 1
	}
	rlen := float64(tableSize) / float64(threads)
	rmin := rlen * float64(id%threads)
	return int64(rmin), int64(rmin + rlen)
}

func (w *randomSelectWorker) Event(ctx context.Context) error {
	if w.ranges {
		for i := 0; i < w.n; i++ {
			v := w.rnd.Default(w.rmin, w.rmax)
			w.args[2*i] = v
			w.args[2*i+1] = v + w.delta
		}
	} else {
		for i := range w.args {
			w.args[i] = w.rnd.Default(w.rmin, w.rmax)
		}
	}
	return w.stmt.Query(ctx, w.args...)
}

// Finish closes the prepared statement.
func (w *randomSelectWorker) Finish(context.Context) error { return w.stmt.Close() }
