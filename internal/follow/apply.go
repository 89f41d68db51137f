package follow

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/shakedown/shakedown/internal/escape"
)

// change is one row to write (REPLACE) or remove (DELETE by key).
type change struct {
	t      *table
	delete bool
	row    []any // converted values, every column
}

// batch is complete transactions waiting to be applied: their changes by
// worker, in binary log order, and the position after the last one.
type batch struct {
	work    [][]change
	rows    int
	txns    int
	end     Position
	moved   bool   // end is past the saved position
	lastTS  uint32 // the last transaction's time on the source
	started time.Time
}

func newBatch(workers int) *batch { return &batch{work: make([][]change, workers)} }

func (b *batch) empty() bool { return b.rows == 0 && !b.moved }

// txn is the changes of the transaction being read.
type txn struct {
	changes []change
	ts      uint32
	parted  bool // part of it was applied already (applyPart)
}

// add appends a transaction's changes to the batch.
func (b *batch) add(t *txn, workers int) {
	if b.started.IsZero() {
		b.started = time.Now()
	}
	for _, c := range t.changes {
		w := c.t.route(c.row, workers)
		b.work[w] = append(b.work[w], c)
	}
	b.rows += len(t.changes)
	if len(t.changes) > 0 || t.parted {
		b.txns++
	}
	if t.ts != 0 {
		b.lastTS = t.ts
	}
}

// maxStatementRows bounds a multi-row statement; maxStatementBytes too,
// roughly, well under max_allowed_packet's smallest usual value.
const (
	maxStatementRows  = 500
	maxStatementBytes = 1 << 20
)

// apply writes the batch: each worker's share in one transaction on a
// connection of its own, all at once. It returns the first error.
func (f *follower) apply(ctx context.Context, b *batch) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, work := range b.work {
		if len(work) == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := applyWork(ctx, f.dst.DB, work); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// applySerial applies the whole batch on one connection, in one
// transaction: each worker's changes in their order one after the other,
// which keeps every key's changes in order (a key belongs to one worker).
func (f *follower) applySerial(ctx context.Context, b *batch) error {
	var all []change
	for _, w := range b.work {
		all = append(all, w...)
	}
	if len(all) == 0 {
		return nil
	}
	return applyWork(ctx, f.dst.DB, all)
}

// collapse keeps the last change of each row (table and key) of one
// worker's share of a batch, grouped by table, deletes before writes: the
// share is applied in one transaction and the position moves only past
// the whole batch, so the rows' states in between need not be written.
// Writing only the final images is the same end: a REPLACE can remove a
// row through another unique key only where that row changed in the
// batch too, and its own final image comes with it.
func collapse(work []change) []change {
	type rowKey struct {
		t   *table
		key string
	}
	keys := make([]rowKey, len(work))
	last := make(map[rowKey]int, len(work))
	var buf []byte
	for i, c := range work {
		buf = buf[:0]
		for _, k := range c.t.key {
			buf = append(keyBytes(c.row[k], buf), 0)
		}
		keys[i] = rowKey{c.t, string(buf)}
		last[keys[i]] = i
	}
	if len(last) == len(work) && len(work) < 2 {
		return work
	}
	order := map[*table]int{}
	kept := make([]change, 0, len(last))
	for i, c := range work {
		if last[keys[i]] != i {
			continue
		}
		if _, ok := order[c.t]; !ok {
			order[c.t] = len(order)
		}
		kept = append(kept, c)
	}
	sort.SliceStable(kept, func(a, b int) bool {
		ta, tb := order[kept[a].t], order[kept[b].t]
		if ta != tb {
			return ta < tb
		}
		return kept[a].delete && !kept[b].delete
	})
	return kept
}

// applyWork applies one worker's changes in one transaction, each row's
// last change only (collapse): runs of changes of one table and kind
// become one multi-row statement.
func applyWork(ctx context.Context, db *sql.DB, work []change) error {
	work = collapse(work)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("target: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it does nothing
	for i := 0; i < len(work); {
		j := i + 1
		size := 0
		for j < len(work) && j-i < maxStatementRows && size < maxStatementBytes &&
			work[j].t == work[i].t && work[j].delete == work[i].delete {
			size += rowSize(work[j].row)
			j++
		}
		stmt, args := statement(work[i:j])
		if _, err := tx.ExecContext(ctx, stmt, args...); err != nil {
			return fmt.Errorf("target: apply %d change(s) to %s: %w", j-i, work[i].t.name, err)
		}
		i = j
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("target: commit: %w", err)
	}
	return nil
}

func rowSize(row []any) int {
	n := 0
	for _, v := range row {
		switch x := v.(type) {
		case []byte:
			n += len(x)
		case string:
			n += len(x)
		default:
			n += 8
		}
	}
	return n
}

// statement is one REPLACE of the rows, or one DELETE of their keys.
func statement(cs []change) (string, []any) {
	t := cs[0].t
	var b strings.Builder
	var args []any
	if !cs[0].delete {
		b.WriteString(t.replace)
		ph := "(" + strings.TrimSuffix(strings.Repeat("?,", len(t.written)), ",") + ")"
		args = eachRow(&b, cs, ph, ",", t.written)
		return b.String(), args
	}
	b.WriteString("DELETE FROM " + t.dst + " WHERE ")
	if len(t.key) == 1 {
		b.WriteString(escape.Ident(t.cols[t.key[0]].Name) + " IN (" + strings.TrimSuffix(strings.Repeat("?,", len(cs)), ",") + ")")
		for _, c := range cs {
			args = append(args, c.row[t.key[0]])
		}
		return b.String(), args
	}
	conds := make([]string, len(t.key))
	for i, k := range t.key {
		conds[i] = escape.Ident(t.cols[k].Name) + " <=> ?"
	}
	one := "(" + strings.Join(conds, " AND ") + ")"
	args = eachRow(&b, cs, one, " OR ", t.key)
	return b.String(), args
}

// eachRow writes one, a row's placeholders, for every change, sep between
// them, and returns the changes' values of the columns cols, in that order.
func eachRow(b *strings.Builder, cs []change, one, sep string, cols []int) []any {
	args := make([]any, 0, len(cs)*len(cols))
	for i, c := range cs {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(one)
		for _, k := range cols {
			args = append(args, c.row[k])
		}
	}
	return args
}
