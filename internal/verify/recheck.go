package verify

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// scheduleRecheck hands the job back to the workers after RecheckWait,
// without holding a worker meanwhile.
func (r *runner) scheduleRecheck(ctx context.Context, j *job) {
	r.pending.Add(1)
	go func() {
		timer := time.NewTimer(r.opts.RecheckWait)
		defer timer.Stop()
		select {
		case <-timer.C:
			r.requeue(ctx, j)
		case <-ctx.Done():
			r.abandon(j)
		}
	}()
}

// requeue hands a job scheduled for later back to the workers, or
// abandons it when ctx ends first.
func (r *runner) requeue(ctx context.Context, j *job) {
	select {
	case r.jobs <- j:
	case <-ctx.Done():
		r.abandon(j)
	}
}

// abandon gives up a job scheduled for later: its chunk will not finish,
// and it is no longer pending.
func (r *runner) abandon(j *job) {
	j.t.chunkAbandoned()
	r.pending.Done()
}

// recheck reads a chunk's differing rows again on both sides, each in a
// fresh snapshot, and keeps those that still differ.
func (t *tableJob) recheck(ctx context.Context, prev *chunkOutcome) (*chunkOutcome, error) {
	out := &chunkOutcome{rowsSource: prev.rowsSource, rowsTarget: prev.rowsTarget}
	if t.key.Index == "" {
		var err error
		out.diffs, err = t.keylessDiff(ctx, t.r.src.DB, t.r.dst.DB)
		return out, err
	}
	keys := make([]*keyTuple, 0, len(prev.diffs))
	for _, d := range prev.diffs {
		keys = append(keys, d.native)
	}
	var err error
	out.diffs, err = t.resolve(ctx, t.r.src.DB, t.r.dst.DB, keys)
	return out, err
}

// sameDiffs says two readings found the same differences.
func sameDiffs(a, b []*RowDiff) bool {
	if len(a) != len(b) {
		return false
	}
	sig := func(ds []*RowDiff) []string {
		out := make([]string, len(ds))
		for i, d := range ds {
			out[i] = fmt.Sprintf("%s|%s|%s|%d", d.id, d.Kind, strings.Join(d.Columns, ","), d.Count)
		}
		sort.Strings(out)
		return out
	}
	sa, sb := sig(a), sig(b)
	for i := range sa {
		if sa[i] != sb[i] {
			return false
		}
	}
	return true
}

// scheduleSettle hands the job back to the workers once Settle returns,
// without holding a worker while it waits. The goroutine ends when Settle
// returns, which it does when ctx ends; a failing Settle stops the run.
func (r *runner) scheduleSettle(ctx context.Context, j *job) {
	r.pending.Add(1)
	go func() {
		// With Align, the recheck itself waits for the follower, at the
		// source snapshot's position.
		if r.opts.Align == nil {
			if err := r.opts.Settle(ctx); err != nil {
				if ctx.Err() == nil {
					r.stopped.set(err)
					r.stop()
				}
				r.abandon(j)
				return
			}
		}
		r.requeue(ctx, j)
	}()
}

// runStop holds the first error that stopped a run's work early. Safe for
// concurrent use.
type runStop struct {
	mu    sync.Mutex
	first error
}

func (s *runStop) set(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first == nil {
		s.first = err
	}
}

func (s *runStop) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.first
}
