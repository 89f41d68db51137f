package rehearse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/shakedown/shakedown/internal/bench"
	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/usage"
)

// ParsePlan reads a rehearsal plan (plan.ParseRehearsal) and checks its
// sweep's command lines against the engine's.
func ParsePlan(path string, src []byte, getenv func(string) string) (*plan.Rehearsal, error) {
	return plan.ParseRehearsal(path, src, getenv, bench.Grammar{})
}

// Stored reads the rehearsal that --resume names (an ID, or latest for
// the latest unfinished) and its plan from the store, and says on progress
// which it resumes. Nothing to resume is bad usage; where names the store
// in messages.
func Stored(ctx context.Context, getenv func(string) string, progress io.Writer, st *store.Store, resume, where string) (*plan.Rehearsal, int64, error) {
	var id int64
	if resume == "latest" {
		list, err := st.Rehearsals(ctx)
		if err != nil {
			return nil, 0, err
		}
		for _, r := range list {
			if r.Status != store.RehearsalDone {
				id = r.ID
				break
			}
		}
		if id == 0 {
			return nil, 0, usage.Errorf("rehearse --resume: %s holds no unfinished rehearsal", where)
		}
	} else if n, err := strconv.ParseInt(resume, 10, 64); err != nil || n < 1 {
		return nil, 0, usage.Errorf("rehearse --resume %q: want a rehearsal ID, or nothing for the latest unfinished", resume)
	} else {
		id = n
	}
	r, err := st.GetRehearsal(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, usage.Errorf("rehearse --resume: no rehearsal %d in %s", id, where)
	}
	if err != nil {
		return nil, 0, err
	}
	if r.Status == store.RehearsalDone {
		return nil, 0, usage.Errorf("rehearse --resume: rehearsal %d is done: nothing to resume (run the plan again for a new one)", id)
	}
	p, err := ParsePlan(r.PlanPath, []byte(r.Plan), getenv)
	if err != nil {
		return nil, 0, fmt.Errorf("rehearse --resume: the plan stored with rehearsal %d: %w", id, err)
	}
	fmt.Fprintf(progress, "resuming rehearsal %d %q of plan %s\n", id, r.Name, r.PlanPath)
	return p, id, nil
}
