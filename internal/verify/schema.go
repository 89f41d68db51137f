package verify

import (
	"database/sql"
	"sort"

	"github.com/shakedown/shakedown/internal/schema"
)

// The table definitions and their comparison live in schema, which check
// uses too; these names keep verify's own spelling of them.
type (
	Side       = schema.Side
	Table      = schema.Table
	Column     = schema.Column
	Index      = schema.Index
	SchemaDiff = schema.Diff
)

var (
	loadSchema    = schema.Load
	compareSchema = schema.Compare
)

func closeRows(rows *sql.Rows) error {
	err := rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	return err
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
