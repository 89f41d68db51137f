package follow

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
)

// String is "binlog.000001:3797696 gtid 0-1-9".
func (p Position) String() string {
	s := fmt.Sprintf("%s:%d", p.File, p.Pos)
	if p.GTID != "" {
		s += " gtid " + p.GTID
	}
	return s
}

// IsZero says the position names no file.
func (p Position) IsZero() bool { return p.File == "" }

// Reached says p is at or past q in the same server's binary log. File
// names share a base and a zero-padded sequence number, so they order as
// text.
func (p Position) Reached(q Position) bool {
	if p.File != q.File {
		return p.File > q.File
	}
	return p.Pos >= q.Pos
}

// behind is how many bytes of binary log p is behind q; -1 when they are
// in different files.
func (p Position) behind(q Position) int64 {
	if p.File != q.File {
		if p.Reached(q) {
			return 0
		}
		return -1
	}
	if p.Pos >= q.Pos {
		return 0
	}
	return int64(q.Pos - p.Pos)
}

// SourcePosition reads where the source's binary log ends now: its file,
// offset and GTID set.
func SourcePosition(ctx context.Context, db *sql.DB) (Position, error) {
	var p Position
	for _, stmt := range []string{"SHOW MASTER STATUS", "SHOW BINARY LOG STATUS"} {
		rows, err := db.QueryContext(ctx, stmt)
		if err != nil {
			continue
		}
		m, err := firstRow(rows)
		if err != nil {
			return p, fmt.Errorf("source: %s: %w", stmt, err)
		}
		if m == nil {
			return p, fmt.Errorf("source: %s returned nothing: the source writes no binary log (log_bin is off)", stmt)
		}
		n, _ := strconv.ParseUint(m["position"], 10, 32)
		p.File, p.Pos = m["file"], uint32(n)
		p.GTID = strings.ReplaceAll(m["executed_gtid_set"], "\n", "")
		break
	}
	if p.File == "" {
		return p, fmt.Errorf("source: neither SHOW MASTER STATUS nor SHOW BINARY LOG STATUS answered: the server has no MySQL binary log")
	}
	if p.GTID == "" {
		var g sql.NullString
		if err := db.QueryRowContext(ctx, "SELECT @@GLOBAL.gtid_binlog_pos").Scan(&g); err == nil {
			p.GTID = g.String
		}
	}
	return p, nil
}

// firstRow reads the first row of rows as lower-case column name -> text,
// or nil when there is none.
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
