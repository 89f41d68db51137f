// Package sweep carries out a plan: every target at every workload, thread
// level and repeat, each step one engine run with the same meaning as the
// same "shakedown run" command line, every result stored as soon as it is
// known.
//
// Order: by default the targets take turns at each workload, thread level
// and repeat, the order turned round at each repeat and level
// (counterbalanced), so that drift hits all alike and no target always
// runs first. Repeats: auto runs three of each, then one more at a time
// for the cells still inconclusive (internal/stats), up to max_repeats.
// Data: with prepare, each target's data is made before the first step
// that needs it; targets that are one server and database (an A/A pair)
// share it; workloads of one implementation with the same options share
// one data set (as the sysbench OLTP scripts do); otherwise a workload's
// prepare drops and makes its own tables only (workload.Tabler), and the
// data of an earlier workload stays beside it unless they share tables,
// which is said. Every table dropped or created is said.
// A failed step is stored as failed and the sweep goes on; a target that
// stops answering is waited for (Options.DownWait), then its remaining
// steps are skipped, said once. An interrupted sweep (ctx cancelled) keeps
// every finished step, stores the step it broke off as interrupted, and
// skips cleanup. A resume (Options.Resume) runs what is not stored as ok,
// and never changes the data under a thread level already begun: it keeps
// the data, or makes it again and starts the level again (resume.go).
package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/bench"
	"github.com/shakedown/shakedown/internal/clock"
	"github.com/shakedown/shakedown/internal/plan"
	prog "github.com/shakedown/shakedown/internal/progress"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/runner"
	"github.com/shakedown/shakedown/internal/segment"
	"github.com/shakedown/shakedown/internal/stats"
	"github.com/shakedown/shakedown/internal/store"
)

// ErrInterrupted means the sweep was stopped before its last step; what
// finished is in the store.
var ErrInterrupted = bench.ErrInterrupted

// Options adjust a sweep.
type Options struct {
	// Store receives the sweep and every step. Required.
	Store *store.Store
	// Progress receives the progress line and messages; nil shows nothing.
	Progress io.Writer
	// Live means Progress is a terminal: one line is redrawn in place.
	Live bool
	// Verbose adds a line per second of every run.
	Verbose bool
	// Host is the client host name recorded with the sweep.
	Host string
	// Version is shakedown's version, recorded with the sweep.
	Version string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// AfterStep, when set, is called after each step has been stored.
	AfterStep func(store.Run)
	// OnInterval, when set, is called after each second of a step's run,
	// from the runner's reporting goroutine; it must not block for long.
	OnInterval func(plan.Step, runner.Interval)
	// MoreSteps, when set, is told how many steps repeats: auto adds
	// each time it adds some, before they run, so that a caller's own
	// estimate of the time left grows with the sweep's.
	MoreSteps func(n int)
	// Resume is the ID of a stored sweep of the same plan to continue;
	// 0 starts a new sweep.
	Resume int64
	// Split, when set, makes this process one runner of a sweep split
	// over several (see RunSplit); its StartAt is the sweep's start.
	Split *segment.Split
	// DownWait is how long a target that stops answering is waited for
	// before its remaining steps are skipped; 0 means DefaultDownWait.
	DownWait time.Duration
	// UnsavedDir is where a runner of a split sweep that loses its store
	// keeps the steps the store did not take (store.UnsavedPath), for
	// report --import; it goes on measuring.
	UnsavedDir string
}

func (o Options) moreSteps(n int) {
	if o.MoreSteps != nil {
		o.MoreSteps(n)
	}
}

// Summary says how a sweep went.
type Summary struct {
	SweepID     int64
	Steps       int // in the plan, with the repeats auto added
	OK          int
	Failed      int
	Interrupted bool
	Elapsed     time.Duration

	// cleanup drops the prepared data once the plan's capacity search
	// has run on it (CleanUp); nil when there is nothing left to drop.
	cleanup func(context.Context)
}

// CleanUp drops the data the sweep prepared, where the plan says
// cleanup: true and Run left it for the capacity search that follows the
// steps; it does nothing otherwise. Call it once the search has ended,
// unless it was interrupted: a resumed sweep searches on that data.
func (sum *Summary) CleanUp(ctx context.Context) {
	if sum != nil && sum.cleanup != nil {
		sum.cleanup(ctx)
		sum.cleanup = nil
	}
}

// Run carries out p against the targets envs describes (from Check). It
// returns the summary also on error; with ctx cancelled the error is
// ErrInterrupted. With opt.Resume set it continues that stored sweep
// instead of starting one: the steps whose last run is ok are not run
// again; failed, skipped and interrupted ones are.
func Run(ctx context.Context, p *plan.Plan, envs []Env, opt Options) (*Summary, error) {
	if opt.Split != nil && opt.Split.On {
		return runSplit(ctx, p, envs, opt)
	}
	now := opt.Now
	if now == nil {
		now = time.Now
	}
	// Recording must outlive an interrupt: Ctrl-C keeps what finished.
	rec := context.WithoutCancel(ctx)
	first := p.Steps()
	sum := &Summary{Steps: len(first)}
	started := now()

	s := &sweeper{p: p, verbose: opt.Verbose, version: opt.Version, onInterval: opt.OnInterval, data: map[string][]*dataSet{}, prepErr: map[string]error{},
		homes: homes(p, envs), told: map[string]bool{}, said: map[string]bool{}, st: opt.Store, down: map[string]string{}, downWait: opt.DownWait}
	if s.downWait <= 0 {
		s.downWait = DefaultDownWait
	}
	pr := newProgress(opt.Progress, opt.Live, opt.Verbose, now, len(first), StepTime(p))
	s.pr = pr
	stopTicker := startTicker(pr, opt.Live)
	defer stopTicker()

	// done are the steps whose last run is ok: a resume runs the others
	// (interrupted, failed, not run) again.
	done := map[string]bool{}
	last := len(first)
	var id int64
	var stored *store.SweepData
	if opt.Resume != 0 {
		d, err := opt.Store.Load(rec, opt.Resume)
		if err != nil {
			return sum, err
		}
		stored = d
		for _, run := range d.Runs {
			last = max(last, run.Step)
		}
		for _, run := range store.Latest(d.Runs) {
			if run.Status == store.RunOK {
				done[stepKey(run.Target, run.Workload, run.Threads, run.Repeat)] = true
			}
		}
		if err := opt.Store.ReopenSweep(rec, opt.Resume); err != nil {
			return sum, err
		}
		id, sum.Steps = opt.Resume, max(d.Sweep.Steps, len(first))
	} else {
		sw, targets := newSweep(p, envs, opt, started)
		var err error
		if id, err = opt.Store.CreateSweep(rec, sw, targets); err != nil {
			return sum, err
		}
	}
	sum.SweepID, s.id = id, id
	for _, e := range envs {
		if e.Down != "" {
			s.down[e.Target.Name] = e.Down
		}
	}
	var todo []plan.Step
	pending := func() {
		todo = todo[:0]
		for _, st := range first {
			if !done[stepKey(st.Target.Name, st.Workload.Label(), st.Threads, st.Repeat)] {
				todo = append(todo, st)
			}
		}
	}
	pending()
	if stored != nil {
		before := len(done)
		pr.Printf("resuming sweep %d: %d of %d steps stored as ok", id, before, sum.Steps)
		todo = append(todo, s.later(stored, len(first), done)...)
		if p.Prepare && opt.Split == nil {
			s.resumeData(ctx, stored, todo, done)
		}
		pending()
		todo = append(todo, s.later(stored, len(first), done)...)
		what := "failed, interrupted or not run"
		if n := before - len(done); n > 0 {
			what += fmt.Sprintf(", and %d stored as ok of levels started again on fresh data", n)
		}
		if len(todo) == 0 && p.Capacity != nil {
			pr.Printf("resuming sweep %d: every step is stored as ok; the capacity search runs again", id)
		} else {
			pr.Printf("resuming sweep %d: %d steps to run (%s)", id, len(todo), what)
		}
		resumed := fmt.Sprintf("resumed: %d of %d steps stored as ok (%d of them to run again on fresh data), %d to run",
			before, sum.Steps, before-len(done), len(todo))
		if why := unbalanced(todo, p.Targets); why != "" {
			pr.Printf("resuming sweep %d: %s", id, why)
			resumed += "; " + why
		}
		s.note(firstIndex(todo), store.NoteResumed, nil, nil, resumed)
		sum.OK = len(done)
	}
	pr.setTotal(sum.Steps, len(done))
	if p.AutoRepeats {
		pr.Printf("repeats: auto: %d repeats of every step, then one more at a time for the workloads and thread levels still inconclusive, up to %d",
			p.Repeats, p.MaxRepeats)
	}
	s.sayDown(todo)

	interrupted := false
	var runErr error
	runSteps := func(steps []plan.Step) {
		for _, step := range steps {
			if ctx.Err() != nil {
				interrupted = true
				return
			}
			if why, ok := s.down[step.Target.Name]; ok {
				// Said once when the target was found down; stored as
				// failed, so that a resume runs it again.
				run := s.skipped(step, why, now)
				run.SweepID = id
				if _, err := opt.Store.AddRun(rec, &run); err != nil {
					runErr = err
					return
				}
				sum.Failed++
				pr.skipStep()
				continue
			}
			if sum.OK+sum.Failed > 0 && p.CooldownS > 0 {
				pr.startStep(step, "cooling down")
				if !clock.Sleep(ctx, clock.Real{}, time.Duration(p.CooldownS)*time.Second) {
					interrupted = true
					return
				}
			}
			run := s.step(ctx, step, now)
			run.SweepID = id
			if _, err := opt.Store.AddRun(rec, &run); err != nil {
				runErr = err
				return
			}
			msg := run.Status
			switch run.Status {
			case store.RunOK:
				sum.OK++
				msg = fmt.Sprintf("%.1f qps", run.Result.QPS)
				if st := steadiness(run, threshold(p)); st.Unsteady {
					msg += " (unsteady: " + st.Why + ")"
				}
			case store.RunFailed:
				sum.Failed++
				msg = "FAILED: " + run.Error
			case store.RunInterrupted:
				msg = "interrupted; kept as interrupted"
			}
			pr.finishStep(step, run.Status, msg)
			if run.Status == store.RunFailed && s.split == nil {
				s.probe(ctx, step)
			}
			if opt.AfterStep != nil {
				opt.AfterStep(run)
			}
			if run.Status == store.RunInterrupted {
				interrupted = true
				return
			}
		}
	}
	runSteps(todo)
	for p.AutoRepeats && !interrupted && runErr == nil {
		more, err := s.moreRepeats(rec, opt.Store, id, &last)
		if err != nil {
			runErr = err
			break
		}
		if len(more) == 0 {
			break
		}
		sum.Steps += len(more)
		pr.addSteps(len(more))
		opt.moreSteps(len(more))
		_ = opt.Store.SetSweepSteps(rec, id, sum.Steps)
		runSteps(more)
	}
	if runErr != nil {
		pr.close()
		_ = opt.Store.FinishSweep(rec, id, store.SweepFailed, now())
		sum.Elapsed = now().Sub(started)
		return sum, runErr
	}
	if !interrupted && p.Prepare && p.Cleanup {
		if p.Capacity != nil {
			sum.cleanup = s.cleanupAll // the search needs the data (CleanUp)
		} else {
			s.cleanupAll(ctx)
		}
	}
	pr.close()
	sum.Interrupted = interrupted || ctx.Err() != nil
	status := store.SweepDone
	if sum.Interrupted {
		status = store.SweepInterrupted
	}
	sum.Elapsed = now().Sub(started)
	if err := opt.Store.FinishSweep(rec, id, status, now()); err != nil {
		return sum, err
	}
	if sum.Interrupted {
		return sum, ErrInterrupted
	}
	return sum, nil
}

// newSweep is the sweep p records, and its targets.
func newSweep(p *plan.Plan, envs []Env, opt Options, started time.Time) (*store.Sweep, []store.Target) {
	sw := &store.Sweep{
		Name: p.Name, PlanPath: p.Path, Plan: string(p.Source), StartedAt: started, Steps: len(p.Steps()),
		ClientHost: opt.Host, Tool: "shakedown " + opt.Version,
		Settings: store.Settings{TimeS: p.TimeS, Events: p.Events, WarmupS: p.WarmupS, Repeats: p.Repeats,
			CooldownS: p.CooldownS, Order: string(p.Order), Threads: p.Threads,
			AutoRepeats: p.AutoRepeats, MaxRepeats: p.MaxRepeats, NoiseThreshold: p.NoiseThreshold},
	}
	for _, w := range p.Workloads {
		sw.Settings.Workloads = append(sw.Settings.Workloads, w.Label())
	}
	var targets []store.Target
	for _, e := range envs {
		targets = append(targets, store.Target{Name: e.Target.Name, Role: string(e.Target.Role), URL: e.Target.Target.Redacted(),
			Version: e.Server.Version, Flavour: string(e.Server.Flavour), Variables: e.Variables})
	}
	return sw, targets
}

func stepKey(target, workload string, threads, repeat int) string {
	return fmt.Sprint(target, "\x00", workload, "\x00", threads, "\x00", repeat)
}

// steadiness judges a run's per-second QPS.
func steadiness(run store.Run, threshold float64) stats.Steadiness {
	if run.Result == nil {
		return stats.Steadiness{}
	}
	per := make([]float64, len(run.Result.Intervals))
	for i, iv := range run.Result.Intervals {
		per[i] = iv.QPS
	}
	return stats.Steady(per, threshold)
}

// startTicker redraws the live line every second so that the elapsed time
// moves during warm-up and cool-down. The returned func stops it and
// waits for it.
func startTicker(pr *progress, live bool) func() {
	if !live {
		return func() {}
	}
	return prog.Every(context.Background(), time.Second, pr.tick)
}

// step runs one step and returns it as a run to store.
func (s *sweeper) step(ctx context.Context, step plan.Step, now func() time.Time) store.Run {
	spec := s.p.RunSpec(step.Workload, step.Threads)
	run := store.Run{
		Step: step.Index, Target: step.Target.Name, Role: string(step.Target.Role), Workload: step.Workload.Label(),
		Threads: step.Threads, Repeat: step.Repeat, Command: strings.Join(spec.Args(), " "), StartedAt: now(),
	}
	// A step that fails before its run is stored with the status
	// result.StatusOf gives too.
	finish := func(status string, err error) store.Run {
		run.Status = status
		if err != nil {
			run.Error = err.Error()
		}
		run.WallS = now().Sub(run.StartedAt).Seconds()
		return run
	}
	if s.p.Prepare && s.split == nil {
		if err := s.ensureData(ctx, step); err != nil {
			if ctx.Err() != nil {
				return finish(result.StatusOf(nil, ErrInterrupted, true))
			}
			return finish(result.StatusOf(nil, err, false))
		}
	}
	phase := "connecting"
	if s.p.WarmupS > 0 {
		phase = "warming up"
	}
	s.pr.startStep(step, phase)
	run.StartedAt = now()
	j, err := job("run", spec, step.Target)
	if err != nil {
		return finish(result.StatusOf(nil, err, false))
	}
	var ivs *[]result.IntervalHDR
	if s.split != nil {
		// One runner of the step: its share, started with the others'.
		sp := *s.split
		sp.StartAt = s.loadAt
		if err := j.SetSplit(sp); err != nil {
			return finish(result.StatusOf(nil, err, false))
		}
		ivs = &s.intervals
		s.intervals = nil
	}
	res, err := j.Run(ctx, bench.RunOptions{Version: s.version, Intervals: ivs, OnInterval: func(iv runner.Interval) {
		s.pr.interval(iv)
		if s.onInterval != nil {
			s.onInterval(step, iv)
		}
	}})
	run.Result = res
	run.Degraded = res != nil && res.Degraded
	if err == nil && ctx.Err() != nil {
		// Cancelled while running, but the runner saw its threads end
		// before it saw the cancel: the run did not get its full time.
		err = ErrInterrupted
		res.Interrupted = true
	}
	status, why := result.StatusOf(res, err, errors.Is(err, bench.ErrInterrupted) || ctx.Err() != nil)
	if err != nil && status == store.RunFailed && res != nil && res.Error == "" {
		res.Error = err.Error()
	}
	return finish(status, why)
}

// lineWriter passes engine output (prepare progress) to the progress as
// whole lines.
type lineWriter struct {
	pr  *progress
	buf []byte
}

func (l *lineWriter) Write(b []byte) (int, error) {
	l.buf = append(l.buf, b...)
	for {
		i := strings.IndexByte(string(l.buf), '\n')
		if i < 0 {
			return len(b), nil
		}
		if line := strings.TrimRight(string(l.buf[:i]), "\r"); line != "" {
			l.pr.Printf("  %s", line)
		}
		l.buf = l.buf[i+1:]
	}
}

// unbalanced says, for a resume, when the steps left are those of some
// targets only: they then run back to back, after the runs of the others
// they are compared with, and the counterbalanced order no longer spreads
// drift over all targets alike. "" when every target has steps left, or
// there is one target.
func unbalanced(todo []plan.Step, targets []*plan.Target) string {
	left := map[string]bool{}
	for _, st := range todo {
		left[st.Target.Name] = true
	}
	if len(targets) < 2 || len(left) == 0 || len(left) == len(targets) {
		return ""
	}
	var names []string
	for _, t := range targets {
		if left[t.Name] {
			names = append(names, t.Name)
		}
	}
	return fmt.Sprintf("the steps left are %s's only: they run back to back, after the other targets' runs they are compared with, "+
		"so the counterbalanced order no longer spreads drift over all targets alike (run the sweep afresh to compare them side by side)",
		strings.Join(names, " and "))
}
