package verify

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/shakedown/shakedown/internal/escape"
)

// fixHeader starts the repair SQL: the session settings its literals
// assume. TIMESTAMP values are written in UTC; NO_AUTO_VALUE_ON_ZERO keeps
// an id of 0 from becoming a new auto-increment value; the sql_mode also
// drops NO_BACKSLASH_ESCAPES (the literals use backslash escapes) and
// strictness (zero dates are written back as they were read). The client
// is named because the file may hold DELIMITER commands (triggers
// recreated), which only the command-line clients read.
const fixHeader = `-- Repair SQL written by shakedown verify: it makes the target's rows equal
-- to the source's. shakedown never runs it. Review it, then apply it to the
-- target with the mariadb (or mysql) client, e.g.:
--   mariadb --comments -h TARGET-HOST -u USER -p < FILE
-- source: %s
-- target: %s
`

// fixSQLMode is the repair's sql_mode.
const fixSQLMode = "NO_AUTO_VALUE_ON_ZERO"

const fixSettings = `SET NAMES utf8mb4;
SET time_zone = '+00:00';
SET SESSION sql_mode = '` + fixSQLMode + `';
SET foreign_key_checks = 0;
`

const fixFooter = "SET foreign_key_checks = 1;\n"

// fixWriter serializes repair statements from many workers onto one
// writer. Safe for concurrent use. Nothing reaches the file before begin
// (the head, which names the tables with triggers); comments made before
// it are held until then.
type fixWriter struct {
	mu             sync.Mutex
	w              *bufio.Writer
	err            error
	source, target string
	mode           FixTriggers
	begun          bool
	held           []string
}

func newFixWriter(w io.Writer, source, target string, mode FixTriggers) *fixWriter {
	return &fixWriter{w: bufio.NewWriter(w), source: source, target: target, mode: mode}
}

// begin writes the head of the file: where it comes from, what it does
// about the tables with triggers, the session settings; then the comments
// held so far.
func (f *fixWriter) begin(tables []*tableJob) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.beginLocked(tables)
}

func (f *fixWriter) beginLocked(tables []*tableJob) {
	if f.begun {
		return
	}
	f.begun = true
	fmt.Fprintf(f.w, fixHeader, f.source, f.target)
	triggerSection(f.w, f.mode, tables)
	io.WriteString(f.w, fixSettings)
	for _, line := range f.held {
		fmt.Fprintf(f.w, "-- %s\n", line)
	}
	f.held = nil
}

// write adds a chunk's statements: deletes first, so that a re-inserted
// row cannot collide with one about to go.
func (f *fixWriter) write(t *tableJob, diffs []*RowDiff) {
	if f == nil || len(diffs) == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return
	}
	f.beginLocked(nil)
	var stmts []string
	for _, kinds := range [][]string{{KindExtra}, {KindMissing, KindChanged}} {
		for _, d := range diffs {
			if d.Kind != kinds[0] && (len(kinds) < 2 || d.Kind != kinds[1]) {
				continue
			}
			stmts = append(stmts, d.fix...)
		}
	}
	fmt.Fprintf(f.w, "-- %s\n", t.name)
	if len(t.triggers) > 0 {
		writeTriggerBlock(f.w, f.mode, t, stmts)
	} else {
		fmt.Fprintf(f.w, "%s\n", triggerGuard(t))
		for _, s := range stmts {
			if _, err := io.WriteString(f.w, s+"\n"); err != nil {
				f.err = err
				return
			}
		}
	}
}

// comment adds a comment line (schema differences, tables it cannot fix).
func (f *fixWriter) comment(text string) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, line := range strings.Split(text, "\n") {
		if !f.begun {
			f.held = append(f.held, line)
			continue
		}
		fmt.Fprintf(f.w, "-- %s\n", line)
	}
}

// close writes the footer and flushes.
func (f *fixWriter) close() error {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.beginLocked(nil)
	if f.err == nil {
		_, f.err = io.WriteString(f.w, fixFooter)
	}
	if err := f.w.Flush(); f.err == nil {
		f.err = err
	}
	if f.err != nil {
		return fmt.Errorf("write repair SQL: %w", f.err)
	}
	return nil
}

// writableCols lists the indexes of the columns repair SQL may set.
func (t *tableJob) writableCols() []int {
	var out []int
	for i, s := range t.specs {
		if s.writable {
			out = append(out, i)
		}
	}
	return out
}

// replaceSQL writes a source row onto the target.
func (t *tableJob) replaceSQL(r *fetchedRow) []string {
	return []string{t.rowStatement("REPLACE", r)}
}

// insertSQL adds a source row to a table without a key.
func (t *tableJob) insertSQL(r *fetchedRow) string { return t.rowStatement("INSERT", r) }

func (t *tableJob) rowStatement(verb string, r *fetchedRow) string {
	var cols, vals []string
	for _, i := range t.writableCols() {
		cols = append(cols, escape.Ident(t.specs[i].Name))
		vals = append(vals, valueLiteral(t.specs[i], r.val[i]))
	}
	return verb + " INTO " + t.dstName + " (" + strings.Join(cols, ",") + ") VALUES (" + strings.Join(vals, ",") + ");"
}

// deleteSQL removes a target row by key.
func (t *tableJob) deleteSQL(k *keyTuple) []string {
	return []string{"DELETE FROM " + t.dstName + " WHERE " + t.keyCondition(k) + " LIMIT 1;"}
}

// updateSQL sets the changed columns of a target row to the source's values.
func (t *tableJob) updateSQL(r *fetchedRow, cols []int) []string {
	var sets, skipped []string
	for _, i := range cols {
		s := t.specs[i]
		if !s.writable {
			skipped = append(skipped, s.Name)
			continue
		}
		sets = append(sets, escape.Ident(s.Name)+" = "+valueLiteral(s, r.val[i]))
	}
	var out []string
	if len(skipped) > 0 {
		out = append(out, "-- generated on the target, not set: "+strings.Join(skipped, ", "))
	}
	if len(sets) > 0 {
		out = append(out, "UPDATE "+t.dstName+" SET "+strings.Join(sets, ", ")+" WHERE "+t.keyCondition(r.key)+" LIMIT 1;")
	}
	return out
}

func (t *tableJob) keyCondition(k *keyTuple) string {
	var conds []string
	for i, kc := range t.key.cols {
		var lit string
		switch {
		case k.native[i] == nil:
			conds = append(conds, escape.Ident(kc.spec.Name)+" IS NULL")
			continue
		case kc.arg == 'i':
			lit = string(k.native[i])
		case kc.arg == 'b':
			lit = hexLiteral(k.native[i])
		default:
			lit = stringLiteral(k.native[i])
		}
		conds = append(conds, escape.Ident(kc.spec.Name)+" = "+lit)
	}
	return strings.Join(conds, " AND ")
}

var numberRE = regexp.MustCompile(`^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$`)

// valueLiteral writes a value as SQL.
func valueLiteral(s *colSpec, v []byte) string {
	switch {
	case v == nil:
		return "NULL"
	case s.binary:
		return hexLiteral(v)
	case s.numeric && numberRE.Match(v):
		return string(v)
	}
	return stringLiteral(v)
}

func hexLiteral(v []byte) string { return "x'" + hex.EncodeToString(v) + "'" }

// stringLiteral quotes text with the escapes of mysql_real_escape_string;
// bytes that are not UTF-8 are written as a hex string with a utf8mb4
// introducer.
func stringLiteral(v []byte) string {
	if !utf8.Valid(v) {
		return "_utf8mb4 " + hexLiteral(v)
	}
	var b strings.Builder
	b.Grow(len(v) + 2)
	b.WriteByte('\'')
	for _, c := range v {
		switch c {
		case 0:
			b.WriteString(`\0`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\\':
			b.WriteString(`\\`)
		case '\'':
			b.WriteString(`\'`)
		case 0x1a:
			b.WriteString(`\Z`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}
