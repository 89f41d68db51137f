package capture

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// GeneralLogTable reads mysql.general_log (log_output=TABLE) row by row.
type GeneralLogTable struct {
	rows *sql.Rows
}

// OpenGeneralLogTable starts reading the table on db; Close ends it. ctx
// bounds the whole read.
func OpenGeneralLogTable(ctx context.Context, db *sql.DB) (*GeneralLogTable, error) {
	// No ORDER BY: the CSV table is read in the order it was written, which
	// keeps each session's statements in order even within one microsecond.
	rows, err := db.QueryContext(ctx, "SELECT UNIX_TIMESTAMP(event_time), thread_id, command_type, argument FROM mysql.general_log")
	if err != nil {
		return nil, fmt.Errorf("read mysql.general_log: %w", err)
	}
	return &GeneralLogTable{rows: rows}, nil
}

// Next implements TableReader.
func (t *GeneralLogTable) Next() (int64, int64, string, string, error) {
	if !t.rows.Next() {
		if err := t.rows.Err(); err != nil {
			return 0, 0, "", "", fmt.Errorf("read mysql.general_log: %w", err)
		}
		return 0, 0, "", "", io.EOF
	}
	var ts string
	var thread int64
	var cmd string
	var arg []byte
	if err := t.rows.Scan(&ts, &thread, &cmd, &arg); err != nil {
		return 0, 0, "", "", fmt.Errorf("read mysql.general_log: %w", err)
	}
	return parseMicros(ts), thread, cmd, string(arg), nil
}

// Close ends the read.
func (t *GeneralLogTable) Close() error { return t.rows.Close() }

// parseMicros reads "1700000000.123456" as microseconds.
func parseMicros(s string) int64 {
	sec, frac, _ := strings.Cut(s, ".")
	n, _ := strconv.ParseInt(sec, 10, 64)
	frac = (frac + "000000")[:6]
	f, _ := strconv.ParseInt(frac, 10, 64)
	return n*1e6 + f
}

// GeneralLogSource is the mysql.general_log table of the server db is a
// pool on, as a source named name (the server's URL without password).
// Closing it ends the read and closes db: the source owns the pool.
func GeneralLogSource(ctx context.Context, db *sql.DB, name string) (Source, func(), error) {
	tbl, err := OpenGeneralLogTable(ctx, db)
	if err != nil {
		db.Close()
		return Source{}, nil, fmt.Errorf("%s: %w", name, err)
	}
	src := Source{Name: name + " (mysql.general_log)", Format: "general", FormatWhy: "the mysql.general_log table", Table: tbl}
	return src, func() { tbl.Close(); db.Close() }, nil
}
