// Package fakeconn is a fake server for tests of code that drives
// workload.Conn (the runner, workloads): every statement is answered by a
// function of the test, takes a set time on a clock the test controls, and
// the server can be taken down and brought back. It is not a MySQL server:
// tests of what the server says use a real one.
package fakeconn

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/clock"
	"github.com/shakedown/shakedown/internal/workload"
)

// Kind says how a statement was sent.
type Kind int

const (
	Query   Kind = iota // Conn.Query or Stmt.Query
	Exec                // Conn.Exec or Stmt.Exec
	Prepare             // Conn.Prepare (the server parses the statement)
	Ping                // Conn.Ping
)

// Statement is one statement the server received.
type Statement struct {
	Conn int // the connection's number, from 1 in order of connecting
	Kind Kind
	SQL  string
	Args []any
}

// Result is the server's answer to a statement that succeeded.
type Result struct {
	Rows     bool // a result set (counted as a read)
	Affected int64
}

// Server answers the statements of its connections. Set its fields before
// the first Connect; its methods are safe for concurrent use.
type Server struct {
	// Handle answers a statement; nil answers every one with a result set.
	// It may block until ctx ends, as a stalled server does.
	Handle func(ctx context.Context, st Statement) (Result, error)
	// Clock is where Latency passes; nil means the system clock.
	Clock clock.Clock
	// Latency is how long each statement, prepare and ping takes.
	Latency time.Duration
	// PS makes Prepare ask the server; otherwise statements run as text.
	PS bool

	mu       sync.Mutex
	down     bool
	conns    int
	open     map[*Conn]bool
	received int
}

// ServerError is an error the server sends, with its code.
func ServerError(code uint16, msg string) error {
	return &mysql.MySQLError{Number: code, Message: msg}
}

// ErrLost is what a connection whose server went away returns.
var ErrLost = fmt.Errorf("read from server: %w", io.ErrUnexpectedEOF)

// Connect opens a connection whose statements count into counts; it has
// the shape of runner.Config.Connect. While the server is down it fails as
// a refused connection does.
func (s *Server) Connect(ctx context.Context, _ int, counts *workload.Counts) (workload.Conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	}
	s.conns++
	c := &Conn{s: s, id: s.conns, counts: counts}
	if s.open == nil {
		s.open = map[*Conn]bool{}
	}
	s.open[c] = true
	return c, nil
}

// Down takes the server away: open connections fail their next statement
// and new ones are refused, until Up.
func (s *Server) Down() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = true
	for c := range s.open {
		c.lost = true
	}
}

// Up brings the server back.
func (s *Server) Up() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = false
}

// Connections is how many connections were opened so far.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

// Open is how many connections are open now.
func (s *Server) Open() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.open)
}

// Received is how many statements (prepares and pings included) the
// server received.
func (s *Server) Received() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.received
}

func (s *Server) clock() clock.Clock {
	if s.Clock == nil {
		return clock.Real{}
	}
	return s.Clock
}

// Conn is one connection to a Server. Like a real one, it is used by one
// goroutine.
type Conn struct {
	s      *Server
	id     int
	counts *workload.Counts
	lost   bool // guarded by s.mu
	broken bool
	closed bool
}

// do sends one statement and waits for its answer.
func (c *Conn) do(ctx context.Context, st Statement) (Result, error) {
	if c.broken {
		return Result{}, ErrLost
	}
	s := c.s
	s.mu.Lock()
	lost := c.lost
	s.received++
	s.mu.Unlock()
	if lost {
		c.broken = true
		return Result{}, ErrLost
	}
	if !clock.Sleep(ctx, s.clock(), s.Latency) {
		c.broken = true
		return Result{}, ErrLost // interrupted mid-statement: the connection is gone
	}
	if s.Handle == nil {
		return Result{Rows: st.Kind != Exec}, nil
	}
	st.Conn = c.id
	res, err := s.Handle(ctx, st)
	if err != nil && (ctx.Err() != nil || err == ErrLost) {
		c.broken = true
	}
	return res, err
}

func (c *Conn) count(res Result, err error) error {
	if err != nil {
		return err
	}
	c.counts.Count(res.Rows, res.Affected)
	return nil
}

// Prepare readies query: the server parses it when the Server has PS set.
func (c *Conn) Prepare(ctx context.Context, query string) (workload.Stmt, error) {
	if c.s.PS {
		if _, err := c.do(ctx, Statement{Kind: Prepare, SQL: query}); err != nil {
			return nil, err
		}
	}
	return workload.TextStmt(c, query), nil
}

// Query runs query and counts a read (or what the answer says).
func (c *Conn) Query(ctx context.Context, query string, args ...any) error {
	return c.count(c.do(ctx, Statement{Kind: Query, SQL: query, Args: args}))
}

// Exec runs query and counts it.
func (c *Conn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := c.do(ctx, Statement{Kind: Exec, SQL: query, Args: args})
	return res.Affected, c.count(res, err)
}

// Ping counts an other statement.
func (c *Conn) Ping(ctx context.Context) error {
	_, err := c.do(ctx, Statement{Kind: Ping})
	if err != nil {
		return err
	}
	c.counts.Others.Add(1)
	return nil
}

// Broken reports whether the connection was lost.
func (c *Conn) Broken() bool { return c.broken }

// Close closes the connection.
func (c *Conn) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	c.s.mu.Lock()
	delete(c.s.open, c)
	c.s.mu.Unlock()
	return nil
}
