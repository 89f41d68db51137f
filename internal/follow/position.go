package follow

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/shakedown/shakedown/internal/target"
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
	file, pos, gtid, err := target.BinlogPosition(ctx, db)
	if err != nil {
		return Position{}, fmt.Errorf("source: %w", err)
	}
	if file == "" {
		return Position{}, fmt.Errorf("source: SHOW MASTER STATUS returned nothing: the source writes no binary log (log_bin is off)")
	}
	return Position{File: file, Pos: uint32(pos), GTID: gtid}, nil
}
