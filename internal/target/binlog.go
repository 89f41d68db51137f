package target

import (
	"context"
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
		m, rerr := FirstRow(rows)
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
			if m, rerr := FirstRow(rows); rerr == nil && m != nil {
				gtid = m["gtid"]
			}
		}
	}
	return file, pos, gtid, nil
}
