package check

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/shakedown/shakedown/internal/escape"
)

// zeroDefaultRE matches a default with a zero month or day.
var zeroDefaultRE = regexp.MustCompile(`^'\d{4}-(00-\d{2}|\d{2}-00)`)

// probeBatch is how many columns one probe statement reads.
const probeBatch = 50

// probeZeroDates finds the date columns of the source whose default or
// data holds a zero date, when the target would reject them (rejected is
// zeroDatesRejected's answer). Data is read with one statement per batch
// of columns, each column stopping at its first zero date.
func (s *snapshot) probeZeroDates(ctx context.Context, rejected string, maxRows int64) error {
	if _, failed := s.failed["tables"]; rejected == "" || failed {
		return nil
	}
	type col struct{ table, name, typ string }
	var probe []col
	var tooBig []string
	for _, n := range slices.Sorted(maps.Keys(s.tables)) {
		t := s.tables[n]
		var cols []col
		for _, c := range t.Columns {
			if c.DataType != "date" && c.DataType != "datetime" && c.DataType != "timestamp" {
				continue
			}
			if zeroDefaultRE.MatchString(c.Default) {
				s.zeroDates = append(s.zeroDates, zeroDate{object: n + "." + c.Name, defVal: c.Default, dataTyp: c.DataType})
				continue
			}
			if !c.Generated {
				cols = append(cols, col{n, c.Name, c.DataType})
			}
		}
		if len(cols) == 0 {
			continue
		}
		if maxRows > 0 && t.Rows > maxRows {
			tooBig = append(tooBig, n)
			continue
		}
		probe = append(probe, cols...)
	}
	if len(tooBig) > 0 {
		s.fail("zerodates_big", NotChecked{Detail: fmt.Sprintf("data of %d tables estimated above --max-scan-rows not read: %s", len(tooBig), list(tooBig, 5))})
	}
	for start := 0; start < len(probe); start += probeBatch {
		batch := probe[start:min(start+probeBatch, len(probe))]
		parts := make([]string, len(batch))
		for i, c := range batch {
			q := escape.Ident(c.name)
			parts[i] = fmt.Sprintf("(SELECT %d FROM %s WHERE MONTH(%s) = 0 OR DAYOFMONTH(%s) = 0 LIMIT 1)", i, qualifiedName(c.table), q, q)
		}
		if _, err := s.query(ctx, "zerodates", "the source's date columns", "SELECT on the source's tables",
			strings.Join(parts, " UNION ALL "), nil, func(rows *sql.Rows) error {
				var v sql.NullString
				if err := rows.Scan(&v); err != nil {
					return err
				}
				i, err := strconv.Atoi(v.String)
				if err != nil || i < 0 || i >= len(batch) {
					return fmt.Errorf("unexpected probe answer %q", v.String)
				}
				c := batch[i]
				s.zeroDates = append(s.zeroDates, zeroDate{object: c.table + "." + c.name, inData: true, dataTyp: c.typ})
				return nil
			}); err != nil {
			return err
		}
	}
	return nil
}

// checkZeroDates reports the zero dates the target's sql_mode rejects.
func (r *runner) checkZeroDates() {
	const id = "zero_date"
	sev := r.zeroDatesRejected()
	if sev == "" || !r.have(id, r.src, "tables") {
		return
	}
	// Batches that could not be read, and tables too large to read, are
	// listed as not checked; what was read still counts.
	r.have(id, r.src, "zerodates")
	r.have(id, r.src, "zerodates_big")
	mode := r.dst.vars["sql_mode"]
	what := "refuses"
	if sev == Warning {
		what = "stores them as zero with a warning, since it is not strict"
	}
	for _, z := range r.src.zeroDates {
		where := "rows hold"
		fix := fmt.Sprintf("replace them before the move (UPDATE ... SET %s = NULL or a real date WHERE MONTH(%s) = 0 OR DAYOFMONTH(%s) = 0), or load with a session sql_mode without NO_ZERO_DATE and NO_ZERO_IN_DATE",
			lastPart(z.object), lastPart(z.object), lastPart(z.object))
		if !z.inData {
			where = "its default " + z.defVal + " is"
			fix = "give the column a real default or NULL (ALTER TABLE ... ALTER COLUMN ... SET DEFAULT ...)"
		}
		r.add(id, sev, z.object,
			fmt.Sprintf("%s column: %s a zero date; the target's sql_mode (%s) %s", strings.ToUpper(z.dataTyp), where, mode, what), fix)
	}
}

func lastPart(s string) string {
	if i := strings.LastIndex(s, "."); i >= 0 {
		return escape.Ident(s[i+1:])
	}
	return escape.Ident(s)
}
