package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"

	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/workload"
)

// ErrDataCheck means the workload's check of the data after the run found
// that the server did not keep what it acknowledged (lost updates): the
// run failed, whatever its throughput.
var ErrDataCheck = errors.New("data check failed")

// checkBefore starts the workload's data check (workload.RunChecker) on
// db, the run's first connection, before the threads connect. It returns
// nil when the workload has none, and when the run is one runner of a
// split load: the other runners write the same rows.
func (j *Job) checkBefore(ctx context.Context, db *sql.DB, out io.Writer) (workload.RunChecker, error) {
	rc, ok := j.Gen.(workload.RunChecker)
	if !ok || j.split.On {
		return nil, nil
	}
	env := &workload.PrepareEnv{DB: db, Threads: j.spec.Threads, Rand: j.spec.Rand, Out: out}
	if err := rc.BeforeRun(ctx, env); err != nil {
		if target.Code(err) == target.ERNoSuchTable {
			// Said as the run itself would: prepare first.
			return nil, fmt.Errorf("%s on %s: %w", j.Workload(), j.Target, client.ErrMissingTables)
		}
		return nil, fmt.Errorf("%s: %w", j.Workload(), err)
	}
	return rc, nil
}

// checkAfter makes the data check once every thread has stopped, on a
// connection of its own, and records it in res. An interrupted run is not
// checked. The error is ErrDataCheck with the finding when the check
// failed, or why it could not be made.
func (j *Job) checkAfter(ctx context.Context, rc workload.RunChecker, res *result.Result, out io.Writer) error {
	if rc == nil || ctx.Err() != nil || res.Interrupted {
		return nil
	}
	db, _, err := j.connect(ctx)
	if err != nil {
		return fmt.Errorf("check the data after the run: %w", err)
	}
	defer db.Close()
	got, err := rc.CheckRun(ctx, &workload.PrepareEnv{DB: db, Threads: j.spec.Threads, Rand: j.spec.Rand, Out: out})
	if err != nil {
		return fmt.Errorf("check the data after the run: %w", err)
	}
	c := result.NewDataCheck(got.What, got.Before, got.After, got.Committed, got.Expected, got.InDoubt, got.Step)
	res.DataCheck = c
	if c.OK() {
		return nil
	}
	// In the document too, so that a result file read back is failed.
	if res.Error == "" {
		res.Error = c.Finding()
	} else {
		res.Error += "; " + c.Finding()
	}
	return fmt.Errorf("%w: %s", ErrDataCheck, c.Finding())
}
