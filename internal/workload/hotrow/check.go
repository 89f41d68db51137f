package hotrow

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/workload"
)

// tally counts what a run's transactions did to the stock. Every worker of
// the run adds to it concurrently; CheckRun reads it once they have all
// stopped.
type tally struct {
	// commits counts the transactions that committed; decrements the rows
	// their UPDATEs changed (0 for one that found num at 1).
	commits, decrements atomic.Int64
	// inDoubt counts the decrements whose COMMIT (or, in autocommit, the
	// UPDATE itself) got no answer from the server: the connection was
	// lost or the run's context ended while it was on its way, so it may
	// have committed or not.
	inDoubt atomic.Int64
}

func (t *tally) reset() {
	t.commits.Store(0)
	t.decrements.Store(0)
	t.inDoubt.Store(0)
}

func (t *tally) committed(rows int64) {
	t.commits.Add(1)
	t.decrements.Add(rows)
}

// failed counts a transaction of rows decrements whose commit failed with
// err. The server's own error (a deadlock, a serialisation failure) means
// it rolled back; any other (a lost connection, a cancelled context) leaves
// it in doubt.
func (t *tally) failed(err error, rows int64) {
	var me *mysql.MySQLError
	if rows == 0 || errors.As(err, &me) && !target.ConnLostCode(me.Number) {
		return
	}
	t.inDoubt.Add(rows)
}

// readStock is the rows' stock: the sum of num over ids 1 to --rows.
func (g *generator) readStock(ctx context.Context, env *workload.PrepareEnv) (int64, error) {
	var n int64
	// CAST: go-mysql-server (and Dolt) sums as DOUBLE.
	q := "SELECT CAST(COALESCE(SUM(num), 0) AS SIGNED) FROM `" + g.table + "` WHERE id BETWEEN 1 AND ?"
	if err := env.DB.QueryRowContext(ctx, q, g.rows).Scan(&n); err != nil {
		return 0, fmt.Errorf("read the stock of %s: %w", g.table, err)
	}
	return n, nil
}

// BeforeRun reads the stock the check compares with, and starts the tally.
func (g *generator) BeforeRun(ctx context.Context, env *workload.PrepareEnv) error {
	n, err := g.readStock(ctx, env)
	if err != nil {
		return err
	}
	g.before, g.ready = n, true
	g.tally.reset()
	return nil
}

// CheckRun reads the stock again and compares its fall with the decrements
// that committed.
func (g *generator) CheckRun(ctx context.Context, env *workload.PrepareEnv) (workload.RunCheck, error) {
	if !g.ready {
		return workload.RunCheck{}, errors.New("hotrow: CheckRun without BeforeRun")
	}
	after, err := g.readStock(ctx, env)
	if err != nil {
		return workload.RunCheck{}, err
	}
	return g.check(after), nil
}

// check is what the run says of a stock of after at its end: each
// decrement that committed lowered it by one.
func (g *generator) check(after int64) workload.RunCheck {
	rows := "rows"
	if g.rows == 1 {
		rows = "row"
	}
	what := fmt.Sprintf("the stock (sum of num) of %s's %d hot %s", g.table, g.rows, rows)
	t := &g.tally
	return workload.RunCheck{What: what, Before: g.before, After: after, Committed: t.commits.Load(), Expected: -t.decrements.Load(),
		InDoubt: t.inDoubt.Load(), Step: -1}
}
