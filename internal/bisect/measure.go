package bisect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/shakedown/shakedown/internal/bench"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/runspec"
	"github.com/shakedown/shakedown/internal/target"
)

// A measurement is one run of the workload through the engine, exactly as
// "shakedown run WORKLOAD [options]" runs it; this file is bisect's only use
// of the engine.

// runSpec reads the workload's command line once, and checks the run
// whole, so that bad run options are reported before any server is
// touched.
func runSpec(cfg Config) (runspec.Spec, error) {
	run, _, err := bench.ParseArgs("run", append([]string{cfg.Workload}, cfg.RunArgs...), io.Discard)
	if err != nil {
		return runspec.Spec{}, err
	}
	run.Threads = cfg.Threads
	if _, err := bench.New("run", run, nil); err != nil {
		return runspec.Spec{}, err
	}
	return run, nil
}

// runOptions are the run's options as the result records them (its
// run_options) and progress names them: --threads, then the rest as
// given.
func runOptions(cfg Config) []string {
	return append([]string{"--threads=" + strconv.Itoa(cfg.Threads)}, cfg.RunArgs...)
}

// runOnce runs the workload on tgt and returns its throughput (queries per
// second) and the seconds it measured. A run that failed, was interrupted
// or lost the server is an error: its figure is not a measurement to
// compare.
func runOnce(ctx context.Context, tgt *target.Target, version, workload string, run runspec.Spec) (qps, seconds float64, err error) {
	j, err := bench.New("run", run, tgt)
	if err != nil {
		return 0, 0, err
	}
	res, err := j.Run(ctx, bench.RunOptions{Version: version})
	if err == nil && ctx.Err() != nil {
		err = bench.ErrInterrupted
	}
	if err != nil {
		if errors.Is(err, bench.ErrInterrupted) || ctx.Err() != nil {
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
