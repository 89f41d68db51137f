package sweep

import (
	"context"
	"errors"
	"strconv"

	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/usage"
)

// Resumable is the sweep "sweep --resume" continues when given no ID: the
// latest that was interrupted (or is still marked running), or that has
// failed steps; 0 when there is none.
func Resumable(ctx context.Context, st *store.Store) (int64, error) {
	sweeps, err := st.Sweeps(ctx)
	if err != nil {
		return 0, err
	}
	for _, s := range sweeps {
		if s.Status == store.SweepInterrupted || s.Status == store.SweepRunning {
			return s.ID, nil
		}
		if n, err := st.FailedSteps(ctx, s.ID); err == nil && n > 0 {
			return s.ID, nil
		}
	}
	return 0, nil
}

// IsResumeArg reports whether s is what --resume takes: a sweep ID or
// latest.
func IsResumeArg(s string) bool {
	if s == "latest" {
		return true
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return err == nil && n > 0
}

// FindResume reads the sweep that --resume names from st: an ID, or
// latest for the one Resumable finds. For a sweep that is done it counts
// the failed steps it will run again. Nothing to resume is bad usage;
// where names the store in messages.
func FindResume(ctx context.Context, st *store.Store, resume, where string) (sw *store.Sweep, failed int, err error) {
	var id int64
	if resume == "latest" {
		if id, err = Resumable(ctx, st); err != nil {
			return nil, 0, err
		}
		if id == 0 {
			return nil, 0, usage.Errorf("sweep --resume: %s holds no interrupted sweep and none with failed steps (see shakedown report --list)", where)
		}
	} else if id, err = strconv.ParseInt(resume, 10, 64); err != nil || id < 1 {
		return nil, 0, usage.Errorf("sweep --resume %q: want a sweep ID (see shakedown report --list) or nothing for the latest interrupted", resume)
	}
	sw, err = st.Sweep(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, usage.Errorf("sweep --resume: no sweep %d in %s (see shakedown report --list)", id, where)
	}
	if err != nil {
		return nil, 0, err
	}
	if sw.Status == store.SweepDone {
		n, err := st.FailedSteps(ctx, id)
		if err != nil {
			return nil, 0, err
		}
		if n == 0 {
			return nil, 0, usage.Errorf("sweep --resume: sweep %d is done and no step of it failed: nothing to resume", id)
		}
		failed = n
	}
	return sw, failed, nil
}
