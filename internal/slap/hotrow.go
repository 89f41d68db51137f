package slap

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/target"
)

// hotRow is the hot-row statement of a --query list, when it has one: an
// UPDATE that moves one integer column by a constant on the rows a WHERE
// picks, such as the flash sale's
//
//	UPDATE items SET stock = stock - 1 WHERE id = 1 AND stock > 0
//
// Each row it changes (its affected rows) moves the column by step, so the
// column's sum over the rows the key part of the WHERE names must move by
// step times the affected rows the server acknowledged. A server that
// merges concurrent updates of one row instead of serialising them moves
// it by less: it lost updates, and its speed means nothing. mysqlslap
// cannot see this; slap reads the sum before and after each iteration.
type hotRow struct {
	table, column string
	step          int64  // +N or -N
	key           string // the WHERE's conjuncts that do not name the column
}

var (
	hotIdent = "(?:`[^`]+`|[A-Za-z_][A-Za-z0-9_$]*)"
	hotRowRE = regexp.MustCompile(`(?is)^\s*UPDATE\s+(` + hotIdent + `(?:\.` + hotIdent + `)?)\s+SET\s+(` + hotIdent + `)\s*=\s*(` + hotIdent + `)\s*([-+])\s*(\d+)\s+WHERE\s+(.+?)\s*$`)
	andRE    = regexp.MustCompile(`(?i)\s+AND\s+`)
	// Where the WHERE has more than a plain AND of comparisons, the
	// split below could be wrong: no check then.
	notPlainRE = regexp.MustCompile(`(?i)['"()?;]|\bOR\b|\bXOR\b|\bLIMIT\b|\bORDER\b|\bBETWEEN\b|\bNOT\b|\|\||&&`)
	writeRE    = regexp.MustCompile(`(?i)^\s*(INSERT|UPDATE|DELETE|REPLACE|LOAD|TRUNCATE|ALTER|DROP|CALL)\b`)
	beginRE    = regexp.MustCompile(`(?i)^\s*(BEGIN|START\s+TRANSACTION)\b`)
	commitRE   = regexp.MustCompile(`(?i)^\s*COMMIT\b`)
	rollbackRE = regexp.MustCompile(`(?i)^\s*ROLLBACK\b`)
	// A list that turns autocommit off, or ends transactions in ways the
	// tally does not follow (savepoints, XA), is not checked.
	untrackedRE = regexp.MustCompile(`(?i)\bAUTOCOMMIT\b|\bSAVEPOINT\b|^\s*XA\b|\bCHAIN\b|\bRELEASE\b`)
)

// Transaction statements of a list, which the tally follows.
const (
	txnNone = iota
	txnBegin
	txnCommit
	txnRollback
)

func txnKind(q string) uint8 {
	switch {
	case beginRE.MatchString(q):
		return txnBegin
	case commitRE.MatchString(q):
		return txnCommit
	case rollbackRE.MatchString(q):
		return txnRollback
	}
	return txnNone
}

// findHotRow finds the one hot-row statement of the list, and marks it.
// There is none when no statement has that shape, when two differ, or
// when another statement writes to its table: the sum would then move
// for reasons the check does not count.
func findHotRow(query []stmt) *hotRow {
	var h *hotRow
	for i := range query {
		st := &query[i]
		if untrackedRE.MatchString(st.text) {
			unmark(query)
			return nil
		}
		st.txn = txnKind(st.text)
		if st.kind != plain {
			continue
		}
		got := parseHotRow(st.text)
		switch {
		case got == nil:
			continue
		case h != nil && *got != *h:
			unmark(query)
			return nil
		}
		h = got
		st.hot = true
	}
	if h == nil {
		return nil
	}
	bare := strings.ToLower(unquote(h.table[strings.LastIndex(h.table, ".")+1:]))
	for _, st := range query {
		if !st.hot && writeRE.MatchString(st.text) && strings.Contains(strings.ToLower(st.text), bare) {
			unmark(query)
			return nil
		}
	}
	return h
}

func unmark(query []stmt) {
	for i := range query {
		query[i].hot = false
	}
}

// parseHotRow reads one statement as a hot-row update, or nil.
func parseHotRow(q string) *hotRow {
	m := hotRowRE.FindStringSubmatch(strings.TrimSuffix(strings.TrimSpace(q), ";"))
	if m == nil || !strings.EqualFold(unquote(m[2]), unquote(m[3])) || notPlainRE.MatchString(m[6]) {
		return nil
	}
	n, err := strconv.ParseInt(m[5], 10, 64)
	if err != nil || n == 0 {
		return nil
	}
	if m[4] == "-" {
		n = -n
	}
	col := regexp.MustCompile(`(?i)(^|[^A-Za-z0-9_$` + "`" + `])` + "`?" + regexp.QuoteMeta(unquote(m[2])) + "`?" + `($|[^A-Za-z0-9_$` + "`" + `])`)
	var key []string
	for _, c := range andRE.Split(m[6], -1) {
		if !col.MatchString(c) {
			key = append(key, strings.TrimSpace(c))
		}
	}
	if len(key) == 0 {
		return nil
	}
	return &hotRow{table: m[1], column: m[2], step: n, key: strings.Join(key, " AND ")}
}

func unquote(id string) string { return strings.Trim(id, "`") }

// readBound bounds each read of the hot row's sum: a row lock held
// past it is a server that will not answer, not a figure.
const readBound = 30 * time.Second

// read is the column's sum over the rows the key names.
func (h *hotRow) read(ctx context.Context, conn *sql.Conn) (int64, error) {
	var v sql.NullString
	q := "SELECT SUM(" + h.column + ") FROM " + h.table + " WHERE " + h.key
	ctx, cancel := context.WithTimeout(ctx, readBound)
	defer cancel()
	if err := conn.QueryRowContext(ctx, q).Scan(&v); err != nil {
		return 0, fmt.Errorf("hot-row check: %s: %w", q, err)
	}
	if !v.Valid {
		return 0, nil
	}
	if n, err := strconv.ParseInt(v.String, 10, 64); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(v.String, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, fmt.Errorf("hot-row check: %s gave %q, not a whole number", q, v.String)
	}
	return int64(f), nil
}

// what names what is read, for people.
func (h *hotRow) what() string {
	return fmt.Sprintf("sum of %s in %s where %s", unquote(h.column), unquote(h.table), h.key)
}

// hotCount is one client's count of the hot-row statement's rows, which
// follows the list's own transactions: rows changed inside one count once
// it commits, and not when it rolls back.
type hotCount struct {
	rows, unsure int64 // committed rows; statements whose outcome is unknown
	pending      int64 // rows changed in the open transaction
	open         bool
}

// ok counts a statement that succeeded, having changed n rows.
func (c *hotCount) ok(st stmt, n int64) {
	switch {
	case st.hot && c.open:
		c.pending += n
	case st.hot:
		c.rows += n
	case st.txn == txnBegin:
		c.rows += c.pending // BEGIN commits the transaction open before it
		c.pending, c.open = 0, true
	case st.txn == txnCommit:
		c.rows += c.pending
		c.pending, c.open = 0, false
	case st.txn == txnRollback:
		c.pending, c.open = 0, false
	}
}

// failed counts a statement that failed with code; lost says the
// connection went with it, so that its outcome is unknown.
func (c *hotCount) failed(st stmt, code uint16, lost bool) {
	switch {
	case lost:
		if st.hot && !c.open {
			c.unsure++
		}
		if c.open && (c.pending > 0 || st.hot) {
			// A COMMIT without an answer may have committed.
			c.unsure += max(c.pending, 1)
		}
		c.pending, c.open = 0, false
	case c.open && (st.txn == txnCommit || code == target.ERLockDeadlock || code == target.ERErrorDuringCommit):
		// A deadlock or a failed commit (a cluster's certification
		// failure) rolls the whole transaction back.
		c.pending, c.open = 0, false
	}
}

// closed is the end of the client's session (or its reconnect): a
// transaction still open is rolled back by the server.
func (c *hotCount) closed() { c.pending, c.open = 0, false }

// hotTally is what one level's iterations say about the hot row.
type hotTally struct {
	iterations        int
	before, after     int64 // the first iteration's before, the last one's after
	observed          int64 // the change, summed over the iterations
	committed, unsure int64 // rows changed as acknowledged; statements whose answer was lost
}

// add counts one iteration that changed the sum from before to after
// with rows acknowledged and unsure statements.
func (t *hotTally) add(before, after, rows, unsure int64) {
	if t.iterations == 0 {
		t.before = before
	}
	t.iterations++
	t.after = after
	t.observed += after - before
	t.committed += rows
	t.unsure += unsure
}

// check compares the change with the acknowledged updates: nil when no
// iteration was checked.
func (t *hotTally) check(h *hotRow) *result.DataCheck {
	if t == nil || t.iterations == 0 {
		return nil
	}
	before, after, what := t.before, t.after, h.what()
	if t.iterations > 1 {
		// Each iteration may start from rows made again: only the
		// changes add up.
		before, after = 0, t.observed
		what += fmt.Sprintf(" (%d iterations, their changes added up)", t.iterations)
	}
	c := result.NewDataCheck(what, before, after, t.committed, t.committed*h.step, t.unsure, h.step)
	if s := abs(h.step); s > 1 {
		// In updates, not in units of the column: a part of one
		// update lost still counts as one.
		c.LostUpdates = (c.LostUpdates + sign(c.LostUpdates)*(s-1)) / s
	}
	return c
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

func sign(n int64) int64 {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}
