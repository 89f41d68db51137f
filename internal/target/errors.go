package target

import (
	"context"
	"crypto/tls"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Client error codes (CR_*) used for failures the server never reports.
const (
	CodeServerGone = 2006 // CR_SERVER_GONE_ERROR
	CodeServerLost = 2013 // CR_SERVER_LOST
	CodeConnError  = 2002 // CR_CONNECTION_ERROR
)

// CodeBadDB is the server's answer to a connection whose default database
// does not exist.
const CodeBadDB = 1049 // ER_BAD_DB_ERROR

// Code returns the MySQL error number of err: the server's code, or a client
// code for a failure of the connection itself; 0 when err is not a database
// error at all.
func Code(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	if IsConnLost(err) {
		return CodeServerLost
	}
	return 0
}

// ConnLostCode reports whether an error number means the connection is
// gone: what IsConnLost says of a server's or client's error, for a run's
// errors counted by code (Code gives CodeServerLost for a connection that
// broke without a number).
func ConnLostCode(code uint16) bool {
	switch code {
	case 1053, // ER_SERVER_SHUTDOWN
		1927, // ER_CONNECTION_KILLED (MariaDB)
		4031, // ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8)
		CodeServerGone, CodeServerLost, 2011, 2055:
		return true
	}
	return false
}

// IsConnLost reports whether err means the connection is gone and the only
// way on is to reconnect.
func IsConnLost(err error) bool {
	if err == nil {
		return false
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return ConnLostCode(me.Number)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ne net.Error
	return errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, mysql.ErrInvalidConn) ||
		errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNREFUSED) ||
		errors.As(err, &ne)
}

// Explain turns a connection failure into one line that says what went wrong
// and what to do. It never includes the password. The error it returns
// wraps err, so that Code and errors.As still find the driver's error.
func (t *Target) Explain(ep Endpoint, err error) error {
	return Explained(t.explain(ep, err), err)
}

// Explained returns an error that reads msg, a connection failure said for
// the user in one line, and wraps cause. Every explained connect error is
// one of these, so that what a failure means for the exit code is decided
// here once: a database that does not exist is the user's to fix (bad
// usage, exit 2) in every command, whichever command said it.
func Explained(msg string, cause error) error { return &explained{msg: msg, err: cause} }

// explained is a failure said for the user in one line that still carries
// its cause.
type explained struct {
	msg string
	err error
}

func (e *explained) Error() string { return e.msg }
func (e *explained) Unwrap() error { return e.err }

// Usage reports whether the failure is bad input (package usage's test):
// a database the URL or an option names that does not exist.
func (e *explained) Usage() bool { return Code(e.err) == CodeBadDB }

func (t *Target) explain(ep Endpoint, err error) string {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1045:
			from := "no password given"
			if t.PasswordFrom != "" {
				from = "password from " + t.PasswordFrom
			}
			return fmt.Sprintf("connect to %s: access denied for user %q (%s): check the user and its password; a password comes from the URL, --password-file, MYSQL_PWD or ~/.my.cnf (shakedown help targets)", ep, t.User, from)
		case CodeBadDB:
			return fmt.Sprintf("connect to %s: database %q does not exist: create it (CREATE DATABASE %s) or name another database", ep, t.DB, t.DB)
		case 1044:
			return fmt.Sprintf("connect to %s: user %q may not use database %q: GRANT it access or name another database", ep, t.User, t.DB)
		case 1040:
			return fmt.Sprintf("connect to %s: too many connections: raise max_connections on the server or use fewer connections", ep)
		}
		return fmt.Sprintf("connect to %s: %s", ep, me.Message)
	}
	var ve *tls.CertificateVerificationError
	switch {
	case errors.As(err, &ve):
		return fmt.Sprintf("connect to %s: TLS: the server's certificate was not accepted: %v; name the CA that signed it with ?tls-ca=FILE, or use ?tls=skip-verify to encrypt without verifying the server", ep, ve.Err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("connect to %s: connection refused: is the server running and listening there?", ep)
	case noAnswer(err):
		where := "?timeout= in the URL"
		if t.TimeoutOption != "" {
			where = t.TimeoutOption + ", or " + where
		}
		return fmt.Sprintf("no answer from %s in %s (%s): is the server up and listening there, and does nothing on the way drop the connection?", ep, t.ConnectTimeout, where)
	}
	return fmt.Sprintf("connect to %s: %v", ep, err)
}

// ErrNoAnswer is a connect that got no answer from the server within the
// target's connect timeout: the TCP connection opened (or the dial hung),
// and no greeting came.
var ErrNoAnswer = errors.New("no answer within the connect timeout")

// noAnswer reports whether err is a connect that timed out, however the
// client that tried said it.
func noAnswer(err error) bool {
	var ne net.Error
	return errors.Is(err, ErrNoAnswer) || errors.Is(err, os.ErrDeadlineExceeded) ||
		errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// boundedConnector gives every connect of a pool the target's connect
// timeout as a deadline for the whole handshake: the driver's own timeout
// covers only the dial, so a server that accepts and never greets would
// hold a connect that has no deadline of its own for ever.
type boundedConnector struct {
	driver.Connector
	timeout time.Duration
}

func (c boundedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	conn, err := c.Connector.Connect(cctx)
	if err != nil && ctx.Err() == nil && cctx.Err() != nil {
		return nil, fmt.Errorf("%w (%s)", ErrNoAnswer, c.timeout)
	}
	return conn, err
}
