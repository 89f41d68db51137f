package target

import (
	"context"
	"crypto/tls"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/go-sql-driver/mysql"
)

// Client error codes (CR_*) used for failures the server never reports.
const (
	CodeServerGone = 2006 // CR_SERVER_GONE_ERROR
	CodeServerLost = 2013 // CR_SERVER_LOST
	CodeConnError  = 2002 // CR_CONNECTION_ERROR
)

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
	return &explained{msg: t.explain(ep, err), err: err}
}

// explained is a failure said for the user in one line that still carries
// its cause.
type explained struct {
	msg string
	err error
}

func (e *explained) Error() string { return e.msg }
func (e *explained) Unwrap() error { return e.err }

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
		case 1049:
			return fmt.Sprintf("connect to %s: database %q does not exist: create it (CREATE DATABASE %s) or name another database", ep, t.DB, t.DB)
		case 1044:
			return fmt.Sprintf("connect to %s: user %q may not use database %q: GRANT it access or name another database", ep, t.User, t.DB)
		case 1040:
			return fmt.Sprintf("connect to %s: too many connections: raise max_connections on the server or use fewer connections", ep)
		}
		return fmt.Sprintf("connect to %s: %s", ep, me.Message)
	}
	var ne net.Error
	var ve *tls.CertificateVerificationError
	switch {
	case errors.As(err, &ve):
		return fmt.Sprintf("connect to %s: TLS: the server's certificate was not accepted: %v; name the CA that signed it with ?tls-ca=FILE, or use ?tls=skip-verify to encrypt without verifying the server", ep, ve.Err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("connect to %s: connection refused: is the server running and listening there?", ep)
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Sprintf("connect to %s: no answer within %s: check the host, port and firewall", ep, t.ConnectTimeout)
	}
	return fmt.Sprintf("connect to %s: %v", ep, err)
}
