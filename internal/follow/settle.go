package follow

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"
)

// settleBound is how long Settle waits for a follower to pass a position.
const settleBound = 2 * time.Minute

// Watcher reads a follower's saved row on the target: where it is and
// whether it is at work.
type Watcher struct {
	src, dst *sql.DB
	name     string
	mu       sync.Mutex // one hold at a time
}

// NewWatcher watches the follower of the target databases dbs (the
// databases as the target names them) through src and dst, pools the
// caller keeps open.
func NewWatcher(src, dst *sql.DB, dbs []string) *Watcher {
	pairs := make([]Pair, len(dbs))
	for i, d := range dbs {
		pairs[i] = Pair{Target: d}
	}
	return &Watcher{src: src, dst: dst, name: nameOf(pairs)}
}

// Saved is the follower's row now, or ErrNoPosition.
func (w *Watcher) Saved(ctx context.Context) (*Saved, error) {
	qctx, cancel := context.WithTimeout(ctx, queryBound)
	defer cancel()
	return Load(qctx, w.dst, w.name)
}

// Alive says a follower is at work on these databases now.
func (w *Watcher) Alive(ctx context.Context) bool {
	s, err := w.Saved(ctx)
	return err == nil && s.Alive(time.Now())
}

// Settle returns once the follower has applied the source's position as
// it is at the call: what verify waits for before it compares a chunk
// that differed again.
func (w *Watcher) Settle(ctx context.Context) error {
	qctx, cancel := context.WithTimeout(ctx, queryBound)
	p, err := SourcePosition(qctx, w.src)
	cancel()
	if err != nil {
		return err
	}
	_, err = w.Reach(ctx, p, settleBound)
	return err
}

// Reach waits up to bound for the follower to have applied p, and returns
// its row then. It fails at once when the follower stops.
func (w *Watcher) Reach(ctx context.Context, p Position, bound time.Duration) (*Saved, error) {
	deadline := time.Now().Add(bound)
	for {
		s, err := w.Saved(ctx)
		if err != nil {
			return nil, err
		}
		if s.Position.Reached(p) {
			return s, nil
		}
		if !s.Alive(time.Now()) {
			return s, fmt.Errorf("the follower is not running (its state: %s, last seen %s ago at %s); it has not reached %s",
				s.State, time.Since(s.Heartbeat).Truncate(time.Second), s.Position, p)
		}
		if time.Now().After(deadline) {
			return s, fmt.Errorf("the follower did not reach %s within %s (it is at %s, %.1f s behind)", p, bound, s.Position, s.LagSeconds)
		}
		select {
		case <-ctx.Done():
			return s, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
