package target

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
)

// BinlogPosition reads where a server's binary log ends now: its file,
// offset and GTID set (MySQL's executed set, else MariaDB's
// gtid_binlog_pos). SHOW MASTER STATUS is SHOW BINARY LOG STATUS on MySQL
// 8.4; a server that answers neither, or answers with no row (log_bin
// off), gives an empty file and no error.
func BinlogPosition(ctx context.Context, q Querier) (file string, pos int64, gtid string, err error) {
	for _, stmt := range []string{"SHOW MASTER STATUS", "SHOW BINARY LOG STATUS"} {
		rows, qerr := q.QueryContext(ctx, stmt)
		if qerr != nil {
			continue
		}
		m, rerr := firstRow(rows)
		if rerr != nil {
			return "", 0, "", fmt.Errorf("%s: %w", stmt, rerr)
		}
		if m != nil {
			file = m["file"]
			pos, _ = strconv.ParseInt(m["position"], 10, 64)
			gtid = strings.ReplaceAll(m["executed_gtid_set"], "\n", "")
		}
		break
	}
	if gtid == "" {
		if rows, qerr := q.QueryContext(ctx, "SELECT @@GLOBAL.gtid_binlog_pos AS gtid"); qerr == nil {
			if m, rerr := firstRow(rows); rerr == nil && m != nil {
				gtid = m["gtid"]
			}
		}
	}
	return file, pos, gtid, nil
}

// firstRow reads the first row of rows as lower-case column name -> text,
// or nil when there is none, and closes rows.
func firstRow(rows *sql.Rows) (map[string]string, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	if !rows.Next() {
		return nil, rows.Err()
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, err
	}
	m := make(map[string]string, len(cols))
	for i, c := range cols {
		m[strings.ToLower(c)] = vals[i].String
	}
	return m, rows.Err()
}
