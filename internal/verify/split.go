package verify

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"github.com/shakedown/shakedown/internal/schema"
	"math/big"
	"strings"
	"time"
)

// Splitter cuts one table of one server into the key ranges verify checks
// (see the package doc, "Keys and chunks"), for other commands that read a
// table by parts, such as copy. Not safe for concurrent use.
type Splitter struct {
	t *tableJob
	p *planner
}

// SplitOptions shape a Splitter's ranges.
type SplitOptions struct {
	// Where limits the rows that ranges are sized by to this condition.
	Where string
	// Rows is the rows per range (default 10,000); ranges of an integer key
	// are computed from the key's density, so they hold about this many.
	Rows int64
	// Replay is the Bounds of ranges an earlier Splitter gave for the same
	// table, in order: they come back first, with their numbers, and new
	// ranges follow the last one.
	Replay []json.RawMessage
}

// Range is one key range of a table.
type Range struct {
	Seq   int
	Where string // the range's condition on the key ("" for all rows)
	Args  []any  // the condition's arguments
	// Bounds is the range in a form for a checkpoint: SplitOptions.Replay
	// takes it back.
	Bounds json.RawMessage
	Label  string // the range for messages
	c      *chunk
}

// WhereClause is the WHERE clause of a range's rows under a filter: its
// condition (Range.Where) and the filter in parentheses (SplitOptions.Where),
// joined with AND, with a leading space; either may be "", and with both ""
// it is "".
func WhereClause(rangeWhere, filter string) string {
	var conds []string
	if rangeWhere != "" {
		conds = append(conds, rangeWhere)
	}
	if filter != "" {
		conds = append(conds, "("+filter+")")
	}
	if len(conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(conds, " AND ")
}

// NewSplitter reads what cutting t needs from db: its key (primary key,
// else the first unique key on NOT NULL columns; none means one range of
// all rows) and, for an integer key, its range.
func NewSplitter(ctx context.Context, db *sql.DB, t *schema.Table, opts SplitOptions) (*Splitter, error) {
	if opts.Rows <= 0 {
		opts.Rows = 10_000
	}
	side := &schema.Side{DB: db}
	r := &runner{src: side, dst: side, opts: Options{Where: opts.Where, chunkRows: int(opts.Rows)}}
	r.opts.defaults()
	tj := r.newTableJob(t, t, &TableReport{})
	var replay []*chunk
	for _, b := range opts.Replay {
		c := &chunk{}
		if err := json.Unmarshal(b, c); err != nil {
			return nil, fmt.Errorf("read range of %s: %w", t.FullName(), err)
		}
		replay = append(replay, c)
	}
	p, err := newPlanner(ctx, tj, replay)
	if err != nil {
		return nil, err
	}
	return &Splitter{t: tj, p: p}, nil
}

// Key names the key's columns; empty when the table has none.
func (s *Splitter) Key() []string { return s.t.key.Names() }

// Next returns the next range, or nil after the last.
func (s *Splitter) Next(ctx context.Context) (*Range, error) {
	c, _, err := s.p.nextChunk(ctx)
	if err != nil || c == nil {
		return nil, err
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("record range of %s: %w", s.t.name, err)
	}
	where, args := c.predicate(s.t.key)
	return &Range{Seq: c.Seq, Where: where, Args: args, Bounds: b, Label: c.String(), c: c}, nil
}

// Observe tells the splitter how many rows a range held, so that the
// ranges of an integer key it cuts next hold about SplitOptions.Rows even
// where the key is sparse or Where keeps few rows. Safe to call from other
// goroutines than the one calling Next.
func (s *Splitter) Observe(r *Range, rows int64) {
	if r == nil || r.c == nil || r.c.ILo == nil || r.c.IHi == nil {
		return
	}
	span := new(big.Int).Sub(r.c.IHi, r.c.ILo)
	span.Add(span, big.NewInt(1))
	s.t.sizer.observe(max(rows, 1), span, time.Second)
}
