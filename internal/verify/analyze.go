package verify

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/shakedown/shakedown/internal/escape"
	"github.com/shakedown/shakedown/internal/schema"
	"github.com/shakedown/shakedown/internal/target"
)

// AnalyzeOptions say which tables Analyze refreshes.
type AnalyzeOptions struct {
	Databases []string // empty: the target URL's database
	Tables    []string // as Options.Tables
	Exclude   []string
	// Local adds NO_WRITE_TO_BINLOG: replicas do not repeat the ANALYZE.
	// A flavour without that form (TiDB, Dolt) runs plain ANALYZE TABLE:
	// see flavour.Name.AnalyzeVerb.
	Local bool
	// Out receives one line per table.
	Out io.Writer
}

// ErrAnalyze means the server reported an error for some table.
var ErrAnalyze = errors.New("analyze failed")

// Analyze runs ANALYZE TABLE on every base table of the databases, one at
// a time, and writes the server's answer for each. Unlike verify, this
// writes: it stores fresh index statistics (and, unless Local, the
// statement goes to the binary log).
func Analyze(ctx context.Context, s *schema.Side, opts AnalyzeOptions) (int, error) {
	dbs := opts.Databases
	if len(dbs) == 0 {
		dbs = []string{s.Target.DB}
	}
	tables, err := schema.Load(ctx, s, dbs)
	if err != nil {
		return 0, err
	}
	sel := &runner{opts: Options{Tables: opts.Tables, Exclude: opts.Exclude}}
	verb := s.Server.Flavour.AnalyzeVerb(opts.Local)
	var failed []string
	n := 0
	for _, name := range slices.Sorted(maps.Keys(tables)) {
		t := tables[name]
		if !sel.selected(t.DB, t.Name) {
			continue
		}
		msgs, bad, err := analyzeOne(ctx, s.DB, verb+escape.Qualified(t.DB, t.Name))
		if err != nil {
			return n, fmt.Errorf("analyze %s: %w", name, err)
		}
		n++
		if opts.Out != nil {
			fmt.Fprintf(opts.Out, "%s: %s\n", name, msgs)
		}
		if bad {
			failed = append(failed, name)
		}
	}
	if len(failed) > 0 {
		return n, fmt.Errorf("%w for %s", ErrAnalyze, strings.Join(failed, ", "))
	}
	return n, nil
}

// analyzeOne runs one ANALYZE and joins the messages it returns.
func analyzeOne(ctx context.Context, db *sql.DB, stmt string) (string, bool, error) {
	rows, err := db.QueryContext(ctx, stmt)
	if err != nil {
		return "", false, err
	}
	defer rows.Close()
	var msgs []string
	bad := false
	for rows.Next() {
		var table, op, typ, text sql.NullString
		if err := rows.Scan(&table, &op, &typ, &text); err != nil {
			return "", false, err
		}
		if strings.EqualFold(typ.String, "error") {
			bad = true
		}
		if strings.EqualFold(typ.String, "status") {
			msgs = append(msgs, text.String)
		} else {
			msgs = append(msgs, typ.String+": "+text.String)
		}
	}
	return strings.Join(msgs, "; "), bad, target.CloseRows(rows)
}
