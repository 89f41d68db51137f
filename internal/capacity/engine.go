package capacity

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/shakedown/shakedown/internal/bench"
	"github.com/shakedown/shakedown/internal/histogram"
	"github.com/shakedown/shakedown/internal/runner"
	"github.com/shakedown/shakedown/internal/runspec"
)

// EngineStepper runs steps as "shakedown run" runs them: each step is the
// run Spec (a workload, its options and one target) with the rate, time
// and warm-up the search sets, so that a step means exactly what that run
// means.
type EngineStepper struct {
	// Spec is the run of every step.
	Spec runspec.Spec
	// Password, when set, is given to the target of every step.
	Password func(string) string
	// Warmup is each step's warm-up, in whole seconds as run takes it.
	Warmup int
}

// Step runs one step. A step stopped for overload is not an error.
func (e *EngineStepper) Step(ctx context.Context, rate float64, seconds int, watch func([]int64) bool) (Measure, error) {
	run := e.Spec
	run.Monitor, run.ReportIntervalS = false, 1
	run.TimeS, run.WarmupS = seconds, e.Warmup
	// To the thousandth of an event a second, as a step's rate has
	// always been given.
	run.Rate, _ = strconv.ParseFloat(strconv.FormatFloat(rate, 'f', 3, 64), 64)
	job, err := bench.New("run", run, nil)
	if err != nil {
		return Measure{}, err
	}
	if e.Password != nil {
		if err := job.Target.LoadPassword(e.Password); err != nil {
			return Measure{}, err
		}
	}
	stepCtx, stop := context.WithCancel(ctx)
	defer stop()
	var mu sync.Mutex
	var backlog []int64
	ended := false
	opt := bench.RunOptions{OnInterval: func(iv runner.Interval) {
		mu.Lock()
		defer mu.Unlock()
		backlog = append(backlog, iv.Queue)
		if !ended && watch != nil && watch(backlog) {
			ended = true
			stop()
		}
	}}
	res, err := job.Run(stepCtx, opt)
	mu.Lock()
	early := ended
	mu.Unlock()
	if err != nil && !(early && errors.Is(err, bench.ErrInterrupted) && ctx.Err() == nil) {
		if res == nil || ctx.Err() == nil {
			return Measure{}, fmt.Errorf("step at %s: %w", rateText(rate), err)
		}
		return Measure{}, ctx.Err()
	}
	if res == nil {
		return Measure{}, fmt.Errorf("step at %s: nothing measured", rateText(rate))
	}
	// Under a rate the threads end once the arrivals they took fall past
	// the limit, which at a low rate is well before it: the achieved rate
	// is over the step's time, not over the threads' span.
	span := res.TimeS
	if rate > 0 && !early {
		span = max(span, float64(seconds))
	}
	achieved, due := 0.0, 0.0
	if span > 0 {
		achieved, due = float64(res.Transactions)/span, float64(res.Arrivals)/span
	}
	m := Measure{Offered: rate, Achieved: achieved, Due: due, Events: res.Transactions, Errors: res.Errors.Total,
		ClientBound: res.Client != nil && res.Client.Bound, EndedEarly: early,
		Elapsed: time.Duration((res.TimeS + res.WarmupS) * float64(time.Second)),
		Span:    time.Duration(span * float64(time.Second))}
	// The backlog of whole intervals only: the short last one ends after
	// the threads stopped taking events, when arrivals still fall due.
	// The exact backlog at the end (arrivals due that no thread started)
	// is the last reading.
	mu.Lock()
	m.Backlog = append(append([]int64(nil), backlog...), res.Unstarted)
	mu.Unlock()
	if m.Latency, err = histogram.FromSnapshot(res.Histogram); err != nil {
		return Measure{}, fmt.Errorf("step at %s: read latency: %w", rateText(rate), err)
	}
	return m, nil
}

func rateText(rate float64) string {
	if rate == 0 {
		return "closed loop"
	}
	return fmt.Sprintf("%.1f/s", rate)
}
