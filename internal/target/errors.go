package target

import (
	"context"
	"crypto/tls"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

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
func (e *explained) Usage() bool { return Code(e.err) == ERBadDB }

func (t *Target) explain(ep Endpoint, err error) string {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case ERAccessDenied:
			from := "no password given"
			if t.PasswordFrom != "" {
				from = "password from " + t.PasswordFrom
			}
			return fmt.Sprintf("connect to %s: access denied for user %q (%s): check the user and its password; a password comes from the URL, --password-file, MYSQL_PWD or ~/.my.cnf (shakedown help targets)", ep, t.User, from)
		case ERBadDB:
			return fmt.Sprintf("connect to %s: database %q does not exist: create it (CREATE DATABASE %s) or name another database", ep, t.DB, t.DB)
		case ERDBAccessDenied:
			return fmt.Sprintf("connect to %s: user %q may not use database %q: GRANT it access or name another database", ep, t.User, t.DB)
		case ERConCount:
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
