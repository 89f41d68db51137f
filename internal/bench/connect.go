package bench

import (
	"context"
	"database/sql"
	"time"

	"github.com/shakedown/shakedown/internal/target"
)

// connect opens a pool per endpoint and checks that the first answers, so a
// wrong password or a missing database is one clear line before anything
// else happens.
func (j *Job) connect(ctx context.Context) (*sql.DB, target.Server, error) {
	tgt := j.Target
	ep := tgt.Endpoints()[0]
	db, err := tgt.Open(ep, j.spec.Threads)
	if err != nil {
		return nil, target.Server{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, tgt.ConnectTimeout+time.Second)
	defer cancel()
	conn, err := db.Conn(cctx)
	if err != nil {
		db.Close()
		return nil, target.Server{}, tgt.Explain(ep, err)
	}
	defer conn.Close()
	srv, err := target.Detect(cctx, conn)
	if err != nil {
		db.Close()
		return nil, target.Server{}, tgt.Explain(ep, err)
	}
	return db, srv, nil
}
