package host

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Querier runs a query; *sql.DB and *sql.Conn are Queriers.
type Querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// queryTimeout bounds each variable read: a server that stops answering
// leaves its rows unknown rather than hanging the collection.
const queryTimeout = 5 * time.Second

// sqlVariables are the rows only the server can give, remote or not.
var sqlVariables = []string{"version", "version_comment", "back_log", "max_connections",
	"innodb_numa_interleave", "innodb_flush_method", "thread_handling"}

// sqlFacts reads the server variables that bear on the host: the listen
// backlog it asks for, NUMA interleaving of the buffer pool, how InnoDB
// writes, and the thread model.
func sqlFacts(ctx context.Context, e *env) []Fact {
	out := make([]Fact, 0, len(sqlVariables))
	for _, v := range sqlVariables {
		name := "mysql." + v
		if e.opts.SQL == nil {
			out = append(out, unknown(name, "sql", Setting, "no target: give a target URL or --sandbox for the rows only the server can give"))
			continue
		}
		val, reason := variable(ctx, e.opts.SQL, v)
		out = append(out, mk(name, "sql", Setting, val, reason))
	}
	return out
}

// variable reads one global variable; a server without it says so.
func variable(ctx context.Context, q Querier, name string) (string, string) {
	qctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	var v sql.NullString
	if err := q.QueryRowContext(qctx, "SELECT @@GLOBAL."+name).Scan(&v); err != nil {
		msg := err.Error()
		low := strings.ToLower(msg)
		if strings.Contains(low, "unknown system variable") || strings.Contains(low, "1193") {
			return "", "the server has no variable " + name + " (" + msg + ")"
		}
		return "", "read @@" + name + ": " + msg
	}
	if !v.Valid {
		return "", "@@" + name + " is NULL on this server"
	}
	if v.String == "" {
		return "", "@@" + name + " is empty on this server"
	}
	return v.String, ""
}

// LocalServer finds a local server's process and data directory from its
// @@pid_file and @@datadir. pid is 0, with why, when the pid file cannot be
// read; datadir is "" when the server does not say.
func LocalServer(ctx context.Context, q Querier) (pid int, datadir, reason string) {
	datadir, _ = variable(ctx, q, "datadir")
	pidFile, r := variable(ctx, q, "pid_file")
	if r != "" {
		return 0, datadir, r
	}
	if !filepath.IsAbs(pidFile) && datadir != "" {
		pidFile = filepath.Join(datadir, pidFile)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return 0, datadir, fmt.Sprintf("read the server's pid file: %v", err)
	}
	pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, datadir, fmt.Sprintf("pid file %s holds %q, not a process id", pidFile, strings.TrimSpace(string(b)))
	}
	return pid, datadir, ""
}
