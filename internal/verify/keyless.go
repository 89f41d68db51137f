package verify

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/shakedown/shakedown/internal/target"
)

// keylessDiff compares a table without a usable key as two multisets of
// whole rows: both sides count their rows per row hash (GROUP BY the hash,
// so duplicates count and nothing is cut at max_sort_length), in hash
// order, and the counts are merged.
func (t *tableJob) keylessDiff(ctx context.Context, qS, qD querier) ([]*RowDiff, error) {
	query := "SELECT " + t.hashSQL + " AS h, COUNT(*) FROM " + t.srcName + t.where("WHERE") + " GROUP BY h ORDER BY h"
	queryD := "SELECT " + t.hashSQL + " AS h, COUNT(*) FROM " + t.dstName + t.where("WHERE") + " GROUP BY h ORDER BY h"
	var rs, rd *sql.Rows
	if err := both(func() (err error) { rs, err = qS.QueryContext(ctx, query); return },
		func() (err error) { rd, err = qD.QueryContext(ctx, queryD); return }); err != nil {
		if rs != nil {
			rs.Close()
		}
		if rd != nil {
			rd.Close()
		}
		return nil, fmt.Errorf("count rows of %s by hash: %w", t.name, err)
	}
	defer rs.Close()
	defer rd.Close()
	type hc struct {
		h    string
		n    int64
		done bool
	}
	read := func(rows *sql.Rows, into *hc) error {
		if !rows.Next() {
			into.done = true
			return target.CloseRows(rows)
		}
		return rows.Scan(&into.h, &into.n)
	}
	var s, d hc
	if err := read(rs, &s); err != nil {
		return nil, err
	}
	if err := read(rd, &d); err != nil {
		return nil, err
	}
	missing, extra := map[string]int64{}, map[string]int64{}
	for !s.done || !d.done {
		switch {
		case d.done || (!s.done && s.h < d.h):
			missing[s.h] = s.n
			if err := read(rs, &s); err != nil {
				return nil, err
			}
		case s.done || d.h < s.h:
			extra[d.h] = d.n
			if err := read(rd, &d); err != nil {
				return nil, err
			}
		default:
			if s.n > d.n {
				missing[s.h] = s.n - d.n
			} else if d.n > s.n {
				extra[d.h] = d.n - s.n
			}
			if err := read(rs, &s); err != nil {
				return nil, err
			}
			if err := read(rd, &d); err != nil {
				return nil, err
			}
		}
	}
	var srcRows, dstRows map[string]*fetchedRow
	if err := both(func() (err error) {
		srcRows, err = t.rowsByHash(ctx, qS, true, slices.Sorted(maps.Keys(missing)))
		return
	},
		func() (err error) {
			dstRows, err = t.rowsByHash(ctx, qD, false, slices.Sorted(maps.Keys(extra)))
			return
		}); err != nil {
		return nil, err
	}
	t.pairWithinRules(missing, extra, srcRows, dstRows)
	var out []*RowDiff
	for _, h := range slices.Sorted(maps.Keys(missing)) {
		if r := srcRows[h]; r != nil {
			out = append(out, t.keylessRowDiff(KindMissing, h, r, missing[h]))
		}
	}
	for _, h := range slices.Sorted(maps.Keys(extra)) {
		if r := dstRows[h]; r != nil {
			out = append(out, t.keylessRowDiff(KindExtra, h, r, extra[h]))
		}
	}
	return out, nil
}

// pairWithinRules cancels a missing row against an extra row that equals
// it under the comparison rules (floats within tolerance, the same JSON):
// their hashes differ only because the texts do.
func (t *tableJob) pairWithinRules(missing, extra map[string]int64, srcRows, dstRows map[string]*fetchedRow) {
	loose := false
	for _, s := range t.specs {
		loose = loose || s.rule != ruleExact
	}
	if !loose || len(missing)*len(extra) > 1_000_000 {
		return
	}
	for _, hs := range slices.Sorted(maps.Keys(missing)) {
		for _, hd := range slices.Sorted(maps.Keys(extra)) {
			if missing[hs] == 0 || extra[hd] == 0 || srcRows[hs] == nil || dstRows[hd] == nil {
				continue
			}
			equal := true
			for i, spec := range t.specs {
				if !valuesEqual(spec, srcRows[hs].cmp[i], dstRows[hd].cmp[i]) {
					equal = false
					break
				}
			}
			if equal {
				n := min(missing[hs], extra[hd])
				missing[hs] -= n
				extra[hd] -= n
			}
		}
	}
	for h, n := range missing {
		if n == 0 {
			delete(missing, h)
		}
	}
	for h, n := range extra {
		if n == 0 {
			delete(extra, h)
		}
	}
}

// rowsByHash reads one row per given hash from one side. Each query scans
// the table, so a few batches of hashes are looked up with IN lists, and
// more in one pass over the whole table that keeps the rows wanted: many
// differing rows cost one scan, not one per batch.
func (t *tableJob) rowsByHash(ctx context.Context, q querier, src bool, hashes []string) (map[string]*fetchedRow, error) {
	out := map[string]*fetchedRow{}
	if len(hashes) == 0 {
		return out, nil
	}
	var queries []string
	var argSets [][]any
	if len(hashes) > 4*hashBatch {
		queries = []string{"SELECT " + t.hashSQL + "," + t.rowSelect() + " FROM " + t.sideName(src) + t.where("WHERE")}
		argSets = [][]any{nil}
	} else {
		for start := 0; start < len(hashes); start += hashBatch {
			batch := hashes[start:min(start+hashBatch, len(hashes))]
			args := make([]any, len(batch))
			for i, h := range batch {
				args[i] = h
			}
			queries = append(queries, "SELECT "+t.hashSQL+","+t.rowSelect()+" FROM "+t.sideName(src)+
				" WHERE "+t.hashSQL+" IN ("+strings.TrimSuffix(strings.Repeat("?,", len(batch)), ",")+")"+t.where("AND"))
			argSets = append(argSets, args)
		}
	}
	wanted := make(map[string]bool, len(hashes))
	for _, h := range hashes {
		wanted[h] = true
	}
	for i, query := range queries {
		err := t.readDiffering(ctx, q, src, query, argSets[i], 1+t.rowWidth(), func(raw []sql.RawBytes) {
			h := string(raw[0])
			if wanted[h] && out[h] == nil {
				out[h] = t.scanRow(raw[1:])
			}
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// keylessRowDiff describes count copies of a whole row on one side only;
// its key is the whole row.
func (t *tableJob) keylessRowDiff(kind, hash string, r *fetchedRow, count int64) *RowDiff {
	d := &RowDiff{Kind: kind, Count: count, id: hash}
	for i, s := range t.specs {
		d.Key = append(d.Key, KeyPart{Column: s.Name, Value: displayValue(r.val[i], s.binary)})
	}
	var comment bytes.Buffer
	comment.WriteString("-- ")
	comment.WriteString(strings.ReplaceAll(kind, "_", " "))
	if count > 1 {
		comment.WriteString(" x" + strconv.FormatInt(count, 10))
	}
	comment.WriteString(": (")
	for i, s := range t.specs {
		if i > 0 {
			comment.WriteString(", ")
		}
		comment.WriteString(oneLine(valueLiteral(s, r.val[i])))
	}
	comment.WriteString(")")
	d.fix = []string{comment.String()}
	if kind == KindMissing {
		for range count {
			d.fix = append(d.fix, t.insertSQL(r))
		}
	} else {
		d.fix = append(d.fix, fmt.Sprintf("DELETE FROM %s WHERE %s = '%s' LIMIT %d;", t.dstName, t.hashSQL, hash, count))
	}
	return d
}

// oneLine keeps a comment on one line.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	s = strings.ReplaceAll(s, "\r", `\r`)
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
