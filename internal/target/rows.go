package target

import "database/sql"

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
