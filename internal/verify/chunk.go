package verify

import (
	"context"
	"database/sql"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/shakedown/shakedown/internal/escape"
	"github.com/shakedown/shakedown/internal/target"
)

// scheme is how a table is split into chunks.
type scheme string

const (
	// schemeInt: inclusive ranges of the key's first column, an integer;
	// bounds are computed, not read, so planning costs nothing.
	schemeInt scheme = "int"
	// schemeWalk: (lo, hi] ranges of the whole key; each hi is read from the
	// source by walking its index.
	schemeWalk scheme = "walk"
	// schemeSingle: the whole table is one chunk (no key, or a key the two
	// servers order differently).
	schemeSingle scheme = "single"
)

// chunk is one key range of a table, the same on both sides.
type chunk struct {
	Seq   int      `json:"seq"`
	Nulls bool     `json:"nulls,omitempty"` // rows with a NULL in the key (the target's only)
	ILo   *big.Int `json:"ilo,omitempty"`   // schemeInt: inclusive bounds, nil = open
	IHi   *big.Int `json:"ihi,omitempty"`
	WLo   []Value  `json:"wlo,omitempty"` // schemeWalk: exclusive lo, inclusive hi, nil = open
	WHi   []Value  `json:"whi,omitempty"`
}

// String shows the range for messages.
func (c *chunk) String() string {
	switch {
	case c.Nulls:
		return "NULL keys"
	case c.ILo != nil || c.IHi != nil:
		return fmt.Sprintf("[%s, %s]", bigOr(c.ILo, "-inf"), bigOr(c.IHi, "+inf"))
	case c.WLo != nil || c.WHi != nil:
		return fmt.Sprintf("(%s, %s]", tupleOr(c.WLo, "-inf"), tupleOr(c.WHi, "+inf"))
	}
	return "all rows"
}

func bigOr(b *big.Int, s string) string {
	if b == nil {
		return s
	}
	return b.String()
}

func tupleOr(t []Value, s string) string {
	if t == nil {
		return s
	}
	parts := make([]string, len(t))
	for i, v := range t {
		parts[i] = v.display(false)
	}
	return strings.Join(parts, ",")
}

// predicate is the chunk's WHERE condition on one side ("" for all rows).
func (c *chunk) predicate(k *keyInfo) (string, []any) {
	var conds []string
	var args []any
	switch {
	case c.Nulls:
		for _, kc := range k.cols {
			conds = append(conds, escape.Ident(kc.spec.Name)+" IS NULL")
		}
		return "(" + strings.Join(conds, " OR ") + ")", nil
	case c.ILo != nil || c.IHi != nil:
		col := escape.Ident(k.cols[0].spec.Name)
		if c.ILo != nil {
			conds = append(conds, col+" >= ?")
			args = append(args, bigArg(c.ILo))
		}
		if c.IHi != nil {
			conds = append(conds, col+" <= ?")
			args = append(args, bigArg(c.IHi))
		}
	default:
		if c.WLo != nil {
			s, a := tupleCompare(k, c.WLo, 0, ">")
			conds, args = append(conds, s), append(args, a...)
		}
		if c.WHi != nil {
			s, a := tupleCompare(k, c.WHi, 0, "<=")
			conds, args = append(conds, s), append(args, a...)
		}
	}
	if len(conds) == 0 && k.dstNulls {
		// Range bounds exclude NULLs by themselves; an unbounded chunk must
		// leave them to the NULL chunk.
		for _, kc := range k.cols {
			conds = append(conds, escape.Ident(kc.spec.Name)+" IS NOT NULL")
		}
	}
	return strings.Join(conds, " AND "), args
}

// tupleCompare is (k_i, ..., k_n) op (v_i, ..., v_n) for op > or <=,
// expanded into ORs and ANDs that every server's range optimizer reads.
func tupleCompare(k *keyInfo, vals []Value, i int, op string) (string, []any) {
	col := escape.Ident(k.cols[i].spec.Name)
	v := k.cols[i].argOf(vals[i].B)
	if i == len(k.cols)-1 {
		return col + " " + op + " ?", []any{v}
	}
	strict := ">"
	if op == "<=" {
		strict = "<"
	}
	rest, args := tupleCompare(k, vals, i+1, op)
	return "(" + col + " " + strict + " ? OR (" + col + " = ? AND " + rest + "))", append([]any{v, v}, args...)
}

func bigArg(b *big.Int) any {
	if b.IsInt64() {
		return b.Int64()
	}
	if b.IsUint64() {
		return b.Uint64()
	}
	return b.String()
}

// Chunk sizing.
const (
	initialChunkRows = 20_000
	minChunkRows     = 1_000
	maxChunkRows     = 100_000 // bounds what narrowing a mismatched chunk reads again
)

// sizer adapts a table's chunk size to the target time per chunk from the
// rows per second chunks took so far. Safe for concurrent use.
type sizer struct {
	mu      sync.Mutex
	target  time.Duration
	rows    float64 // rows per chunk to aim for
	density float64 // rows per key unit (schemeInt), learnt
	fixed   bool    // rows does not adapt (tests)
}

func newSizer(target time.Duration, density float64) *sizer {
	if density <= 0 {
		density = 1
	}
	return &sizer{target: target, rows: initialChunkRows, density: density}
}

// observe records a finished chunk: rows checked in elapsed, over span key
// units (schemeInt; nil otherwise).
func (s *sizer) observe(rows int64, span *big.Int, elapsed time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rows <= 0 || elapsed <= 0 {
		return
	}
	if !s.fixed {
		want := float64(rows) * float64(s.target) / float64(elapsed)
		// Grow at most 4x at a time: one fast chunk says little.
		want = min(want, s.rows*4)
		s.rows = min(max(0.5*s.rows+0.5*want, minChunkRows), maxChunkRows)
	}
	if span != nil && span.Sign() > 0 {
		f, _ := new(big.Float).SetInt(span).Float64()
		if f > 0 {
			s.density = 0.5*s.density + 0.5*float64(rows)/f
		}
	}
}

func (s *sizer) chunkRows() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int64(s.rows)
}

// step is how many key units the next schemeInt chunk spans.
func (s *sizer) step() *big.Int {
	s.mu.Lock()
	defer s.mu.Unlock()
	units := s.rows / s.density
	if units < 1 {
		units = 1
	}
	b, _ := big.NewFloat(units).Int(nil)
	return b
}

// planner yields a table's chunks in key order, first replaying the chunks
// a checkpoint planned (so that finished ones can be skipped by number),
// then new ones.
type planner struct {
	t      *tableJob
	replay []*chunk
	next   int // sequence number of the next new chunk
	done   bool

	// schemeInt
	min, max *big.Int
	pos      *big.Int // next lo; nil before the first chunk
	started  bool
	// schemeWalk
	wpos []Value
}

// newPlanner reads what the scheme needs from the source.
func newPlanner(ctx context.Context, t *tableJob, replay []*chunk) (*planner, error) {
	p := &planner{t: t, replay: replay}
	for _, c := range replay {
		p.next = max(p.next, c.Seq+1)
	}
	if t.scheme != schemeInt {
		return p, nil
	}
	col := escape.Ident(t.key.cols[0].spec.Name)
	q := "SELECT CAST(MIN(" + col + ") AS CHAR), CAST(MAX(" + col + ") AS CHAR) FROM " + t.srcName + t.where("WHERE")
	var lo, hi sql.NullString
	if err := t.r.src.DB.QueryRowContext(ctx, q).Scan(&lo, &hi); err != nil {
		return nil, fmt.Errorf("read key range of %s: %w", t.name, err)
	}
	if lo.Valid && hi.Valid {
		p.min, _ = new(big.Int).SetString(lo.String, 10)
		p.max, _ = new(big.Int).SetString(hi.String, 10)
	}
	if p.min != nil && p.max != nil && t.estRows > 0 {
		span := new(big.Int).Sub(p.max, p.min)
		span.Add(span, big.NewInt(1))
		f, _ := new(big.Float).SetInt(span).Float64()
		t.sizer.density = float64(t.estRows) / f
	}
	return p, nil
}

// nextChunk returns the next chunk, whether it is a replayed one, or nil at
// the end.
func (p *planner) nextChunk(ctx context.Context) (*chunk, bool, error) {
	if len(p.replay) > 0 {
		c := p.replay[0]
		p.replay = p.replay[1:]
		if len(p.replay) == 0 {
			p.resumeAfter(c)
		}
		return c, true, nil
	}
	if p.done {
		return nil, false, nil
	}
	c, err := p.newChunk(ctx)
	if c != nil {
		c.Seq = p.next
		p.next++
	}
	return c, false, err
}

// resumeAfter sets the position after the last replayed chunk.
func (p *planner) resumeAfter(c *chunk) {
	p.started = true
	if c.Nulls {
		return
	}
	switch p.t.scheme {
	case schemeInt:
		if c.IHi == nil {
			p.done = true
			return
		}
		p.pos = new(big.Int).Add(c.IHi, big.NewInt(1))
	case schemeWalk:
		if c.WHi == nil {
			p.done = true
			return
		}
		p.wpos = c.WHi
	default:
		p.done = true
	}
}

func (p *planner) newChunk(ctx context.Context) (*chunk, error) {
	t := p.t
	if !p.started && t.key.dstNulls {
		p.started = true
		return &chunk{Nulls: true}, nil
	}
	p.started = true
	switch t.scheme {
	case schemeInt:
		c := &chunk{ILo: p.pos}
		if p.min == nil { // the source is empty: one chunk for whatever the target has
			p.done = true
			return c, nil
		}
		from := p.pos
		if from == nil {
			from = p.min
		}
		hi := new(big.Int).Add(from, t.sizer.step())
		hi.Sub(hi, big.NewInt(1))
		if hi.Cmp(p.max) >= 0 {
			p.done = true // the last chunk is open above: it also holds the target's keys past the source's
			return c, nil
		}
		c.IHi = hi
		p.pos = new(big.Int).Add(hi, big.NewInt(1))
		return c, nil
	case schemeWalk:
		c := &chunk{WLo: p.wpos}
		hi, err := p.walk(ctx, p.wpos, t.sizer.chunkRows())
		if err != nil {
			return nil, err
		}
		if hi == nil {
			p.done = true
			return c, nil
		}
		c.WHi = hi
		p.wpos = hi
		return c, nil
	}
	p.done = true
	return &chunk{}, nil
}

// walk reads the key n rows after lo (exclusive) on the source, or nil when
// fewer rows follow.
func (p *planner) walk(ctx context.Context, lo []Value, n int64) ([]Value, error) {
	t := p.t
	var pred string
	var args []any
	if lo != nil {
		pred, args = tupleCompare(t.key, lo, 0, ">")
	}
	q := "SELECT " + strings.Join(t.key.selectList()[:len(t.key.cols)], ",") + " FROM " + t.srcName + hint(t.key.srcHint) +
		t.whereClause(pred)
	q += " ORDER BY " + nativeOrder(t.key) + fmt.Sprintf(" LIMIT 1 OFFSET %d", n-1)
	rows, err := t.r.src.DB.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("walk key of %s: %w", t.name, err)
	}
	defer rows.Close()
	if !rows.Next() {
		return nil, target.CloseRows(rows)
	}
	vals := make([]any, len(t.key.cols))
	raw := make([]sql.RawBytes, len(t.key.cols))
	for i := range raw {
		vals[i] = &raw[i]
	}
	if err := rows.Scan(vals...); err != nil {
		return nil, fmt.Errorf("walk key of %s: %w", t.name, err)
	}
	out := make([]Value, len(raw))
	for i, b := range raw {
		out[i] = Value{B: append([]byte{}, b...), Null: b == nil}
	}
	return out, target.CloseRows(rows)
}

// nativeOrder is ORDER BY the key's columns as stored: the index order.
func nativeOrder(k *keyInfo) string {
	parts := make([]string, len(k.cols))
	for i, c := range k.cols {
		parts[i] = escape.Ident(c.spec.Name)
	}
	return strings.Join(parts, ",")
}

func hint(index string) string {
	if index == "" {
		return ""
	}
	return " FORCE INDEX (" + escape.Ident(index) + ")"
}
