package target

import (
	"context"
	"database/sql"
	"strings"
)

// CloseRows closes rows that have been read to their end and returns the
// first error of the reading (which rows.Next hides until rows.Err) or of
// the close: a result cut short by a lost connection is not a short result.
func CloseRows(rows *sql.Rows) error {
	err := rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	return err
}

// Scanner is one row to read: both *sql.Row and *sql.Rows are, so one
// function reads a row of either.
type Scanner interface {
	Scan(dest ...any) error
}

// QueryAll runs query on q and reads every row with scan, in order. The
// first error ends it and comes back as it is, for the caller to wrap: the
// query's, scan's, or the reading's, which rows.Next hides until rows.Err
// (a result cut short is not a short result). No rows is a nil slice.
func QueryAll[T any](ctx context.Context, q Querier, scan func(Scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// QueryEach runs query on q and calls each with every row, in order. The
// first error ends it and comes back as it is, for the caller to wrap: the
// query's, each's, or the reading's or the close's (CloseRows): a result
// cut short is not a short result.
func QueryEach(ctx context.Context, q Querier, each func(Scanner) error, query string, args ...any) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	for rows.Next() {
		if err := each(rows); err != nil {
			rows.Close()
			return err
		}
	}
	return CloseRows(rows)
}

// ScanString reads a row of one text column.
func ScanString(row Scanner) (string, error) {
	var s string
	err := row.Scan(&s)
	return s, err
}

// FirstRow reads the first row of rows as lower-case column name -> text
// (NULL as ""), or nil when there is none, and closes rows. It suits the
// SHOW statements whose columns differ by server or object kind.
func FirstRow(rows *sql.Rows) (map[string]string, error) {
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

// FirstColumn reads the first column of the row rows stands at as text
// (NULL as ""), whatever columns follow it: a SHOW statement's row, whose
// columns differ by server and version.
func FirstColumn(rows *sql.Rows) (string, error) {
	cols, err := rows.Columns()
	if err != nil {
		return "", err
	}
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return "", err
	}
	return string(vals[0]), nil
}
