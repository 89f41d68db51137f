// Package wire is a lean MySQL client protocol for the per-query hot path:
// the connection phase (handshake, TLS, authentication plugins, session
// set-up), COM_QUERY, COM_STMT_PREPARE/EXECUTE/CLOSE/RESET,
// COM_RESET_CONNECTION and reading (and discarding) result sets, on a
// socket used either through Go's poller or with blocking system calls.
//
// Every read and write is bounded: the connection phase by the context
// given to Dial and the configuration's connect timeout, and everything
// after by that context (cancelling it interrupts whatever the connection
// waits for) and, when set, the configuration's read and write timeouts.
//
// A Conn is used by one goroutine. Interrupt may be called from any.
package wire

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

const (
	comQuit        = 0x01
	comQuery       = 0x03
	comPing        = 0x0e
	comStmtPrepare = 0x16
	comStmtExecute = 0x17
	comStmtClose   = 0x19
	comStmtReset   = 0x1a

	statusMoreResults        = 0x0008
	statusCursorExists       = 0x0040
	statusNoBackslashEscapes = 0x0200

	maxPayload = 1<<24 - 1
)

// ErrUnsupported means the connection asks for something this package does
// not speak; callers may use database/sql instead. Since TLS is spoken here,
// Dial no longer returns it for any configuration; it is kept for callers
// that test for it.
var ErrUnsupported = errors.New("wire: connection options not supported by the fast path")

// ErrCompression refuses protocol compression, which this package does not
// speak: measuring through another client would compare clients as well
// as servers.
var ErrCompression = errors.New("compression is not supported; remove ?compress=true from the target URL")

// Conn is one connection.
type Conn struct {
	s    *sock
	tc   *tls.Conn // set when the connection was upgraded to TLS
	caps uint32
	ext  uint32
	// status is the server status of the last OK or EOF packet; it says
	// whether the session has NO_BACKSLASH_ESCAPES.
	status uint16
	rbuf   []byte
	rpos   int
	rend   int
	wbuf   []byte
	seq    byte
	stop   func() bool
	dead   error
	pkt    []byte // a payload that did not fit in rbuf
	loc    *time.Location
	// noInterp is set when the connection character set lets a
	// backslash be the second byte of a character, which makes escaping
	// strings on the client unsafe.
	noInterp string
	version  string
	connID   uint32
	// srvCaps are the capability flags the server's greeting offered.
	srvCaps uint32
	srvExt  uint32
	// relayTo, during Relay, receives every packet read, unchanged.
	relayTo io.Writer
	// The statement id and parameter count of the last prepare relayed.
	prepID     uint32
	prepParams int

	// What SendQuery or SendExec sent, for ReadReply: the command and,
	// for an execution, its statement.
	pending     byte
	pendingStmt *Stmt
	// ReadReply's reusable buffers: the columns of the result set, a
	// row's values, and the text of a binary row's values.
	cols    []Column
	vals    [][]byte
	scratch []byte
}

// Result is what a statement returned.
type Result struct {
	// HasRows is set when the statement returned a result set.
	HasRows bool
	Rows    int64
	// Affected is the number of affected rows (statements without a result set).
	Affected int64
	InsertID int64
	// Warnings is the warning count the reply ended with (ReadReply
	// only: the other calls leave it 0).
	Warnings int
}

// Options tune a connection.
type Options struct {
	// Blocking selects blocking system calls instead of Go's poller; see
	// the sock type. Use it only with a few threads per core.
	Blocking bool
	// Looped waits through the I/O loop of the task the context given to
	// Dial carries (package ioloop); without one, it waits with poll(2).
	Looped bool
	// As, when set, makes the connection speak for another client (a
	// proxy's): it asks the server for that client's capability flags and
	// collation instead of its own, so that the server's replies can be
	// relayed to the client unchanged (see Relay). The configuration's
	// charset, collation and other session parameters are then not set.
	As *Handshake
}

// Close ends the session (COM_QUIT) and closes the socket. A connection
// that failed or was interrupted is closed without a word to the server.
func (c *Conn) Close() error {
	var err error
	if c.dead == nil && !c.s.interrupted.Load() {
		b := c.startCommand(comQuit)
		err = c.writePacket(b)
	}
	if c.stop != nil {
		c.stop()
	}
	c.s.Close()
	if c.dead != nil {
		return nil
	}
	return err
}

// Broken reports whether the connection has failed or was interrupted and
// must be dropped.
func (c *Conn) Broken() bool { return c.dead != nil || c.s.interrupted.Load() }

// Interrupt wakes whatever the connection is waiting for, from any
// goroutine; the connection is then broken. Cancelling the context given to
// Dial does the same.
func (c *Conn) Interrupt() { c.s.interrupt() }

// TLS reports whether the connection is encrypted.
func (c *Conn) TLS() bool { return c.tc != nil }

// ServerVersion is the version the server announced in its greeting.
func (c *Conn) ServerVersion() string { return c.version }

// ConnectionID is the server's id for this session (as in
// information_schema.processlist).
func (c *Conn) ConnectionID() uint32 { return c.connID }

// NoBackslashEscapes reports whether the session's sql_mode has
// NO_BACKSLASH_ESCAPES, as of the last statement's reply.
func (c *Conn) NoBackslashEscapes() bool { return c.status&statusNoBackslashEscapes != 0 }

func (c *Conn) fail(err error) error {
	if c.dead == nil {
		c.dead = err
	}
	return err
}

// timeoutError is a net.Error for a connection phase cut short by the
// connect timeout.
func timeoutError(addr string) error {
	return &net.OpError{Op: "connect", Net: "tcp", Source: nil, Addr: nil,
		Err: fmt.Errorf("no reply from %s within the connect timeout: %w", addr, os.ErrDeadlineExceeded)}
}
