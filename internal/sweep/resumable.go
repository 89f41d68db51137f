package sweep

import (
	"context"

	"github.com/shakedown/shakedown/internal/store"
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
