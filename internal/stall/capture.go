package stall

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/result"
)

// Querier runs a query; *sql.DB and *sql.Conn are Queriers.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Bounds limit one capture, so that a capture of a server with thousands of
// sessions stays small and a server that does not answer cannot hold it.
type Bounds struct {
	// ReadTimeout bounds each read; 0 means 5s.
	ReadTimeout time.Duration
	// Rows bounds each table; 0 means 500.
	Rows int
	// Cell bounds each value and Text each text, in bytes; 0 means 1 KiB
	// and 64 KiB.
	Cell, Text int
}

func (b Bounds) withDefaults() Bounds {
	if b.ReadTimeout <= 0 {
		b.ReadTimeout = 5 * time.Second
	}
	if b.Rows <= 0 {
		b.Rows = 500
	}
	if b.Cell <= 0 {
		b.Cell = 1 << 10
	}
	if b.Text <= 0 {
		b.Text = 64 << 10
	}
	return b
}

// The lock waits as the flavours give them: information_schema's
// INNODB_LOCK_WAITS (MariaDB, MySQL 5.7), else performance_schema's
// data_lock_waits (MySQL 8.0 and later), each joined with INNODB_TRX for
// the sessions' ids and statements.
const (
	// lockWaitsCols is what both sources give: the waiting and the blocking
	// session, their statements and since when, and the kind of lock
	// waited for (RECORD or TABLE; NULL when the lock is gone).
	lockWaitsCols = `SELECT r.trx_mysql_thread_id AS waiting_id, r.trx_query AS waiting_query,
 r.trx_wait_started AS wait_started, b.trx_mysql_thread_id AS blocking_id,
 b.trx_query AS blocking_query, b.trx_started AS blocking_started, b.trx_state AS blocking_state,
 l.lock_type AS lock_type
`
	lockWaitsIS = lockWaitsCols + ` FROM information_schema.INNODB_LOCK_WAITS w
 JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id
 JOIN information_schema.INNODB_TRX r ON r.trx_id = w.requesting_trx_id
 LEFT JOIN information_schema.INNODB_LOCKS l ON l.lock_id = w.requested_lock_id
 ORDER BY r.trx_wait_started`
	lockWaitsPS = lockWaitsCols + ` FROM performance_schema.data_lock_waits w
 JOIN information_schema.INNODB_TRX b ON b.trx_id = w.BLOCKING_ENGINE_TRANSACTION_ID
 JOIN information_schema.INNODB_TRX r ON r.trx_id = w.REQUESTING_ENGINE_TRANSACTION_ID
 LEFT JOIN performance_schema.data_locks l ON l.ENGINE_LOCK_ID = w.REQUESTING_ENGINE_LOCK_ID
 ORDER BY r.trx_wait_started`
	transactions = `SELECT trx_mysql_thread_id AS id, trx_state AS state, trx_started AS started,
 trx_rows_locked AS rows_locked, trx_lock_structs AS lock_structs, trx_query AS query
 FROM information_schema.INNODB_TRX ORDER BY trx_started`
)

// Capture reads what the server is doing now: the processlist, SHOW ENGINE
// INNODB STATUS, the lock waits and the open transactions. A read that
// fails or times out is kept as its section's Error; the others go on.
// Each session of the processlist is then labelled with what it waits for
// and whom it blocks (column waits_or_blocks).
func Capture(ctx context.Context, q Querier, b Bounds) []result.StallSection {
	b = b.withDefaults()
	out := []result.StallSection{readTable(ctx, q, b, "processlist", "SHOW FULL PROCESSLIST")}
	out = append(out, readInnoDB(ctx, q, b))
	lw := readTable(ctx, q, b, "lock_waits", lockWaitsIS)
	if lw.Error != "" {
		if ps := readTable(ctx, q, b, "lock_waits", lockWaitsPS); ps.Error == "" {
			lw = ps
		} else {
			lw.Error += "; " + ps.Error
		}
	}
	out = append(out, lw, readTable(ctx, q, b, "transactions", transactions))
	labelWaits(out)
	return out
}

// readTable reads one statement's rows as text, within the bounds.
func readTable(ctx context.Context, q Querier, b Bounds, name, query string) (sec result.StallSection) {
	sec = result.StallSection{Name: name, Source: oneLine(query)}
	start := time.Now()
	defer func() { sec.ReadMS = msSince(start) }() // sec is the named result: the time reaches the caller
	ctx, cancel := context.WithTimeout(ctx, b.ReadTimeout)
	defer cancel()
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		sec.Error = readError(ctx, err)
		return sec
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		sec.Error = readError(ctx, err)
		return sec
	}
	sec.Columns = cols
	sec.Rows = [][]string{}
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if len(sec.Rows) == b.Rows {
			sec.Truncated = true
			break
		}
		if err := rows.Scan(ptrs...); err != nil {
			sec.Error = readError(ctx, err)
			return sec
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			switch {
			case v == nil:
				row[i] = "NULL"
			case len(v) > b.Cell:
				row[i], sec.Truncated = string(v[:b.Cell]), true
			default:
				row[i] = string(v)
			}
		}
		sec.Rows = append(sec.Rows, row)
	}
	if err := rows.Err(); err != nil {
		sec.Error = readError(ctx, err)
	}
	return sec
}

// readInnoDB reads SHOW ENGINE INNODB STATUS's text.
func readInnoDB(ctx context.Context, q Querier, b Bounds) result.StallSection {
	t := readTable(ctx, q, Bounds{ReadTimeout: b.ReadTimeout, Rows: 1, Cell: b.Text, Text: b.Text}, "innodb_status", "SHOW ENGINE INNODB STATUS")
	if t.Error == "" && len(t.Rows) > 0 && len(t.Rows[0]) == 3 {
		t.Text = t.Rows[0][2]
	} else if t.Error == "" {
		t.Error = "the server returned no InnoDB status"
	}
	t.Columns, t.Rows = nil, nil
	return t
}

func readError(ctx context.Context, err error) string {
	if ctx.Err() != nil {
		return fmt.Sprintf("timed out: %v", err)
	}
	return err.Error()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func msSince(t time.Time) float64 {
	return float64(time.Since(t).Microseconds()) / 1000
}
