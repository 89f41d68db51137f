// Package client is the client side of a load: one implementation of
// workload.Conn per transport (the lean protocol of package wire,
// database/sql, a new connection for every statement), the one Dialer that
// opens them for runs and for slap, DialWire, where every connection of
// package wire opens (the Dialer's, replay's, mirror's), the one Policy
// that says what a failed statement or connect means (retry, reconnect,
// give up), and the one IOPlan that says how they wait for replies
// (--client-io).
package client

import (
	"context"
	"database/sql"

	"github.com/shakedown/shakedown/internal/wire"
	"github.com/shakedown/shakedown/internal/workload"
)

// Wire is a connection over the lean protocol of package wire.
type Wire struct {
	w      *wire.Conn
	ps     bool
	counts *workload.Counts
}

// NewWire wraps a fast-path connection. With ps set, Prepare makes
// server-side prepared statements; otherwise statements go as text with
// their arguments interpolated by the client. Statements count into counts.
func NewWire(w *wire.Conn, ps bool, counts *workload.Counts) *Wire {
	return &Wire{w: w, ps: ps, counts: counts}
}

// Prepare readies query; in prepared-statement mode the server parses it now.
func (c *Wire) Prepare(ctx context.Context, query string) (workload.Stmt, error) {
	if !c.ps {
		return workload.TextStmt(c, query), nil
	}
	st, err := c.w.Prepare(query)
	if err != nil {
		return nil, err
	}
	return &wireStmt{c: c, st: st}, nil
}

// Query runs query as text and counts a read.
func (c *Wire) Query(ctx context.Context, query string, args ...any) error {
	res, err := c.text(query, args)
	return count(c.counts, res, err)
}

// Exec runs query as text and counts it.
func (c *Wire) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := c.text(query, args)
	return res.Affected, count(c.counts, res, err)
}

// text runs query with its arguments interpolated into the packet as the
// session escapes them (NO_BACKSLASH_ESCAPES doubles quotes).
func (c *Wire) text(query string, args []any) (wire.Result, error) {
	if len(args) == 0 {
		return c.w.Query(query)
	}
	return c.w.QueryArgs(query, args)
}

// Ping sends COM_PING and counts an other statement.
func (c *Wire) Ping(ctx context.Context) error {
	if err := c.w.Ping(); err != nil {
		return err
	}
	c.counts.Others.Add(1)
	return nil
}

// Broken reports whether the connection has failed.
func (c *Wire) Broken() bool { return c.w.Broken() }

// Close ends the session.
func (c *Wire) Close() error { return c.w.Close() }

type wireStmt struct {
	c  *Wire
	st *wire.Stmt
}

func (s *wireStmt) Query(ctx context.Context, args ...any) error {
	res, err := s.st.Exec(args...)
	return count(s.c.counts, res, err)
}

func (s *wireStmt) Exec(ctx context.Context, args ...any) (int64, error) {
	res, err := s.st.Exec(args...)
	return res.Affected, count(s.c.counts, res, err)
}

func (s *wireStmt) Close() error { return s.st.Close() }

// count classifies one statement that succeeded, as sysbench does.
func count(counts *workload.Counts, res wire.Result, err error) error {
	if err != nil {
		return err
	}
	counts.Count(res.HasRows, res.Affected)
	return nil
}

// SQL is a connection through database/sql, for what the lean protocol
// does not speak.
type SQL struct {
	c      *sql.Conn
	ps     bool
	counts *workload.Counts
}

// NewSQL wraps a database/sql connection; its pool must be opened with
// interpolateParams so that text statements take one round trip.
func NewSQL(c *sql.Conn, ps bool, counts *workload.Counts) *SQL {
	return &SQL{c: c, ps: ps, counts: counts}
}

// Prepare readies query; in prepared-statement mode the server parses it now.
func (c *SQL) Prepare(ctx context.Context, query string) (workload.Stmt, error) {
	if !c.ps {
		return workload.TextStmt(c, query), nil
	}
	st, err := c.c.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return &sqlStmt{c: c, st: st}, nil
}

// Query runs query as text, discards its rows and counts a read.
func (c *SQL) Query(ctx context.Context, query string, args ...any) error {
	rows, err := c.c.QueryContext(ctx, query, args...)
	return drain(c.counts, rows, err)
}

// Exec runs query as text and counts it.
func (c *SQL) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := c.c.ExecContext(ctx, query, args...)
	return countSQL(c.counts, res, err)
}

// Ping checks the connection and counts an other statement.
func (c *SQL) Ping(ctx context.Context) error {
	if err := c.c.PingContext(ctx); err != nil {
		return err
	}
	c.counts.Others.Add(1)
	return nil
}

// Broken is false: database/sql drops a failed connection by itself.
func (c *SQL) Broken() bool { return false }

// Close returns the connection to its pool, which closes it when the pool
// keeps no idle connections.
func (c *SQL) Close() error { return c.c.Close() }

type sqlStmt struct {
	c  *SQL
	st *sql.Stmt
}

func (s *sqlStmt) Query(ctx context.Context, args ...any) error {
	rows, err := s.st.QueryContext(ctx, args...)
	return drain(s.c.counts, rows, err)
}

func (s *sqlStmt) Exec(ctx context.Context, args ...any) (int64, error) {
	res, err := s.st.ExecContext(ctx, args...)
	return countSQL(s.c.counts, res, err)
}

func (s *sqlStmt) Close() error { return s.st.Close() }

func drain(counts *workload.Counts, rows *sql.Rows, err error) error {
	if err != nil {
		return err
	}
	for rows.Next() {
	}
	err = rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	counts.Count(true, 0)
	return nil
}

func countSQL(counts *workload.Counts, res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	counts.Count(false, n)
	return n, nil
}
