// Package loaddata streams rows to a server with LOAD DATA LOCAL INFILE
// from an io.Reader (no file on disk), and tells a refusal of LOAD DATA
// LOCAL from other failures, so that a loader can fall back to INSERTs.
// prepare and copy both load this way.
package loaddata

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/shakedown/shakedown/internal/target"
	"io"
	"strings"
	"sync/atomic"

	"github.com/go-sql-driver/mysql"
)

// Execer is what Exec runs the statement on: a *sql.Conn or *sql.DB.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

var seq atomic.Int64

// Exec runs LOAD DATA LOCAL INFILE with r as the file; rest is the
// statement after the file name, e.g. "INTO TABLE t (a, b)". The driver
// reads r as it sends it, so memory does not grow with the data. The
// driver must allow local files (target.Config does, for readers only).
func Exec(ctx context.Context, e Execer, prefix string, r io.Reader, rest string) (sql.Result, error) {
	name := fmt.Sprintf("%s-%d", prefix, seq.Add(1))
	mysql.RegisterReaderHandler(name, func() io.Reader { return r })
	defer mysql.DeregisterReaderHandler(name)
	return e.ExecContext(ctx, "LOAD DATA LOCAL INFILE 'Reader::"+name+"' "+rest)
}

// Refused reports whether err says the server (or the client library)
// does not allow LOAD DATA LOCAL INFILE.
func Refused(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		if target.LoadDataRefusedCode(me.Number) {
			return true
		}
		if me.Number != target.ERUnknown { // read the text
			return false
		}
	}
	return refusalText(err.Error())
}

// refusalText reports whether an error's text says LOAD DATA LOCAL is off.
// Servers that are not MySQL or MariaDB give their own code (go-mysql-server:
// 1105 "local_infile needs to be set to 1 to use LOCAL").
func refusalText(msg string) bool {
	msg = strings.ToLower(msg)
	return strings.Contains(msg, "not allowed") ||
		strings.Contains(msg, "local_infile") ||
		strings.Contains(msg, "local infile") && (strings.Contains(msg, "disabled") || strings.Contains(msg, "not supported"))
}
