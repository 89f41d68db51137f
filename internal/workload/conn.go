package workload

import (
	"context"
	"database/sql"
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

// Conn is one thread's connection. It runs statements either as server-side
// prepared statements or as text, and counts every statement that succeeds.
// It is not safe for concurrent use.
type Conn struct {
	raw    *sql.Conn
	ps     bool
	counts *Counts
}

// NewConn wraps raw. With ps set, Prepare makes server-side prepared
// statements; otherwise statements go as text with their arguments
// interpolated by the client (the pool must be opened with interpolateParams).
func NewConn(raw *sql.Conn, ps bool, counts *Counts) *Conn {
	return &Conn{raw: raw, ps: ps, counts: counts}
}

// Raw returns the underlying connection.
func (c *Conn) Raw() *sql.Conn { return c.raw }

// PreparedStatements reports whether Prepare makes server-side statements.
func (c *Conn) PreparedStatements() bool { return c.ps }

// Stmt is a statement ready to run on its Conn.
type Stmt struct {
	c     *Conn
	query string
	ps    *sql.Stmt
}

// Prepare readies query; in prepared-statement mode the server parses it now.
func (c *Conn) Prepare(ctx context.Context, query string) (*Stmt, error) {
	s := &Stmt{c: c, query: query}
	if c.ps {
		ps, err := c.raw.PrepareContext(ctx, query)
		if err != nil {
			return nil, err
		}
		s.ps = ps
	}
	return s, nil
}

// Query runs a statement that returns rows, reads and discards them, and
// counts a read.
func (s *Stmt) Query(ctx context.Context, args ...any) error {
	var rows *sql.Rows
	var err error
	if s.ps != nil {
		rows, err = s.ps.QueryContext(ctx, args...)
	} else {
		rows, err = s.c.raw.QueryContext(ctx, s.query, args...)
	}
	if err != nil {
		return err
	}
	return s.c.drain(rows)
}

// Exec runs a statement that returns no rows, counts it and returns the
// number of affected rows.
func (s *Stmt) Exec(ctx context.Context, args ...any) (int64, error) {
	var res sql.Result
	var err error
	if s.ps != nil {
		res, err = s.ps.ExecContext(ctx, args...)
	} else {
		res, err = s.c.raw.ExecContext(ctx, s.query, args...)
	}
	if err != nil {
		return 0, err
	}
	return s.c.countExec(res)
}

// Close releases the server-side statement, if any.
func (s *Stmt) Close() error {
	if s.ps != nil {
		return s.ps.Close()
	}
	return nil
}

// Query runs query as text (never prepared), discards its rows and counts a
// read.
func (c *Conn) Query(ctx context.Context, query string, args ...any) error {
	rows, err := c.raw.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	return c.drain(rows)
}

// Exec runs query as text (never prepared) and counts it.
func (c *Conn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := c.raw.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return c.countExec(res)
}

func (c *Conn) drain(rows *sql.Rows) error {
	for rows.Next() {
	}
	err := rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	c.counts.Reads.Add(1)
	return nil
}

func (c *Conn) countExec(res sql.Result) (int64, error) {
	n, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	if n > 0 {
		c.counts.Writes.Add(1)
	} else {
		c.counts.Others.Add(1)
	}
	return n, nil
}
