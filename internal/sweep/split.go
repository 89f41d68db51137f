package sweep

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/segment"
	"github.com/shakedown/shakedown/internal/splitload"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/usage"
)

// readyTimeout bounds how long a runner waits for the first runner's
// data-ready mark beyond the time the timetable expects it: a first
// runner that died does not leave the others waiting for ever.
const readyTimeout = 30 * time.Minute

// markPoll is how often a runner looks for a data-ready mark.
const markPoll = 500 * time.Millisecond

// runSplit carries out this runner's share of every step of p, at the
// times of the timetable every runner computes alike (timetableOf), and
// stores each step as its part of the sweep the runners share: the first
// runner to arrive records the sweep, the others find it by the plan and
// the start time. Only the first runner prepares and cleans up; before a
// block of steps that needs new data, the others wait for its data-ready
// mark and start the block at the time the mark announces.
func runSplit(ctx context.Context, p *plan.Plan, envs []Env, opt Options) (*Summary, error) {
	sp := *opt.Split
	if err := CheckSplit(p, sp); err != nil {
		return nil, err
	}
	if opt.Resume != 0 {
		return nil, usage.Errorf("sweep --resume continues a sweep from one process: a split sweep cannot be resumed; run it again with a new --start-at")
	}
	now := opt.Now
	if now == nil {
		now = time.Now
	}
	m := marginsOf(p)
	rec := context.WithoutCancel(ctx)
	started := now()
	sum := &Summary{Steps: len(p.Steps())}
	s := &sweeper{p: p, pr: newProgress(opt.Progress, opt.Live, opt.Verbose, now, len(p.Steps()), time.Duration(p.TimeS+p.WarmupS)*time.Second+m.Connect),
		verbose: opt.Verbose, version: opt.Version, onInterval: opt.OnInterval, data: map[string][]*dataSet{}, prepErr: map[string]error{},
		homes: homes(p, envs), told: map[string]bool{}, said: map[string]bool{}, down: map[string]string{}, split: &sp}
	tt, err := timetableOf(p, s.dataKey, m)
	if err != nil {
		return nil, err
	}
	stopTicker := startTicker(s.pr, opt.Live)
	defer stopTicker()
	defer s.pr.close()

	sw, targets := newSweep(p, envs, opt, started)
	// The plan's text is what the runners run: every runner computes the
	// same key from it and the start time.
	load := &store.Split{Key: splitload.Key(store.SplitSweep, []string{string(p.Source)}, sp.StartAt), Kind: store.SplitSweep,
		Sequence: sp.Sequence.String(), Runners: sp.Sequence.Len(), StartAt: sp.StartAt, Description: p.Path}
	host := opt.Host
	if host == "" {
		host, _ = os.Hostname()
	}
	me := store.Runner{Host: host, RegisteredAt: now()}
	if err := splitload.Register(rec, opt.Store, load, sw, targets, sp, &me); err != nil {
		if load.SweepID == 0 {
			return nil, err
		}
		sum.SweepID = load.SweepID
		return sum, err
	}
	sum.SweepID = load.SweepID
	s.pr.Printf("runner %s of %d of sweep %d, first step at %s", sp.Label(), load.Runners, load.SweepID, sp.StartAt.UTC().Format(time.RFC3339))

	s.keep = splitload.NewKeeper(opt.Store, load, &me, store.UnsavedPath(opt.UnsavedDir, load.Key, me.Index))
	interrupted, runErr := s.runBlocks(ctx, opt.Store, load, &me, tt, m, now, sum)
	if lost := s.keep.Lost(); lost != nil {
		// The store is gone: what this runner measured is in the file.
		sum.Elapsed = now().Sub(started)
		sum.Interrupted = interrupted || ctx.Err() != nil
		if runErr != nil {
			return sum, fmt.Errorf("%w; then: %v", lost, runErr)
		}
		return sum, lost
	}
	// A runner ends as a run does, by the same rule.
	status, _ := result.StatusOf(nil, runErr, interrupted || ctx.Err() != nil)
	_ = opt.Store.RunnerFinished(rec, load.ID, me.Index, status, now())
	sum.Elapsed = now().Sub(started)
	sum.Interrupted = interrupted || ctx.Err() != nil
	sweepStatus := store.SweepDone
	switch {
	case runErr != nil:
		sweepStatus = store.SweepFailed
	case sum.Interrupted:
		sweepStatus = store.SweepInterrupted
	}
	// Every runner says how the sweep ended; the last one to end is the
	// one the store keeps.
	if err := opt.Store.FinishSweep(rec, load.SweepID, sweepStatus, now()); err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil {
		return sum, runErr
	}
	if sum.Interrupted {
		return sum, ErrInterrupted
	}
	return sum, nil
}

// CheckSplit says whether p can be split as sp, before anything connects:
// the runners need a common start and a timetable, and a number of
// repeats they all know beforehand.
func CheckSplit(p *plan.Plan, sp segment.Split) error {
	switch {
	case !sp.On:
		return nil
	case p.AutoRepeats:
		return usage.Errorf("%s: repeats: auto decides the next round from the results so far, which split runners cannot agree on without waiting for each other: give a number of repeats to split the sweep", p.Path)
	case sp.StartAt.IsZero():
		return usage.Errorf("sweep --segment needs --start-at, the same for every runner, e.g. --start-at %s",
			time.Now().UTC().Add(time.Minute).Truncate(time.Minute).Format(time.RFC3339))
	}
	return CheckTimetable(p)
}

// runBlocks runs the timetable's blocks.
func (s *sweeper) runBlocks(ctx context.Context, st *store.Store, load *store.Split, me *store.Runner, tt *timetable, m margins,
	now func() time.Time, sum *Summary) (interrupted bool, err error) {
	rec := context.WithoutCancel(ctx)
	clk := systemClock{}
	first := s.split.First()
	anchor := s.split.StartAt
	var free time.Time // when the previous block has ended and settled
	for bi, b := range tt.Blocks {
		var blockErr error
		if b.Prepare != nil {
			name := fmt.Sprintf("data-ready:%s:%s:%d", b.Prepare.Target.Name, b.Prepare.Workload.Label(), bi)
			if first {
				// Prepare once the others are done with the data of the
				// block before (and not before the sweep's start).
				if err := waitUntil(ctx, clk, later(free, s.split.StartAt)); err != nil {
					return true, nil
				}
				mark := store.Mark{Name: name}
				if perr := s.ensureData(ctx, *b.Prepare); perr != nil {
					if ctx.Err() != nil {
						return true, nil
					}
					mark.Error, blockErr = perr.Error(), perr
				}
				mark.ResumeAt = resumeAt(now(), m)
				if err := st.SetMark(rec, load.ID, mark); err != nil {
					return false, err
				}
				anchor = mark.ResumeAt
			} else {
				s.pr.startStep(*b.Prepare, "waiting for the first runner's data")
				mark, err := waitMark(ctx, st, load.ID, name, later(free, s.split.StartAt).Add(readyTimeout))
				if err != nil {
					if ctx.Err() != nil {
						return true, nil
					}
					return false, err
				}
				if mark.Error != "" {
					blockErr = fmt.Errorf("the first runner could not prepare the data: %s", mark.Error)
				}
				anchor = mark.ResumeAt
			}
		}
		for _, slot := range b.Slots {
			at := slot.At(anchor)
			if err := waitUntil(ctx, clk, at.Connect); err != nil {
				return true, nil
			}
			var run store.Run
			if late := lateBy(now(), at.Load, time.Second); blockErr == nil && late > 0 {
				run = store.Run{Step: slot.Step.Index, Target: slot.Step.Target.Name, Role: string(slot.Step.Target.Role),
					Workload: slot.Step.Workload.Label(), Threads: slot.Step.Threads, Repeat: slot.Step.Repeat, StartedAt: now(),
					Status: store.RunFailed, Error: fmt.Sprintf("this runner reached the step %s after the others started it", late.Round(time.Millisecond))}
			} else if blockErr != nil {
				run = store.Run{Step: slot.Step.Index, Target: slot.Step.Target.Name, Role: string(slot.Step.Target.Role),
					Workload: slot.Step.Workload.Label(), Threads: slot.Step.Threads, Repeat: slot.Step.Repeat, StartedAt: now(),
					Status: store.RunFailed, Error: blockErr.Error()}
			} else {
				s.loadAt = at.Load
				run = s.step(ctx, slot.Step, now)
				if run.Result != nil && run.Result.Segment != nil {
					_ = st.RunnerStarted(rec, load.ID, s.split.Index(), run.Result.Segment.Started)
				}
			}
			run.SweepID = load.SweepID
			run.Part = &store.Part{SplitID: load.ID, Index: s.split.Index(), Intervals: s.intervals}
			s.intervals = nil
			// Once the store is lost the steps go to the runner's own
			// file, as long as it needs no word from the others.
			if err := s.keep.Keep(rec, &run, func(line string) { s.pr.Printf("%s", line) }); err != nil {
				return false, err
			}
			switch run.Status {
			case store.RunOK:
				sum.OK++
				s.pr.finishStep(slot.Step, run.Status, fmt.Sprintf("this runner %.1f qps", run.Result.QPS))
			case store.RunFailed:
				sum.Failed++
				s.pr.finishStep(slot.Step, run.Status, "FAILED: "+run.Error)
			default:
				s.pr.finishStep(slot.Step, run.Status, "interrupted; kept as interrupted")
				return true, nil
			}
		}
		free = anchor.Add(b.Done)
	}
	if first && tt.Cleanup {
		if err := waitUntil(ctx, clk, free); err != nil {
			return true, nil
		}
		s.cleanupAll(ctx)
	}
	return false, nil
}

// waitMark polls the store for a mark until it is there, ctx ends or
// deadline passes.
func waitMark(ctx context.Context, st *store.Store, splitID int64, name string, deadline time.Time) (store.Mark, error) {
	t := time.NewTicker(markPoll)
	defer t.Stop()
	for {
		m, ok, err := st.GetMark(ctx, splitID, name)
		switch {
		case err != nil:
			return store.Mark{}, err
		case ok:
			return m, nil
		case time.Now().After(deadline):
			return store.Mark{}, fmt.Errorf("no word from the first runner on its data (%s) by %s: is it running?", name, deadline.UTC().Format(time.RFC3339))
		}
		select {
		case <-ctx.Done():
			return store.Mark{}, ctx.Err()
		case <-t.C:
		}
	}
}

// later is the later of two times.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
