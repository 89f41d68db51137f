package bisect

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/shakedown/shakedown/internal/engine"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/target"
)

// A measurement is one run of the workload through the engine, exactly as
// "shakedown run WORKLOAD [options]" runs it; this file is bisect's only use
// of the engine.

// checkRun parses the workload's command line once, so that bad run options
// are reported before any server is touched.
func checkRun(workload string, args []string) error {
	_, err := engine.Parse("run", append([]string{workload}, args...), io.Discard)
	return err
}

// runOnce runs the workload on tgt and returns its throughput (queries per
// second) and the seconds it measured. A run that failed, was interrupted
// or lost the server is an error: its figure is not a measurement to
// compare.
func runOnce(ctx context.Context, tgt *target.Target, version, workload string, args []string) (qps, seconds float64, err error) {
	j, err := engine.Parse("run", append([]string{workload}, args...), io.Discard)
	if err != nil {
		return 0, 0, err
	}
	t := *tgt
	j.Target = &t
	res, err := j.Run(ctx, engine.RunOptions{Version: version})
	if err == nil && ctx.Err() != nil {
		err = engine.ErrInterrupted
	}
	if err != nil {
		if errors.Is(err, engine.ErrInterrupted) || ctx.Err() != nil {
			return 0, 0, ErrInterrupted
		}
		return 0, 0, fmt.Errorf("run %s on %s: %w", workload, tgt, err)
	}
	if status, why := result.StatusOf(res, nil, false); status != result.StatusOK {
		return 0, 0, fmt.Errorf("run %s on %s: %w", workload, tgt, why)
	}
	if res.QPS <= 0 {
		return 0, 0, fmt.Errorf("run %s on %s: no queries completed", workload, tgt)
	}
	return res.QPS, res.TimeS, nil
}
