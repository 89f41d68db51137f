package target

import (
	"context"
	"database/sql"
	"time"
)

// Connect opens a pool of up to size connections on t's first endpoint,
// in t's database, and checks within the connect timeout that the server
// answers: a server that accepts the connection and never answers would
// hold the handshake forever. A failure comes back explained. The caller
// closes the pool.
func (t *Target) Connect(ctx context.Context, size int) (*sql.DB, error) {
	ep := t.Endpoints()[0]
	db, err := t.Open(ep, size)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, t.ConnectTimeout+time.Second)
	defer cancel()
	if err := db.PingContext(cctx); err != nil {
		db.Close()
		return nil, t.Explain(ep, err)
	}
	return db, nil
}
