package monitor

import (
	"context"
	"database/sql"
	"sync/atomic"
)

// Source reads one kind of fact into a Reading. Sources of server facts
// query through q, which counts their statements; host sources ignore it.
// A Source is used by one sampler goroutine at a time.
type Source interface {
	Name() string
	Read(ctx context.Context, q *OwnQuerier, r *Reading) error
}

// OwnQuerier is the sampler's connection. It counts the statements it sends
// so that they can be taken out of the server's Questions: each is a plain
// text statement and counts once there.
type OwnQuerier struct {
	q Querier
	n atomic.Int64
}

// NewOwnQuerier wraps the sampler's connection.
func NewOwnQuerier(q Querier) *OwnQuerier { return &OwnQuerier{q: q} }

// QueryContext runs query and counts it.
func (o *OwnQuerier) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	o.n.Add(1)
	return o.q.QueryContext(ctx, query, args...)
}

// Statements is how many statements were sent so far.
func (o *OwnQuerier) Statements() int64 { return o.n.Load() }
