package stall

import (
	"fmt"
	"strings"

	"github.com/shakedown/shakedown/internal/result"
)

// waitsCol is the column labelCapture adds to the processlist.
const waitsCol = "waits_or_blocks"

// waits is who waits for what in one capture, read from its processlist,
// lock waits and transactions.
type waits struct {
	// order is the sessions that wait or block, as first met.
	order []string
	// holders are, for each session waiting for an InnoDB lock, the
	// sessions it waits for that wait for nothing themselves; queued those
	// that wait too (waiters ahead of it for the same lock).
	holders, queued map[string][]string
	lockType        map[string]string // of the lock a session waits for
	since           map[string]string // when its lock wait started
	// other is a wait the processlist shows (a metadata lock, a table
	// lock), or a transaction in LOCK WAIT the lock waits do not name.
	other map[string]string
	// blocked are the sessions each session blocks; blockRow its first
	// lock wait row as the blocking side.
	blocked  map[string]map[string]bool
	blockRow map[string][]string
	lw       *result.StallSection
}

// column returns the index of name in sec's columns, or -1.
func column(sec *result.StallSection, name string) int {
	if sec == nil {
		return -1
	}
	for i, c := range sec.Columns {
		if strings.EqualFold(c, name) {
			return i
		}
	}
	return -1
}

// readWaits reads the sections of a capture into who waits for whom. A
// section that was not read adds nothing.
func readWaits(secs []result.StallSection) *waits {
	find := func(name string) *result.StallSection {
		for i := range secs {
			if secs[i].Name == name && secs[i].Error == "" {
				return &secs[i]
			}
		}
		return nil
	}
	w := &waits{holders: map[string][]string{}, queued: map[string][]string{}, lockType: map[string]string{},
		since: map[string]string{}, other: map[string]string{}, blocked: map[string]map[string]bool{}, blockRow: map[string][]string{}}
	seen := map[string]bool{}
	meet := func(id string) {
		if !seen[id] {
			seen[id] = true
			w.order = append(w.order, id)
		}
	}
	// The processlist's lock states: a wait InnoDB's tables do not show.
	if pl := find("processlist"); pl != nil {
		ii, si := column(pl, "Id"), column(pl, "State")
		for _, r := range pl.Rows {
			if ii < 0 || si < 0 {
				break
			}
			if st := r[si]; strings.HasPrefix(st, "Waiting for ") && (strings.Contains(st, "lock") || strings.Contains(st, "flush")) {
				w.other[r[ii]] = "w" + st[1:]
				meet(r[ii])
			}
		}
	}
	waiting := map[string]bool{}
	if lw := find("lock_waits"); lw != nil {
		wi, bi, bst, lt, ws := column(lw, "waiting_id"), column(lw, "blocking_id"), column(lw, "blocking_state"), column(lw, "lock_type"), column(lw, "wait_started")
		if wi >= 0 && bi >= 0 {
			w.lw = lw
			for _, r := range lw.Rows {
				waiting[r[wi]] = true
			}
			for _, r := range lw.Rows {
				wid, bid := r[wi], r[bi]
				meet(bid)
				meet(wid)
				// A blocking session that waits itself is queued for the
				// same lock ahead of this one, or waits for another.
				if waiting[bid] || bst >= 0 && r[bst] == "LOCK WAIT" || w.other[bid] != "" {
					w.queued[wid] = appendNew(w.queued[wid], bid)
				} else {
					w.holders[wid] = appendNew(w.holders[wid], bid)
				}
				if lt >= 0 && w.lockType[wid] == "" {
					w.lockType[wid] = r[lt]
				}
				if ws >= 0 && w.since[wid] == "" {
					w.since[wid] = r[ws]
				}
				if w.blocked[bid] == nil {
					w.blocked[bid] = map[string]bool{}
					w.blockRow[bid] = r
				}
				w.blocked[bid][wid] = true
			}
		}
	}
	// A transaction in LOCK WAIT that the lock waits do not name (read a
	// moment apart, or cut to the capture's bounds) waits all the same.
	if tx := find("transactions"); tx != nil {
		ii, si := column(tx, "id"), column(tx, "state")
		for _, r := range tx.Rows {
			if ii >= 0 && si >= 0 && r[si] == "LOCK WAIT" && !waiting[r[ii]] && w.other[r[ii]] == "" {
				w.other[r[ii]] = "waiting for an InnoDB lock (its holder not in the lock waits read)"
				meet(r[ii])
			}
		}
	}
	return w
}

func appendNew(list []string, id string) []string {
	for _, x := range list {
		if x == id {
			return list
		}
	}
	return append(list, id)
}

// waitsFor says what id waits for, or "" when it waits for nothing.
func (w *waits) waitsFor(id string) string {
	if h, q := w.holders[id], w.queued[id]; len(h) > 0 || len(q) > 0 {
		kind := "an InnoDB lock"
		switch w.lockType[id] {
		case "RECORD":
			kind = "a row lock"
		case "TABLE":
			kind = "a table lock"
		}
		s := "waiting for " + kind
		if len(h) > 0 {
			s += " held by " + strings.Join(h, ", ")
		}
		if len(q) > 0 {
			if len(h) > 0 {
				s += ","
			}
			s += " queued behind " + strings.Join(q, ", ") + ", waiting too"
		}
		if since := w.since[id]; since != "" && since != "NULL" {
			s += " since " + since
		}
		return s
	}
	return w.other[id]
}

// blocks says whom id blocks, or "".
func (w *waits) blocks(id string) string {
	n := len(w.blocked[id])
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("blocking %d sessions", n)
}

// label is id's "waiting for ..." and "blocking N sessions", or "".
func (w *waits) label(id string) string {
	var parts []string
	if s := w.waitsFor(id); s != "" {
		parts = append(parts, s)
	}
	if s := w.blocks(id); s != "" {
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// labelWaits adds column waits_or_blocks to the processlist of a
// capture's sections: for each session, what it waits for (a row lock
// held by whom, a metadata lock) and how many sessions it blocks.
func labelWaits(secs []result.StallSection) {
	w := readWaits(secs)
	for i := range secs {
		pl := &secs[i]
		if pl.Name != "processlist" || pl.Error != "" || column(pl, waitsCol) >= 0 {
			continue
		}
		ii := column(pl, "Id")
		if ii < 0 {
			return
		}
		pl.Columns = append(pl.Columns, waitsCol)
		for j, r := range pl.Rows {
			pl.Rows[j] = append(r, w.label(r[ii]))
		}
	}
}

// Blockers reads a capture's sections for the sessions that block others
// and wait for nothing themselves (no lock wait, no lock state in the
// processlist, no transaction in LOCK WAIT), each as "ID (STATE since
// STARTED: QUERY), blocking N sessions", in the order the lock waits first
// name them. Waiters queued for one row block one another too; these are
// where the queue starts.
func Blockers(secs []result.StallSection) []string {
	w := readWaits(secs)
	if w.lw == nil {
		return nil
	}
	bq, bs, bst := column(w.lw, "blocking_query"), column(w.lw, "blocking_started"), column(w.lw, "blocking_state")
	if bq < 0 || bs < 0 || bst < 0 {
		return nil
	}
	var out []string
	for _, id := range w.order {
		r := w.blockRow[id]
		if r == nil || w.waitsFor(id) != "" || r[bst] == "LOCK WAIT" {
			continue
		}
		out = append(out, fmt.Sprintf("%s (%s since %s: %s), %s", id, r[bst], r[bs], r[bq], w.blocks(id)))
	}
	return out
}
