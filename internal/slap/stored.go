package slap

import (
	"context"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/store"
)

// Store records each concurrency level in st as a run of its own, its row
// built as run --store builds one (store.NewRun); it stops at the first
// level that cannot be stored.
func Store(ctx context.Context, st *store.Store, levels []*result.Result) error {
	for _, r := range levels {
		status, why := r.Status()
		if _, err := st.AddRun(ctx, store.NewRun(r, status, why, r.Workload, r.Threads, Command(r.Options), r.StartedAt, r.TimeS)); err != nil {
			return err
		}
	}
	return nil
}
