package target

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"time"
)

// Connect opens a pool of up to size connections on t's first endpoint,
// in t's database, and checks within the connect timeout that the server
// answers: a server that accepts the connection and never answers would
// hold the handshake forever. A failure comes back explained. The caller
// closes the pool.
func (t *Target) Connect(ctx context.Context, size int) (*sql.DB, error) {
	return t.connect(ctx, size, false, "")
}

// ConnectServer is Connect without a default database, for what reads
// server-wide figures (watch, vars). A database the URL names must exist
// all the same, so that a typo is not silently ignored: verb names the
// command in that error.
func (t *Target) ConnectServer(ctx context.Context, size int, verb string) (*sql.DB, error) {
	return t.connect(ctx, size, true, verb)
}

// connect opens and checks the pool of Connect, in t's database, or
// serverWide that of ConnectServer.
func (t *Target) connect(ctx context.Context, size int, serverWide bool, verb string) (*sql.DB, error) {
	ep := t.Endpoints()[0]
	dbName := t.DB
	if serverWide {
		dbName = ""
	}
	db, err := t.open(ep, dbName, size)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, t.ConnectTimeout+time.Second)
	defer cancel()
	if err := db.PingContext(cctx); err != nil {
		db.Close()
		return nil, t.Explain(ep, err)
	}
	if serverWide {
		if _, err := t.Databases(cctx, db, nil, ServerWide, verb); err != nil {
			db.Close()
			return nil, err
		}
	}
	return db, nil
}

// ConnectSession opens a pool of up to size connections, at most size open,
// on t's first endpoint in database db ("" for none), with params set on
// every connection over t's own session variables; checks within the
// connect timeout that the server answers, and asks what it is. It returns
// the target the pool is on: t with that database and those variables (t
// itself is not changed). A server that does not answer comes back
// explained against t as given, or as ctx's error when ctx ended first.
// The caller closes the pool.
func (t *Target) ConnectSession(ctx context.Context, db string, size int, params map[string]string) (*sql.DB, *Target, Server, error) {
	tt := *t
	tt.Params = maps.Clone(t.Params)
	if tt.Params == nil {
		tt.Params = map[string]string{}
	}
	maps.Copy(tt.Params, params)
	tt.DB = db
	ep := tt.Endpoints()[0]
	pool, err := tt.Open(ep, size)
	if err != nil {
		return nil, nil, Server{}, err
	}
	pool.SetMaxOpenConns(size)
	pctx, cancel := context.WithTimeout(ctx, tt.ConnectTimeout+time.Second)
	defer cancel()
	if err := pool.PingContext(pctx); err != nil {
		pool.Close()
		if ctx.Err() != nil {
			return nil, nil, Server{}, ctx.Err()
		}
		return nil, nil, Server{}, t.Explain(ep, err)
	}
	srv, err := Detect(pctx, pool)
	if err != nil {
		pool.Close()
		return nil, nil, Server{}, fmt.Errorf("detect server: %w", err)
	}
	return pool, &tt, srv, nil
}
