package dbcopy

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"github.com/shakedown/shakedown/internal/escape"
	"github.com/shakedown/shakedown/internal/loaddata"
	"github.com/shakedown/shakedown/internal/schema"
	"github.com/shakedown/shakedown/internal/verify"
)

// tablePlan is one table to copy: how its rows are read on the source and
// loaded on the target.
type tablePlan struct {
	t          *schema.Table
	srcDB      string
	dstDB      string
	cond       string // the subset's condition; "" for every row
	selectList string // source expressions, one per loaded column
	loadList   string // LOAD DATA's column list and SET clause
	insertCols string // INSERT's column list
	literal    []byte // per loaded column, its form in INSERTs: 'x' hex, 'n' number, 's' string
	res        *TableResult
}

// newTablePlan builds the column lists. Generated columns are left to the
// target to compute; BIT columns travel as numbers (LOAD DATA would read
// their raw bytes as text).
func newTablePlan(t *schema.Table, dstDB, cond string) *tablePlan {
	p := &tablePlan{t: t, srcDB: t.DB, dstDB: dstDB, cond: cond, res: &TableResult{Table: t.FullName(), Where: cond}}
	var sel, load, set, ins []string
	for i, c := range t.Columns {
		if c.Generated {
			continue
		}
		q := escape.Ident(c.Name)
		ins = append(ins, q)
		if c.DataType == "bit" {
			v := fmt.Sprintf("@c%d", i)
			sel, load = append(sel, "CAST("+q+" AS UNSIGNED)"), append(load, v)
			set = append(set, q+" = CAST("+v+" AS UNSIGNED)")
			p.literal = append(p.literal, 'n')
			continue
		}
		sel, load = append(sel, q), append(load, q)
		lit := byte('s')
		if isBinary(c.DataType) {
			lit = 'x'
		}
		p.literal = append(p.literal, lit)
	}
	p.selectList = strings.Join(sel, ", ")
	p.loadList = "(" + strings.Join(load, ", ") + ")"
	if len(set) > 0 {
		p.loadList += " SET " + strings.Join(set, ", ")
	}
	p.insertCols = "(" + strings.Join(ins, ", ") + ")"
	return p
}

func isBinary(dataType string) bool {
	switch dataType {
	case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "geometry", "point", "linestring", "polygon",
		"multipoint", "multilinestring", "multipolygon", "geometrycollection":
		return true
	}
	return false
}

// chunkQuery is the SELECT of one range's rows.
func (p *tablePlan) chunkQuery(rangeWhere string) string {
	return "SELECT " + p.selectList + " FROM " + escape.Qualified(p.srcDB, p.t.Name) + verify.WhereClause(rangeWhere, p.cond)
}

// rowScanner reads rows as raw text, telling NULL from the empty string.
type rowScanner struct {
	rows *sql.Rows
	raw  []sql.RawBytes
	bufs [][]byte
	ptrs []any
}

func newRowScanner(rows *sql.Rows, n int) *rowScanner {
	s := &rowScanner{rows: rows, raw: make([]sql.RawBytes, n), bufs: make([][]byte, n), ptrs: make([]any, n)}
	for i := range s.raw {
		s.bufs[i] = make([]byte, 0, 64)
		s.ptrs[i] = &s.raw[i]
	}
	return s
}

// next reads a row; a nil value is NULL. The values are valid until the
// next call.
func (s *rowScanner) next() (bool, error) {
	if !s.rows.Next() {
		return false, s.rows.Err()
	}
	// A non-nil empty destination keeps an empty string apart from NULL,
	// which alone sets it to nil.
	for i := range s.raw {
		s.raw[i] = s.bufs[i][:0]
	}
	if err := s.rows.Scan(s.ptrs...); err != nil {
		return false, err
	}
	for i, b := range s.raw {
		if b != nil && cap(b) > cap(s.bufs[i]) {
			s.bufs[i] = b[:0]
		}
	}
	return true, nil
}

// writeTSV writes rows in LOAD DATA's default format: tab-separated,
// newline-terminated, backslash escapes, \N for NULL. It returns the rows
// and bytes written.
func writeTSV(s *rowScanner, w io.Writer) (rows, n int64, err error) {
	bw := bufio.NewWriterSize(w, 256<<10)
	cw := &countWriter{w: bw}
	line := make([]byte, 0, 1024)
	for {
		ok, err := s.next()
		if err != nil || !ok {
			if err == nil {
				err = bw.Flush()
			}
			return rows, cw.n, err
		}
		line = line[:0]
		for i, v := range s.raw {
			if i > 0 {
				line = append(line, '\t')
			}
			if v == nil {
				line = append(line, '\\', 'N')
				continue
			}
			line = escape.Append(line, v, &escape.LoadData)
		}
		line = append(line, '\n')
		if _, err := cw.Write(line); err != nil {
			return rows, cw.n, err
		}
		rows++
	}
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// loadChunk streams rows into one LOAD DATA LOCAL statement on dst.
func (p *tablePlan) loadChunk(ctx context.Context, dst *sql.Conn, s *rowScanner) (rows, n int64, err error) {
	pr, pw := io.Pipe()
	type written struct {
		rows, n int64
		err     error
	}
	done := make(chan written, 1)
	go func() {
		r, n, err := writeTSV(s, pw)
		pw.CloseWithError(err)
		done <- written{r, n, err}
	}()
	res, err := loaddata.Exec(ctx, dst, "shakedown-copy", pr,
		"INTO TABLE "+escape.Qualified(p.dstDB, p.t.Name)+" CHARACTER SET utf8mb4 "+p.loadList)
	// The reader may have stopped early (a refusal, an error): unblock the
	// writer, which then stops at its next write.
	pr.CloseWithError(io.ErrClosedPipe)
	w := <-done
	if err != nil {
		return 0, 0, err
	}
	if w.err != nil {
		return 0, 0, fmt.Errorf("read rows of %s: %w", p.res.Table, w.err)
	}
	if got, _ := res.RowsAffected(); got != w.rows {
		return 0, 0, fmt.Errorf("load rows into %s: the target took %d of %d rows (duplicate keys or values it could not store)", p.res.Table, got, w.rows)
	}
	return w.rows, w.n, nil
}

// insertBatchBytes bounds one multi-row INSERT.
const insertBatchBytes = 1 << 20

// insertChunk sends rows as multi-row INSERTs, for targets that refuse
// LOAD DATA LOCAL.
func (p *tablePlan) insertChunk(ctx context.Context, dst *sql.Conn, s *rowScanner) (rows, n int64, err error) {
	prefix := "INSERT INTO " + escape.Qualified(p.dstDB, p.t.Name) + " " + p.insertCols + " VALUES "
	buf := make([]byte, 0, insertBatchBytes+4096)
	batch := 0
	flush := func() error {
		if batch == 0 {
			return nil
		}
		if _, err := dst.ExecContext(ctx, string(buf)); err != nil {
			return fmt.Errorf("insert rows into %s: %w", p.res.Table, err)
		}
		n += int64(len(buf))
		batch = 0
		return nil
	}
	for {
		ok, err := s.next()
		if err != nil {
			return rows, n, fmt.Errorf("read rows of %s: %w", p.res.Table, err)
		}
		if !ok {
			return rows, n, flush()
		}
		if batch == 0 {
			buf = append(buf[:0], prefix...)
		} else {
			buf = append(buf, ',')
		}
		buf = append(buf, '(')
		for i, v := range s.raw {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendLiteral(buf, v, p.literal[i])
		}
		buf = append(buf, ')')
		batch++
		rows++
		if len(buf) >= insertBatchBytes {
			if err := flush(); err != nil {
				return rows, n, err
			}
		}
	}
}

// appendLiteral writes v as an SQL literal of the form lit (see
// tablePlan.literal) for a session without NO_BACKSLASH_ESCAPES (the
// target's sql_mode is set by copy). A BIT value goes as a number: a quoted
// one would be stored as the bytes of its text.
func appendLiteral(dst, v []byte, lit byte) []byte {
	switch {
	case v == nil:
		return append(dst, "NULL"...)
	case lit == 'n':
		return append(dst, v...)
	case lit == 'x':
		dst = append(dst, "X'"...)
		dst = hex.AppendEncode(dst, v)
		return append(dst, '\'')
	}
	dst = append(dst, '\'')
	dst = escape.Append(dst, v, &escape.Literal)
	return append(dst, '\'')
}
