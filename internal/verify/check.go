package verify

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"

	"github.com/shakedown/shakedown/internal/target"
)

// sums is a chunk's checksum on one side.
type sums struct {
	n int64
	a big.Int
}

func (s *sums) equal(o *sums) bool { return s.n == o.n && s.a.Cmp(&o.a) == 0 }

// minus is s - o: the checksum of the rows of s not in o, since the
// aggregates are sums.
func (s *sums) minus(o *sums) *sums {
	r := &sums{n: s.n - o.n}
	r.a.Sub(&s.a, &o.a)
	return r
}

// Thresholds of the row phase.
const (
	streamRows   = 5_000 // ranges this small are streamed rather than split
	splitBudget  = 32    // splits per chunk before streaming what is left
	fetchBatch   = 200   // keys per row fetch
	resolveBatch = 2_000 // keys whose full rows are held at once
	hashBatch    = 500   // hashes per keyless row fetch
)

// both runs f for the source and the target at once and returns the first
// error.
func both(fs, fd func() error) error {
	var wg sync.WaitGroup
	var errD error
	wg.Add(1)
	go func() {
		defer wg.Done()
		errD = fd()
	}()
	errS := fs()
	wg.Wait()
	if errS != nil {
		return errS
	}
	return errD
}

// whereClause joins the chunk predicate and --where into a WHERE clause.
func (t *tableJob) whereClause(pred string) string { return WhereClause(pred, t.opts.Where) }

// where is --where alone, after prefix ("WHERE" or "AND"), or "".
func (t *tableJob) where(prefix string) string {
	if t.opts.Where == "" {
		return ""
	}
	return " " + prefix + " (" + t.opts.Where + ")"
}

// sideName and sideHint pick the source's or the target's.
func (t *tableJob) sideName(src bool) string {
	if src {
		return t.srcName
	}
	return t.dstName
}

func (t *tableJob) sideHint(src bool) string {
	if t.key.Index == "" || t.scheme == schemeSingle {
		return ""
	}
	if src {
		return hint(t.key.srcHint)
	}
	return hint(t.key.dstHint)
}

// checksum computes one side's checksum of a chunk.
func (t *tableJob) checksum(ctx context.Context, q querier, src bool, c *chunk) (*sums, error) {
	pred, args := c.predicate(t.key)
	query := "SELECT " + t.checksumSQL + " FROM " + t.sideName(src) + t.sideHint(src) + t.whereClause(pred)
	var n int64
	parts := make([]string, t.r.checksum.sumColumns())
	dest := []any{&n}
	for i := range parts {
		dest = append(dest, &parts[i])
	}
	if err := q.QueryRowContext(ctx, query, args...).Scan(dest...); err != nil {
		return nil, fmt.Errorf("checksum %s %s on the %s: %w", t.name, c, role(src), err)
	}
	s := &sums{n: n}
	// Several parts are 16-bit quarters, highest first.
	v := new(big.Int)
	for _, p := range parts {
		x, ok := parseSum(p)
		if !ok {
			return nil, fmt.Errorf("checksum %s on the %s: unexpected sum %q", t.name, role(src), p)
		}
		if len(parts) > 1 {
			v.Lsh(v, 16)
		}
		v.Add(v, x)
	}
	s.a.Set(v)
	return s, nil
}

func role(src bool) string {
	if src {
		return "source"
	}
	return "target"
}

// chunkOutcome is what checking one chunk found.
type chunkOutcome struct {
	rowsSource, rowsTarget int64
	diffs                  []*RowDiff
	settled                int // whole-chunk comparisons again after Settle (not kept in a checkpoint)
}

// checkChunk compares one chunk: checksums on both sides at once, and when
// they differ, narrows the difference down to rows. Each side reads one
// snapshot in a read-only transaction. A recheck (aligned) with
// Options.Align reads the two sides at one position of the source's
// binary log.
func (t *tableJob) checkChunk(ctx context.Context, c *chunk, aligned bool) (*chunkOutcome, error) {
	var txS, txD Snapshot
	var err error
	if aligned && t.r.opts.Align != nil {
		txS, txD, err = t.alignedSnapshots(ctx)
		if errors.Is(err, ErrNotAligned) && t.r.opts.Settle != nil {
			err = t.r.opts.Settle(ctx)
		}
		if err != nil && !errors.Is(err, ErrNotAligned) {
			return nil, err
		}
	}
	if txS == nil {
		err = both(func() (err error) { txS, err = snapshotOf(ctx, t.r.src); return },
			func() (err error) { txD, err = snapshotOf(ctx, t.r.dst); return })
	}
	for _, tx := range []Snapshot{txS, txD} {
		if tx != nil {
			defer tx.Rollback() //nolint:errcheck // read-only: nothing to keep
		}
	}
	if err != nil {
		return nil, err
	}
	var ss, sd *sums
	if err := both(func() (err error) { ss, err = t.checksum(ctx, txS, true, c); return },
		func() (err error) { sd, err = t.checksum(ctx, txD, false, c); return }); err != nil {
		return nil, err
	}
	out := &chunkOutcome{rowsSource: ss.n, rowsTarget: sd.n}
	if ss.equal(sd) {
		return out, nil
	}
	if t.key.Index == "" {
		out.diffs, err = t.keylessDiff(ctx, txS, txD)
		return out, err
	}
	budget := splitBudget
	ranges, err := t.narrow(ctx, txS, txD, c, ss, sd, &budget)
	if err != nil {
		return nil, err
	}
	var keys []*keyTuple
	for _, r := range ranges {
		k, err := t.mergeRange(ctx, txS, txD, r)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k...)
	}
	out.diffs, err = t.resolve(ctx, txS, txD, keys)
	return out, err
}

// alignedSnapshots opens the source's snapshot through Options.Align,
// which returns once the target holds what that snapshot holds, then the
// target's, read once so that its snapshot exists, before the follower
// goes on.
func (t *tableJob) alignedSnapshots(ctx context.Context) (Snapshot, Snapshot, error) {
	txS, release, err := t.r.opts.Align(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer release()
	txD, err := readTx(ctx, t.r.dst)
	if err == nil {
		var one sql.NullInt64
		err = txD.QueryRowContext(ctx, "SELECT 1 FROM "+t.dstName+" LIMIT 1").Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			err = nil
		}
	}
	if err != nil {
		txS.Rollback() //nolint:errcheck // read-only
		if txD != nil {
			txD.Rollback() //nolint:errcheck // read-only
		}
		return nil, nil, fmt.Errorf("target: open the recheck's snapshot: %w", err)
	}
	t.r.aligned.Add(1)
	return txS, txD, nil
}

// narrow splits a mismatched chunk and keeps the parts that still differ,
// until they are small enough to stream.
func (t *tableJob) narrow(ctx context.Context, txS, txD querier, c *chunk, ss, sd *sums, budget *int) ([]*chunk, error) {
	if max(ss.n, sd.n) <= streamRows || *budget <= 0 {
		return []*chunk{c}, nil
	}
	left, right, err := t.split(ctx, txS, c, ss.n)
	if err != nil || left == nil {
		return []*chunk{c}, err
	}
	*budget--
	var ls, ld *sums
	if err := both(func() (err error) { ls, err = t.checksum(ctx, txS, true, left); return },
		func() (err error) { ld, err = t.checksum(ctx, txD, false, left); return }); err != nil {
		return nil, err
	}
	rs, rd := ss.minus(ls), sd.minus(ld)
	var out []*chunk
	for _, part := range []struct {
		c      *chunk
		s, d   *sums
		differ bool
	}{{left, ls, ld, !ls.equal(ld)}, {right, rs, rd, !rs.equal(rd)}} {
		if !part.differ {
			continue
		}
		sub, err := t.narrow(ctx, txS, txD, part.c, part.s, part.d, budget)
		if err != nil {
			return nil, err
		}
		out = append(out, sub...)
	}
	return out, nil
}

// split halves a chunk, or returns nil when it cannot be split.
func (t *tableJob) split(ctx context.Context, txS querier, c *chunk, sourceRows int64) (*chunk, *chunk, error) {
	switch {
	case c.Nulls || t.scheme == schemeSingle:
		return nil, nil, nil
	case t.scheme == schemeInt:
		lo, hi := c.ILo, c.IHi
		if lo == nil {
			lo = t.minKey
		}
		if hi == nil {
			hi = t.maxKey
		}
		if lo == nil || hi == nil || lo.Cmp(hi) >= 0 {
			return nil, nil, nil
		}
		mid := new(big.Int).Add(lo, hi)
		mid.Rsh(mid, 1) // floor((lo+hi)/2), also for negatives
		return &chunk{ILo: c.ILo, IHi: mid}, &chunk{ILo: new(big.Int).Add(mid, big.NewInt(1)), IHi: c.IHi}, nil
	}
	if sourceRows < 2 {
		return nil, nil, nil
	}
	pred, args := c.predicate(t.key)
	q := "SELECT " + strings.Join(t.key.selectList()[:len(t.key.cols)], ",") + " FROM " + t.srcName + t.sideHint(true) + t.whereClause(pred) +
		" ORDER BY " + nativeOrder(t.key) + fmt.Sprintf(" LIMIT 1 OFFSET %d", sourceRows/2-1)
	rows, err := txS.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("split %s %s: %w", t.name, c, err)
	}
	defer rows.Close()
	if !rows.Next() {
		return nil, nil, target.CloseRows(rows)
	}
	raw := make([]sql.RawBytes, len(t.key.cols))
	dest := make([]any, len(raw))
	for i := range raw {
		dest[i] = &raw[i]
	}
	if err := rows.Scan(dest...); err != nil {
		return nil, nil, fmt.Errorf("split %s %s: %w", t.name, c, err)
	}
	mid := make([]Value, len(raw))
	for i, b := range raw {
		mid[i] = Value{B: append([]byte{}, b...), Null: b == nil}
	}
	return &chunk{WLo: c.WLo, WHi: mid}, &chunk{WLo: mid, WHi: c.WHi}, target.CloseRows(rows)
}
