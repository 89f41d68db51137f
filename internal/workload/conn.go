package workload

import (
	"context"
	"sync/atomic"
)

// Counts are one thread's statement counters, classified as sysbench does: a
// statement that returns a result set is a read; otherwise a write when it
// affected rows, else other. The owning thread adds; anyone may read.
type Counts struct {
	Reads  atomic.Int64
	Writes atomic.Int64
	Others atomic.Int64
}

// Count counts one statement that succeeded: a read when it returned a
// result set, else a write when it affected rows, else other.
func (c *Counts) Count(rows bool, affected int64) {
	switch {
	case rows:
		c.Reads.Add(1)
	case affected > 0:
		c.Writes.Add(1)
	default:
		c.Others.Add(1)
	}
}

// Conn is one thread's connection as a workload sees it. It runs statements
// either as server-side prepared statements or as text, and counts every
// statement that succeeds into the thread's Counts. It is not safe for
// concurrent use.
//
// Package client has one implementation per transport (the lean protocol of
// package wire, database/sql, a new connection per statement); package
// client/fakeconn has a fake for tests.
type Conn interface {
	// Prepare readies query. A connection in text mode returns a
	// statement that runs as text; otherwise the server parses it now.
	Prepare(ctx context.Context, query string) (Stmt, error)
	// Query runs query as text (never prepared), discards its rows and
	// counts a read.
	Query(ctx context.Context, query string, args ...any) error
	// Exec runs query as text (never prepared), counts it and returns the
	// number of affected rows.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	// Ping checks the connection (COM_PING) and counts an other statement.
	Ping(ctx context.Context) error
	// Broken reports whether the connection has failed and must be
	// dropped.
	Broken() bool
	// Close ends the session; it counts nothing.
	Close() error
}

// Stmt is a statement ready to run on its Conn.
type Stmt interface {
	// Query runs a statement that returns rows, reads and discards them,
	// and counts a read.
	Query(ctx context.Context, args ...any) error
	// Exec runs a statement that returns no rows, counts it and returns
	// the number of affected rows.
	Exec(ctx context.Context, args ...any) (int64, error)
	// Close releases the server-side statement, if any.
	Close() error
}

// TextStmt is what Prepare returns on a connection in text mode: a
// statement that runs as text through c's Query and Exec and holds
// nothing on the server to release.
func TextStmt(c Conn, query string) Stmt { return &textStmt{c: c, query: query} }

type textStmt struct {
	c     Conn
	query string
}

func (s *textStmt) Query(ctx context.Context, args ...any) error {
	return s.c.Query(ctx, s.query, args...)
}

func (s *textStmt) Exec(ctx context.Context, args ...any) (int64, error) {
	return s.c.Exec(ctx, s.query, args...)
}

func (s *textStmt) Close() error { return nil }
