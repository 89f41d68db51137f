package workload

import (
	"context"
	"database/sql"
	"sync/atomic"

	"github.com/shakedown/shakedown/internal/wire"
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
//
// Statements go over the lean protocol in package wire when the connection
// allows it, else through database/sql (TLS, compression).
//
// A Conn made by NewPerStatementConn holds no connection: each statement
// (and each Ping) opens one, runs, and closes it (--connect-mode=query).
type Conn struct {
	w      *wire.Conn
	db     *sql.Conn
	dial   func(ctx context.Context) (*Conn, error)
	hangUp func(*Conn)
	ps     bool
	counts *Counts
	buf    []byte
}

// NewWireConn wraps a fast-path connection. With ps set, Prepare makes
// server-side prepared statements; otherwise statements go as text with their
// arguments interpolated by the client.
func NewWireConn(w *wire.Conn, ps bool, counts *Counts) *Conn {
	return &Conn{w: w, ps: ps, counts: counts}
}

// NewSQLConn wraps a database/sql connection; its pool must be opened with
// interpolateParams so that text statements take one round trip.
func NewSQLConn(c *sql.Conn, ps bool, counts *Counts) *Conn {
	return &Conn{db: c, ps: ps, counts: counts}
}

// NewPerStatementConn returns a Conn that opens a connection with dial for
// every statement and gives it to hangUp after, which must close it.
// Statements from Prepare are prepared anew on each connection when that
// connection uses server-side prepared statements. dial's connections count
// into their own Counts; give them the thread's.
func NewPerStatementConn(dial func(ctx context.Context) (*Conn, error), hangUp func(*Conn)) *Conn {
	return &Conn{dial: dial, hangUp: hangUp, ps: true}
}

// PreparedStatements reports whether Prepare makes server-side statements.
func (c *Conn) PreparedStatements() bool { return c.ps }

// Close closes the connection.
func (c *Conn) Close() error {
	switch {
	case c.w != nil:
		return c.w.Close()
	case c.dial != nil:
		return nil
	}
	return c.db.Close()
}

// Stmt is a statement ready to run on its Conn.
type Stmt struct {
	c     *Conn
	query string
	w     *wire.Stmt
	ps    *sql.Stmt
}

// Prepare readies query; in prepared-statement mode the server parses it now.
func (c *Conn) Prepare(ctx context.Context, query string) (*Stmt, error) {
	s := &Stmt{c: c, query: query}
	if !c.ps || c.dial != nil {
		return s, nil
	}
	var err error
	if c.w != nil {
		s.w, err = c.w.Prepare(query)
	} else {
		s.ps, err = c.db.PrepareContext(ctx, query)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Query runs a statement that returns rows, reads and discards them, and
// counts a read.
func (s *Stmt) Query(ctx context.Context, args ...any) error {
	if s.w != nil {
		res, err := s.w.Exec(args...)
		return s.c.count(res, err)
	}
	if s.ps != nil {
		rows, err := s.ps.QueryContext(ctx, args...)
		return s.c.drain(rows, err)
	}
	if s.c.dial != nil {
		_, err := s.c.once(ctx, s.query, args, true, true)
		return err
	}
	return s.c.Query(ctx, s.query, args...)
}

// Exec runs a statement that returns no rows, counts it and returns the
// number of affected rows.
func (s *Stmt) Exec(ctx context.Context, args ...any) (int64, error) {
	if s.w != nil {
		res, err := s.w.Exec(args...)
		return res.Affected, s.c.count(res, err)
	}
	if s.ps != nil {
		res, err := s.ps.ExecContext(ctx, args...)
		return s.c.countSQL(res, err)
	}
	if s.c.dial != nil {
		return s.c.once(ctx, s.query, args, false, true)
	}
	return s.c.Exec(ctx, s.query, args...)
}

// Close releases the server-side statement, if any.
func (s *Stmt) Close() error {
	switch {
	case s.w != nil:
		return s.w.Close()
	case s.ps != nil:
		return s.ps.Close()
	}
	return nil
}

// Query runs query as text (never prepared), discards its rows and counts a
// read.
func (c *Conn) Query(ctx context.Context, query string, args ...any) error {
	if c.w != nil {
		res, err := c.text(query, args)
		return c.count(res, err)
	}
	if c.dial != nil {
		_, err := c.once(ctx, query, args, true, false)
		return err
	}
	rows, err := c.db.QueryContext(ctx, query, args...)
	return c.drain(rows, err)
}

// Exec runs query as text (never prepared) and counts it.
func (c *Conn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if c.w != nil {
		res, err := c.text(query, args)
		return res.Affected, c.count(res, err)
	}
	if c.dial != nil {
		return c.once(ctx, query, args, false, false)
	}
	res, err := c.db.ExecContext(ctx, query, args...)
	return c.countSQL(res, err)
}

func (c *Conn) text(query string, args []any) (wire.Result, error) {
	if len(args) == 0 {
		return c.w.Query(query)
	}
	var err error
	c.buf, err = wire.Interpolate(c.buf[:0], query, args)
	if err != nil {
		return wire.Result{}, err
	}
	return c.w.Query(string(c.buf))
}

// Ping checks the connection with COM_PING and counts an other statement.
func (c *Conn) Ping(ctx context.Context) error {
	var err error
	switch {
	case c.w != nil:
		err = c.w.Ping()
	case c.dial != nil:
		var in *Conn
		if in, err = c.dial(ctx); err != nil {
			return err
		}
		defer c.hangUp(in)
		return in.Ping(ctx)
	default:
		err = c.db.PingContext(ctx)
	}
	if err != nil {
		return err
	}
	c.counts.Others.Add(1)
	return nil
}

// CountOther counts one statement of the other kind that went outside
// Exec, Query and Ping, such as the COM_QUIT that Close sends.
func (c *Conn) CountOther() {
	if c.counts != nil {
		c.counts.Others.Add(1)
	}
}

// once runs one statement on a connection of its own: it connects, prepares
// the statement when asked and the connection uses server-side statements,
// runs it and disconnects. rows says whether it returns a result set.
func (c *Conn) once(ctx context.Context, query string, args []any, rows, prepare bool) (int64, error) {
	in, err := c.dial(ctx)
	if err != nil {
		return 0, err
	}
	defer c.hangUp(in)
	if prepare && in.ps {
		st, err := in.Prepare(ctx, query)
		if err != nil {
			return 0, err
		}
		defer st.Close()
		if rows {
			return 0, st.Query(ctx, args...)
		}
		return st.Exec(ctx, args...)
	}
	if rows {
		return 0, in.Query(ctx, query, args...)
	}
	return in.Exec(ctx, query, args...)
}

// Broken reports whether the connection has failed.
func (c *Conn) Broken() bool { return c.w != nil && c.w.Broken() }

func (c *Conn) count(res wire.Result, err error) error {
	if err != nil {
		return err
	}
	switch {
	case res.HasRows:
		c.counts.Reads.Add(1)
	case res.Affected > 0:
		c.counts.Writes.Add(1)
	default:
		c.counts.Others.Add(1)
	}
	return nil
}

func (c *Conn) drain(rows *sql.Rows, err error) error {
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
	c.counts.Reads.Add(1)
	return nil
}

func (c *Conn) countSQL(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
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
