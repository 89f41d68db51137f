package client

import (
	"context"

	"github.com/shakedown/shakedown/internal/workload"
)

// PerStatement holds no connection: each statement (and each Ping) opens
// one with dial, runs, and gives it to hangUp, which must close it
// (--connect-mode=query). dial's connections count into their own Counts;
// give them the thread's.
type PerStatement struct {
	dial   func(ctx context.Context) (workload.Conn, error)
	hangUp func(workload.Conn)
}

// NewPerStatement returns a connection that dials for every statement.
func NewPerStatement(dial func(ctx context.Context) (workload.Conn, error), hangUp func(workload.Conn)) *PerStatement {
	return &PerStatement{dial: dial, hangUp: hangUp}
}

// Prepare remembers query: it is prepared anew on each connection (when
// that connection uses server-side prepared statements).
func (c *PerStatement) Prepare(ctx context.Context, query string) (workload.Stmt, error) {
	return &onceStmt{c: c, query: query}, nil
}

// Query runs query as text on a connection of its own.
func (c *PerStatement) Query(ctx context.Context, query string, args ...any) error {
	_, err := c.once(ctx, func(in workload.Conn) (int64, error) {
		return 0, in.Query(ctx, query, args...)
	})
	return err
}

// Exec runs query as text on a connection of its own.
func (c *PerStatement) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	return c.once(ctx, func(in workload.Conn) (int64, error) {
		return in.Exec(ctx, query, args...)
	})
}

// Ping connects and pings.
func (c *PerStatement) Ping(ctx context.Context) error {
	_, err := c.once(ctx, func(in workload.Conn) (int64, error) {
		return 0, in.Ping(ctx)
	})
	return err
}

// Broken is false: there is no connection to break.
func (c *PerStatement) Broken() bool { return false }

// Close has nothing to close.
func (c *PerStatement) Close() error { return nil }

// once connects, runs fn and disconnects.
func (c *PerStatement) once(ctx context.Context, fn func(workload.Conn) (int64, error)) (int64, error) {
	in, err := c.dial(ctx)
	if err != nil {
		return 0, err
	}
	defer c.hangUp(in)
	return fn(in)
}

type onceStmt struct {
	c     *PerStatement
	query string
}

func (s *onceStmt) Query(ctx context.Context, args ...any) error {
	_, err := s.c.once(ctx, func(in workload.Conn) (int64, error) {
		st, err := in.Prepare(ctx, s.query)
		if err != nil {
			return 0, err
		}
		defer st.Close()
		return 0, st.Query(ctx, args...)
	})
	return err
}

func (s *onceStmt) Exec(ctx context.Context, args ...any) (int64, error) {
	return s.c.once(ctx, func(in workload.Conn) (int64, error) {
		st, err := in.Prepare(ctx, s.query)
		if err != nil {
			return 0, err
		}
		defer st.Close()
		return st.Exec(ctx, args...)
	})
}

func (s *onceStmt) Close() error { return nil }
