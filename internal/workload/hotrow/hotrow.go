// Package hotrow is the "hotrow" workload: the flash sale in which every
// session decrements the stock of the same few rows. Each event is
//
//	BEGIN; UPDATE hotrow SET num=num-1 WHERE id=? AND num>1; COMMIT
//
// on one of --rows rows (default 1), picked uniformly or, with --skew > 0,
// from a zipfian distribution with that exponent (row 1 the hottest). The
// throughput is bounded by row-lock hand-over, not by the rows' number, which
// is what the workload shows about a server. prepare creates the table with
// --stock in each row; cleanup drops it.
//
// A run reads the rows' stock before and after and checks that it fell by
// exactly the decrements that committed (check.go): a server that merges
// concurrent updates of one row instead of serialising them loses some, and
// its throughput would otherwise read as a win.
package hotrow

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/randgen"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/workload"
)

func init() {
	meta := workload.Meta{Name: "hotrow", Description: "flash sale: BEGIN; UPDATE one of a few hot rows SET num=num-1; COMMIT (--rows, --skew)"}
	meta.New = func() workload.Generator { return newGenerator(meta) }
	workload.Register(meta)
}

type generator struct {
	meta    workload.Meta
	table   string
	rows    int
	stock   int64
	skew    float64
	skipTrx bool
	engine  string
	fs      *pflag.FlagSet
	// tally counts what the run's workers committed; before is the stock
	// BeforeRun read (check.go).
	tally  tally
	before int64
	ready  bool
}

func newGenerator(meta workload.Meta) *generator {
	g := &generator{meta: meta}
	fs := sbflag.NewFlagSet(meta.Name)
	fs.StringVar(&g.table, "table", "hotrow", "table name")
	fs.IntVar(&g.rows, "rows", 1, "number of hot rows")
	fs.Int64Var(&g.stock, "stock", 1000000000, "initial num of every row (prepare); num stops at 1")
	fs.Float64Var(&g.skew, "skew", 0, "0: rows picked uniformly; > 0: zipfian with this exponent, row 1 the hottest")
	sbflag.BoolVar(fs, &g.skipTrx, "skip-trx", false, "send the UPDATE alone, in autocommit mode")
	fs.StringVar(&g.engine, "mysql-storage-engine", "innodb", "storage engine of the table")
	g.fs = fs
	return g
}

func (g *generator) Meta() workload.Meta   { return g.meta }
func (g *generator) Flags() *pflag.FlagSet { return g.fs }

var name = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// Validate checks the options.
func (g *generator) Validate() error {
	switch {
	case !name.MatchString(g.table):
		return fmt.Errorf("--table must be a plain table name (letters, digits, _), got %q", g.table)
	case g.rows < 1:
		return fmt.Errorf("--rows must be >= 1")
	case g.stock < 1:
		return fmt.Errorf("--stock must be >= 1")
	case g.skew < 0:
		return fmt.Errorf("--skew must be >= 0")
	case !name.MatchString(g.engine):
		return fmt.Errorf("--mysql-storage-engine must be an engine name such as innodb, got %q", g.engine)
	}
	return nil
}

// Prepare creates the table and its rows.
func (g *generator) Prepare(ctx context.Context, env *workload.PrepareEnv) error {
	fmt.Fprintf(env.Out, "Creating table '%s' with %d hot rows of stock %d...\n", g.table, g.rows, g.stock)
	ddl := fmt.Sprintf("CREATE TABLE `%s` (id INT NOT NULL, num BIGINT NOT NULL, PRIMARY KEY (id)) ENGINE=%s", g.table, g.engine)
	if _, err := env.DB.ExecContext(ctx, ddl); err != nil {
		if target.Code(err) == target.ERTableExists {
			return fmt.Errorf("create table %s: it exists already: run cleanup first", g.table)
		}
		return fmt.Errorf("create table %s: %w", g.table, err)
	}
	const batch = 1000
	for from := 1; from <= g.rows; from += batch {
		var b strings.Builder
		fmt.Fprintf(&b, "INSERT INTO `%s` (id, num) VALUES ", g.table)
		for id := from; id < from+batch && id <= g.rows; id++ {
			if id > from {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "(%d,%d)", id, g.stock)
		}
		if _, err := env.DB.ExecContext(ctx, b.String()); err != nil {
			return fmt.Errorf("fill table %s: %w", g.table, err)
		}
	}
	return nil
}

// Cleanup drops the table.
func (g *generator) Cleanup(ctx context.Context, env *workload.PrepareEnv) error {
	fmt.Fprintf(env.Out, "Dropping table '%s'...\n", g.table)
	if _, err := env.DB.ExecContext(ctx, "DROP TABLE IF EXISTS `"+g.table+"`"); err != nil {
		return fmt.Errorf("drop table %s: %w", g.table, err)
	}
	return nil
}

// PreparedStatements is the UPDATE, and BEGIN and COMMIT unless
// --skip-trx.
func (g *generator) PreparedStatements() int {
	if g.skipTrx {
		return 1
	}
	return 3
}

// NewWorker prepares the event's statements on the thread's connection.
func (g *generator) NewWorker(ctx context.Context, env *workload.WorkerEnv) (workload.Worker, error) {
	w := &worker{conn: env.Conn, rnd: env.Rand, rows: int64(g.rows), args: make([]any, 1), tally: &g.tally}
	if g.skew > 0 && g.rows > 1 {
		cfg := randgen.Defaults()
		cfg.Type = randgen.Zipfian
		cfg.ZipfianExp = g.skew
		cfg.Seed = int64(env.Rand.Uint64()>>1) | 1
		w.zipf = cfg.New(env.ID)
	}
	var err error
	if !g.skipTrx {
		if w.begin, err = env.Conn.Prepare(ctx, "BEGIN"); err != nil {
			return nil, err
		}
		if w.commit, err = env.Conn.Prepare(ctx, "COMMIT"); err != nil {
			w.Finish(ctx)
			return nil, err
		}
	}
	if w.update, err = env.Conn.Prepare(ctx, "UPDATE `"+g.table+"` SET num=num-1 WHERE id=? AND num>1"); err != nil {
		w.Finish(ctx)
		return nil, err
	}
	return w, nil
}

type worker struct {
	conn                  workload.Conn
	rnd, zipf             *randgen.Rand
	rows                  int64
	begin, update, commit workload.Stmt
	args                  []any
	tally                 *tally
}

func (w *worker) id() int64 {
	switch {
	case w.rows == 1:
		return 1
	case w.zipf != nil:
		return w.zipf.Zipfian(1, w.rows)
	}
	return w.rnd.Uniform(1, w.rows)
}

// Event is BEGIN; UPDATE; COMMIT. After a failed UPDATE (a lock wait
// timeout leaves the transaction open) it rolls back before the error goes
// to the runner. What committed is tallied for the check after the run.
func (w *worker) Event(ctx context.Context) error {
	if w.begin != nil {
		if _, err := w.begin.Exec(ctx); err != nil {
			return err
		}
	}
	w.args[0] = w.id()
	n, err := w.update.Exec(ctx, w.args...)
	if err != nil {
		if w.begin == nil {
			// In autocommit the UPDATE is the transaction.
			w.tally.failed(err, 1)
		} else if ctx.Err() == nil && !w.conn.Broken() && !target.IsConnLost(err) {
			w.conn.Exec(ctx, "ROLLBACK") // best effort; the UPDATE's error is what counts
		}
		return err
	}
	if w.commit != nil {
		if _, err := w.commit.Exec(ctx); err != nil {
			w.tally.failed(err, n)
			return err
		}
	}
	w.tally.committed(n)
	return nil
}

// Finish closes the prepared statements.
func (w *worker) Finish(context.Context) error {
	for _, s := range []workload.Stmt{w.begin, w.update, w.commit} {
		if s != nil {
			s.Close()
		}
	}
	w.begin, w.update, w.commit = nil, nil, nil
	return nil
}

// Tables is the one table prepare makes and cleanup drops.
func (g *generator) Tables(int) ([]string, bool) { return []string{g.table}, true }
