package verify

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/shakedown/shakedown/internal/escape"
	"github.com/shakedown/shakedown/internal/target"
)

// rowStream reads one side's rows of a range: key and row hash, in key
// order.
type rowStream struct {
	rows *sql.Rows
	raw  []sql.RawBytes
	dest []any
	key  *keyTuple
	hash []byte
	done bool
}

func (t *tableJob) openStream(ctx context.Context, q querier, src bool, c *chunk) (*rowStream, error) {
	pred, args := c.predicate(t.key)
	query := "SELECT " + strings.Join(t.key.selectList(), ",") + "," + t.hashSQL + " FROM " + t.sideName(src) +
		t.sideHint(src) + t.whereClause(pred) + " ORDER BY " + t.key.orderBy()
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read rows of %s %s on the %s: %w", t.name, c, role(src), err)
	}
	s := &rowStream{rows: rows, raw: make([]sql.RawBytes, t.key.width()+1)}
	s.dest = make([]any, len(s.raw))
	for i := range s.raw {
		s.dest[i] = &s.raw[i]
	}
	return s, nil
}

func (s *rowStream) next(k *keyInfo) error {
	if !s.rows.Next() {
		s.done = true
		return target.CloseRows(s.rows)
	}
	if err := s.rows.Scan(s.dest...); err != nil {
		return err
	}
	vals := make([]any, len(s.raw)-1)
	for i := range vals {
		vals[i] = []byte(s.raw[i])
	}
	s.key = k.tupleFrom(vals)
	s.hash = append(s.hash[:0], s.raw[len(s.raw)-1]...)
	return nil
}

// mergeRange streams a range from both sides in key order and returns the
// keys whose rows differ or exist on one side only.
func (t *tableJob) mergeRange(ctx context.Context, txS, txD querier, c *chunk) ([]*keyTuple, error) {
	var ss, sd *rowStream
	if err := both(func() (err error) { ss, err = t.openStream(ctx, txS, true, c); return },
		func() (err error) { sd, err = t.openStream(ctx, txD, false, c); return }); err != nil {
		if ss != nil {
			ss.rows.Close()
		}
		if sd != nil {
			sd.rows.Close()
		}
		return nil, err
	}
	defer ss.rows.Close()
	defer sd.rows.Close()
	var out []*keyTuple
	if err := ss.next(t.key); err != nil {
		return nil, err
	}
	if err := sd.next(t.key); err != nil {
		return nil, err
	}
	for !ss.done || !sd.done {
		var r int
		switch {
		case ss.done:
			r = 1
		case sd.done:
			r = -1
		default:
			r = t.key.compareKeys(ss.key, sd.key)
		}
		switch {
		case r < 0: // on the source only
			out = append(out, ss.key)
			if err := ss.next(t.key); err != nil {
				return nil, err
			}
		case r > 0: // on the target only
			out = append(out, sd.key)
			if err := sd.next(t.key); err != nil {
				return nil, err
			}
		default:
			if !bytes.Equal(ss.hash, sd.hash) {
				out = append(out, ss.key)
			}
			if err := ss.next(t.key); err != nil {
				return nil, err
			}
			if err := sd.next(t.key); err != nil {
				return nil, err
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// fetchedRow is one row read for comparison: canonical forms and values.
type fetchedRow struct {
	key *keyTuple
	cmp [][]byte // per spec; nil = NULL
	val [][]byte // per spec; nil = NULL
}

// rowSelect is the select list of a full row read: key, then per column
// its canonical form and, where different, its value.
func (t *tableJob) rowSelect() string {
	parts := t.key.selectList()
	for _, s := range t.specs {
		parts = append(parts, s.cmp)
		if s.val != s.cmp {
			parts = append(parts, s.val)
		}
	}
	return strings.Join(parts, ",")
}

func (t *tableJob) scanRow(raw []sql.RawBytes) *fetchedRow {
	vals := make([]any, t.key.width())
	for i := range vals {
		vals[i] = []byte(raw[i])
	}
	r := &fetchedRow{key: t.key.tupleFrom(vals), cmp: make([][]byte, len(t.specs)), val: make([][]byte, len(t.specs))}
	j := t.key.width()
	for i, s := range t.specs {
		r.cmp[i] = cloneRaw(raw[j])
		j++
		if s.val != s.cmp {
			r.val[i] = cloneRaw(raw[j])
			j++
		} else {
			r.val[i] = r.cmp[i]
		}
	}
	return r
}

func cloneRaw(b sql.RawBytes) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

func (t *tableJob) rowWidth() int {
	n := t.key.width()
	for _, s := range t.specs {
		n++
		if s.val != s.cmp {
			n++
		}
	}
	return n
}

// fetchRows reads the rows with the given keys from one side, by canonical
// key.
func (t *tableJob) fetchRows(ctx context.Context, q querier, src bool, keys []*keyTuple) (map[string]*fetchedRow, error) {
	out := map[string]*fetchedRow{}
	for start := 0; start < len(keys); start += fetchBatch {
		batch := keys[start:min(start+fetchBatch, len(keys))]
		pred, args := t.keyIn(batch)
		query := "SELECT " + t.rowSelect() + " FROM " + t.sideName(src) + t.whereClause(pred)
		err := t.readDiffering(ctx, q, src, query, args, t.rowWidth(), func(raw []sql.RawBytes) {
			r := t.scanRow(raw)
			out[t.key.canonKey(r.key)] = r
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readDiffering runs one query for differing rows on one side and hands
// each row to take as width raw values, valid until the next row.
func (t *tableJob) readDiffering(ctx context.Context, q querier, src bool, query string, args []any, width int, take func(raw []sql.RawBytes)) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("read differing rows of %s on the %s: %w", t.name, role(src), err)
	}
	raw := make([]sql.RawBytes, width)
	dest := make([]any, len(raw))
	for i := range raw {
		dest[i] = &raw[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return fmt.Errorf("read differing rows of %s on the %s: %w", t.name, role(src), err)
		}
		take(raw)
	}
	if err := target.CloseRows(rows); err != nil {
		return fmt.Errorf("read differing rows of %s on the %s: %w", t.name, role(src), err)
	}
	return nil
}

// keyIn is a condition matching the given keys.
func (t *tableJob) keyIn(keys []*keyTuple) (string, []any) {
	var args []any
	if len(t.key.cols) == 1 {
		kc := t.key.cols[0]
		for _, k := range keys {
			args = append(args, kc.argOf(k.native[0]))
		}
		return escape.Ident(kc.spec.Name) + " IN (" + strings.TrimSuffix(strings.Repeat("?,", len(keys)), ",") + ")", args
	}
	var ors []string
	for _, k := range keys {
		var ands []string
		for i, kc := range t.key.cols {
			ands = append(ands, escape.Ident(kc.spec.Name)+" = ?")
			args = append(args, kc.argOf(k.native[i]))
		}
		ors = append(ors, "("+strings.Join(ands, " AND ")+")")
	}
	return "(" + strings.Join(ors, " OR ") + ")", args
}

// resolve reads the rows of the given keys on both sides and says how each
// differs, if it still does; rows equal under the comparison rules (floats
// within tolerance, the same JSON) are dropped.
func (t *tableJob) resolve(ctx context.Context, qS, qD querier, keys []*keyTuple) ([]*RowDiff, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	// One entry per key, in key order. A key with a NULL (possible on the
	// target only) cannot be read back by key: such a row is extra.
	sort.SliceStable(keys, func(i, j int) bool { return t.key.compareKeys(keys[i], keys[j]) < 0 })
	uniq := keys[:0:0]
	seen := map[string]bool{}
	var out []*RowDiff
	for _, k := range keys {
		if slices.ContainsFunc(k.native, func(v []byte) bool { return v == nil }) {
			out = append(out, t.newRowDiff(KindExtra, k, nil, t.deleteSQL(k)))
			continue
		}
		ck := t.key.canonKey(k)
		if !seen[ck] {
			seen[ck] = true
			uniq = append(uniq, k)
		}
	}
	// Read in batches, so that only one batch of full rows is held at a
	// time however many rows of the range differ.
	for start := 0; start < len(uniq); start += resolveBatch {
		diffs, err := t.resolveBatch(ctx, qS, qD, uniq[start:min(start+resolveBatch, len(uniq))])
		if err != nil {
			return nil, err
		}
		out = append(out, diffs...)
	}
	return out, nil
}

// resolveBatch is resolve for keys without NULLs, each once.
func (t *tableJob) resolveBatch(ctx context.Context, qS, qD querier, keys []*keyTuple) ([]*RowDiff, error) {
	var rs, rd map[string]*fetchedRow
	if err := both(func() (err error) { rs, err = t.fetchRows(ctx, qS, true, keys); return },
		func() (err error) { rd, err = t.fetchRows(ctx, qD, false, keys); return }); err != nil {
		return nil, err
	}
	var out []*RowDiff
	for _, k := range keys {
		ck := t.key.canonKey(k)
		s, d := rs[ck], rd[ck]
		switch {
		case s == nil && d == nil:
			continue
		case d == nil:
			out = append(out, t.newRowDiff(KindMissing, s.key, nil, t.replaceSQL(s)))
		case s == nil:
			out = append(out, t.newRowDiff(KindExtra, d.key, nil, t.deleteSQL(d.key)))
		default:
			var cols []int
			for i, spec := range t.specs {
				if !valuesEqual(spec, s.cmp[i], d.cmp[i]) {
					cols = append(cols, i)
				}
			}
			if len(cols) == 0 {
				continue
			}
			names := make([]string, len(cols))
			changes := make([]Change, len(cols))
			for i, c := range cols {
				names[i] = t.specs[c].Name
				changes[i] = Change{Column: names[i], Source: displayValue(s.val[c], t.specs[c].binary), Target: displayValue(d.val[c], t.specs[c].binary)}
			}
			rd := t.newRowDiff(KindChanged, s.key, names, t.updateSQL(s, cols))
			rd.Changes = changes
			out = append(out, rd)
		}
	}
	return out, nil
}

// newRowDiff describes one differing row of a keyed table.
func (t *tableJob) newRowDiff(kind string, k *keyTuple, cols []string, fix []string) *RowDiff {
	d := &RowDiff{Kind: kind, Columns: cols, Count: 1, fix: fix, id: t.key.canonKey(k), native: k}
	for i, kc := range t.key.cols {
		d.Key = append(d.Key, KeyPart{Column: kc.spec.Name, Value: displayValue(k.native[i], kc.spec.binary)})
	}
	return d
}
