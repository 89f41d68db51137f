package verify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/shakedown/shakedown/internal/schema"
	"github.com/shakedown/shakedown/internal/target"
)

// Kinds of differing rows.
const (
	KindMissing = "missing_on_target" // on the source only
	KindExtra   = "extra_on_target"   // on the target only
	KindChanged = "changed"           // on both, with different values
)

// ReportVersion is the version of the JSON document.
const ReportVersion = 1

// Report is the outcome of one verify run.
type Report struct {
	Version           int            `json:"version"`
	Source            string         `json:"source"` // redacted URL
	Target            string         `json:"target"`
	SourceServer      target.Server  `json:"source_server"`
	TargetServer      target.Server  `json:"target_server"`
	Started           time.Time      `json:"started"`
	Seconds           float64        `json:"seconds"`
	Equal             bool           `json:"equal"`
	Tables            []*TableReport `json:"tables"`
	DifferingRows     int64          `json:"differing_rows"`
	SchemaDifferences int            `json:"schema_differences"`
	ChunksResumed     int            `json:"chunks_resumed,omitempty"`
	Interrupted       bool           `json:"interrupted,omitempty"`
	Failed            int            `json:"tables_failed,omitempty"`
	Rules             []string       `json:"rules"`

	// ChunksRechecked counts the chunks that differed and were compared
	// again after Options.Settle, Rechecks those comparisons, and
	// ChunksStillDiffering the chunks among them that still differed after
	// the last one (their rows are counted in DifferingRows).
	ChunksRechecked      int `json:"chunks_rechecked,omitempty"`
	Rechecks             int `json:"rechecks,omitempty"`
	ChunksStillDiffering int `json:"chunks_still_differing,omitempty"`
	// AlignedRechecks are the rechecks that read both sides at one
	// position of the source's binary log (Options.Align).
	AlignedRechecks int `json:"aligned_rechecks,omitempty"`
}

// TableReport is one table's outcome.
type TableReport struct {
	Table             string        `json:"table"`                  // db.table on the source
	TargetTable       string        `json:"target_table,omitempty"` // when the target's database is named differently
	RowsSource        int64         `json:"rows_source"`
	RowsTarget        int64         `json:"rows_target"`
	Chunks            int           `json:"chunks"`
	ChunksResumed     int           `json:"chunks_resumed,omitempty"`
	Equal             bool          `json:"equal"`
	DifferingRows     int64         `json:"differing_rows"`
	SchemaDifferences []schema.Diff `json:"schema_differences"`
	Key               []string      `json:"key"`                 // the columns rows are matched by; empty: whole rows
	KeyIndex          string        `json:"key_index,omitempty"` // PRIMARY or the unique key used
	Compared          []string      `json:"columns_compared"`
	NotCompared       []string      `json:"columns_not_compared,omitempty"`
	Notes             []string      `json:"notes,omitempty"`
	Rows              []*RowDiff    `json:"rows"`
	RowsNotListed     int64         `json:"rows_not_listed,omitempty"`
	Seconds           float64       `json:"seconds"`
	Error             string        `json:"error,omitempty"`

	// As in Report, for this table.
	ChunksRechecked      int `json:"chunks_rechecked,omitempty"`
	Rechecks             int `json:"rechecks,omitempty"`
	ChunksStillDiffering int `json:"chunks_still_differing,omitempty"`
}

// RowDiff is one differing row: its key (for a table without a key, the
// whole row), how it differs and, when changed, the columns that differ.
type RowDiff struct {
	Key     []KeyPart
	Kind    string
	Columns []string
	// Changes are the differing columns' values on both sides, for a
	// changed row (not kept across --resume: a resumed row lists only its
	// Columns).
	Changes []Change
	Count   int64 // copies of the row (tables without a key); 1 otherwise

	fix    []string  // repair statements
	id     string    // identity: canonical key or row hash
	native *keyTuple // the key as fetched (keyed tables)
}

// Change is one column of a changed row: its value on the source and on
// the target; nil is NULL.
type Change struct {
	Column string  `json:"column"`
	Source *string `json:"source"`
	Target *string `json:"target"`
}

// KeyPart is one column of a row's key; Value nil is NULL.
type KeyPart struct {
	Column string  `json:"column"`
	Value  *string `json:"value"`
}

// MarshalJSON writes the key as an object in key order.
func (d *RowDiff) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"key":{`)
	for i, p := range d.Key {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(p.Column)
		v, _ := json.Marshal(p.Value)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteString(`},"kind":`)
	kind, _ := json.Marshal(d.Kind)
	b.Write(kind)
	cols := d.Columns
	if cols == nil {
		cols = []string{}
	}
	c, _ := json.Marshal(cols)
	b.WriteString(`,"columns":`)
	b.Write(c)
	if len(d.Changes) > 0 {
		ch, _ := json.Marshal(d.Changes)
		b.WriteString(`,"changes":`)
		b.Write(ch)
	}
	fmt.Fprintf(&b, `,"count":%d}`, d.Count)
	return b.Bytes(), nil
}

// KeyString is the key as col=value pairs.
func (d *RowDiff) KeyString() string {
	parts := make([]string, len(d.Key))
	for i, p := range d.Key {
		v := "NULL"
		if p.Value != nil {
			v = *p.Value
			if len(v) > 60 {
				v = v[:57] + "..."
			}
		}
		parts[i] = p.Column + "=" + v
	}
	return strings.Join(parts, " ")
}

// shortValue is a value as the text report shows it: quoted, NULL, cut
// after 40 characters.
func shortValue(v *string) string {
	if v == nil {
		return "NULL"
	}
	s := *v
	if r := []rune(s); len(r) > 40 {
		s = string(r[:37]) + "..."
	}
	return strconv.Quote(s)
}

// Describe is the row in words.
func (d *RowDiff) Describe() string {
	s := strings.ReplaceAll(d.Kind, "_", " ") + " " + d.KeyString()
	if d.Count > 1 {
		s += fmt.Sprintf(" (x%d)", d.Count)
	}
	switch {
	case len(d.Changes) > 0:
		parts := make([]string, len(d.Changes))
		for i, c := range d.Changes {
			parts[i] = c.Column + ": " + shortValue(c.Source) + " on the source, " + shortValue(c.Target) + " on the target"
		}
		s += " (" + strings.Join(parts, "; ") + ")"
	case len(d.Columns) > 0:
		s += " (" + strings.Join(d.Columns, ", ") + ")"
	}
	return s
}

// WriteJSON writes the report as indented JSON.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write verify JSON: %w", err)
	}
	return nil
}

// WriteText writes the summary table, the differences (at most maxRows
// rows per table) and the comparison rules.
func WriteText(w io.Writer, r *Report, maxRows int) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "verify %s (%s) -> %s (%s)\n\n", r.Source, product(r.SourceServer), r.Target, product(r.TargetServer))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "TABLE\tROWS SOURCE\tROWS TARGET\tCHUNKS\tSCHEMA\tDATA\tTIME\t")
	for _, t := range r.Tables {
		schema := "same"
		if n := len(t.SchemaDifferences); n > 0 {
			schema = plural(n, "difference")
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%.1fs\t\n", t.Table, t.RowsSource, t.RowsTarget, t.Chunks, schema, dataState(t), t.Seconds)
	}
	tw.Flush()
	for _, t := range r.Tables {
		if len(t.SchemaDifferences) == 0 && len(t.Rows) == 0 && len(t.Notes) == 0 && t.Error == "" {
			continue
		}
		fmt.Fprintf(&b, "\n%s:\n", t.Table)
		if t.Error != "" {
			fmt.Fprintf(&b, "  check failed: %s\n", t.Error)
		}
		for _, d := range t.SchemaDifferences {
			fmt.Fprintf(&b, "  schema: %s\n", d)
		}
		for _, n := range t.Notes {
			fmt.Fprintf(&b, "  note: %s\n", n)
		}
		for i, d := range t.Rows {
			if i == maxRows {
				fmt.Fprintf(&b, "  ... %d more rows not shown (--json lists up to --max-rows, --fix-sql has all)\n", int64(len(t.Rows)-maxRows)+t.RowsNotListed)
				break
			}
			fmt.Fprintf(&b, "  %s\n", d.Describe())
		}
		if t.RowsNotListed > 0 && len(t.Rows) <= maxRows {
			fmt.Fprintf(&b, "  ... %d more rows not shown (--fix-sql has all)\n", t.RowsNotListed)
		}
	}
	b.WriteString("\ncompared by these rules:\n")
	for _, rule := range r.Rules {
		fmt.Fprintf(&b, "  - %s\n", rule)
	}
	b.WriteByte('\n')
	if s := recheckSentence(r); s != "" {
		b.WriteString(s + "\n")
	}
	b.WriteString(Verdict(r) + "\n")
	_, err := w.Write(b.Bytes())
	return err
}

// Verdict is the one-line outcome.
func Verdict(r *Report) string {
	var differ int
	for _, t := range r.Tables {
		if !t.Equal {
			differ++
		}
	}
	s := fmt.Sprintf("%s compared in %.1fs: ", plural(len(r.Tables), "table"), r.Seconds)
	switch {
	case r.Interrupted:
		s = "interrupted: " + s
	case r.Failed > 0:
		s = "check failed: " + s
	}
	if differ == 0 && r.Failed == 0 {
		s += "source and target are equal"
	} else {
		s += fmt.Sprintf("%d differ (%s, %s)", differ, plural(int(r.DifferingRows), "differing row"), plural(r.SchemaDifferences, "schema difference"))
	}
	if r.ChunksResumed > 0 {
		s += fmt.Sprintf("; %s resumed from the checkpoint, not checked again", plural(r.ChunksResumed, "finished chunk"))
	}
	return s
}

// recheckSentence says what comparing differing chunks again after the
// follower caught up found; "" when no chunk was compared again.
func recheckSentence(r *Report) string {
	if r.ChunksRechecked == 0 {
		return ""
	}
	what := "chunks that differed"
	if r.ChunksRechecked == 1 {
		what = "chunk that differed"
	}
	s := fmt.Sprintf("rechecked %d %s while the target was being followed: %d matched on a recheck, %d still differ",
		r.ChunksRechecked, what, r.ChunksRechecked-r.ChunksStillDiffering, r.ChunksStillDiffering)
	if r.AlignedRechecks > 0 {
		s += fmt.Sprintf(" (%d rechecks read both sides at one position of the source's binary log)", r.AlignedRechecks)
	}
	return s
}

func dataState(t *TableReport) string {
	switch {
	case t.Error != "":
		return "failed"
	case t.DifferingRows > 0:
		return rowsDiffer(t.DifferingRows)
	case hasSchemaKind(t, "table_missing_on_target", "table_extra_on_target"):
		return "-"
	}
	return "equal"
}

func hasSchemaKind(t *TableReport, kinds ...string) bool {
	for _, d := range t.SchemaDifferences {
		for _, k := range kinds {
			if d.Kind == k {
				return true
			}
		}
	}
	return false
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func product(s target.Server) string {
	if s.Version == "" {
		return "unknown server"
	}
	return string(s.Flavour) + " " + s.Version
}

// rules are the comparison rules, stated in every report; the second is
// the checksum's.
func rules(c checksum) []string {
	return append([]string{ruleKeys, c.rule()}, valueRules...)
}

const ruleKeys = "rows are matched by the primary key, else a unique key on NOT NULL columns; tables with neither are compared as multisets of whole rows (duplicates counted)"

var valueRules = []string{
	"NULL equals only NULL: not '', not 0, not the text 'NULL'",
	"text: the same characters after conversion to utf8mb4 (case, accents and the trailing spaces of VARCHAR and TEXT count; a latin1 and a utf8mb4 copy of the same text are equal); binary: the same bytes",
	"integers and DECIMAL: the same exact value (1.5 = 1.50)",
	"FLOAT: equal within a relative 1e-6; DOUBLE: within a relative 1e-12 (larger differences always change the checksum)",
	"TIMESTAMP: the same instant (UNIX_TIMESTAMP, session time_zone '+00:00' on both sides); DATETIME and TIME: the same value to the microsecond, whatever the declared precision",
	"JSON: the same document (member order and whitespace ignored, numbers by value)",
	"only columns present on both sides are compared; key ranges and row order use one comparison on both sides (binary for text keys)",
}

func rowsDiffer(n int64) string {
	if n == 1 {
		return "1 row differs"
	}
	return fmt.Sprintf("%d rows differ", n)
}
