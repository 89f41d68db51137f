package segment

import (
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/shakedown/shakedown/internal/usage"
)

// Sequence is the whole split into consecutive segments, given by their
// boundaries: 0, then each segment's To, ending at 1 (k6 writes the same
// thing as --execution-segment-sequence). Every runner of one load is given
// the same sequence.
type Sequence []Frac

// Equal is the sequence of n equal parts: 0, 1/n, ..., 1.
func Equal(n int64) Sequence {
	q := make(Sequence, 0, n+1)
	for i := int64(0); i <= n; i++ {
		f, _ := fracOf(big.NewRat(i, n))
		q = append(q, f)
	}
	return q
}

// Around is the shortest sequence that holds s: N equal parts when s is
// one of them, else s with what lies before and after it.
func Around(s Segment) Sequence {
	if _, n, ok := s.Part(); ok {
		return Equal(n)
	}
	q := Sequence{{0, 1}}
	if s.From.Num != 0 {
		q = append(q, s.From)
	}
	q = append(q, s.To)
	if s.To.Num != s.To.Den {
		q = append(q, Frac{1, 1})
	}
	return q
}

// ParseSequence reads --segment-sequence: the boundaries in order, comma
// separated, from 0 to 1 (e.g. 0,1/4,1/2,1). A set that leaves part of the
// load to no runner, or gives part of it to two, is refused with the gap or
// the overlap named.
func ParseSequence(s string) (Sequence, error) {
	parts := strings.Split(s, ",")
	q := make(Sequence, 0, len(parts))
	for _, p := range parts {
		f, err := parseFrac(p)
		if err != nil {
			return nil, usage.Errorf("--segment-sequence %q: %v; write the boundaries from 0 to 1, e.g. 0,1/4,1/2,1", s, err)
		}
		q = append(q, f)
	}
	if len(q) < 2 {
		return nil, usage.Errorf("--segment-sequence %q: give at least two boundaries, 0 and 1, e.g. 0,1/2,1", s)
	}
	for i := 1; i < len(q); i++ {
		switch q[i].Cmp(q[i-1]) {
		case 0:
			return nil, usage.Errorf("--segment-sequence %q: %s appears twice in a row: the segment %s:%s is empty", s, q[i], q[i-1], q[i])
		case -1:
			return nil, usage.Errorf("--segment-sequence %q: overlap %s:%s (boundaries must go up: %s comes after %s)", s, q[i], q[i-1], q[i], q[i-1])
		}
	}
	if q[0].Num != 0 {
		return nil, usage.Errorf("--segment-sequence %q: gap 0:%s, which no runner would drive; start at 0", s, q[0])
	}
	if last := q[len(q)-1]; last.Num != last.Den {
		return nil, usage.Errorf("--segment-sequence %q: gap %s:1, which no runner would drive; end at 1", s, last)
	}
	return q, nil
}

// String writes q as --segment-sequence takes it.
func (q Sequence) String() string {
	b := make([]string, len(q))
	for i, f := range q {
		b[i] = f.String()
	}
	return strings.Join(b, ",")
}

// Label is how s, one of q's segments, is shown and labelled: I/N when q
// is N equal parts, else FROM:TO.
func (q Sequence) Label(s Segment) string {
	if i, n, ok := s.Part(); ok && int(n) == q.Len() {
		return strconv.FormatInt(i, 10) + "/" + strconv.FormatInt(n, 10)
	}
	return s.String()
}

// Len is the number of segments.
func (q Sequence) Len() int { return len(q) - 1 }

// At is the k-th segment, counted from 0 as Kubernetes' JOB_COMPLETION_INDEX
// is.
func (q Sequence) At(k int) (Segment, error) {
	if k < 0 || k >= q.Len() {
		return Segment{}, usage.Errorf("segment index %d is outside the sequence's %d segments (indexes count from 0 to %d)", k, q.Len(), q.Len()-1)
	}
	return Segment{From: q[k], To: q[k+1]}, nil
}

// Segments lists q's segments in order.
func (q Sequence) Segments() []Segment {
	out := make([]Segment, q.Len())
	for k := range out {
		out[k], _ = q.At(k)
	}
	return out
}

// Index is the place of s in q (from 0). A segment that is not one of q's
// is refused, naming the segments of q it overlaps.
func (q Sequence) Index(s Segment) (int, error) {
	var over []string
	for k, t := range q.Segments() {
		if t == s {
			return k, nil
		}
		if s.From.Cmp(t.To) < 0 && t.From.Cmp(s.To) < 0 {
			over = append(over, t.String())
		}
	}
	return 0, usage.Errorf("--segment %s is not one of --segment-sequence %s: it overlaps %s; give a segment of the sequence, e.g. %s",
		s, q, strings.Join(over, " and "), q.Segments()[0])
}

// Cover checks that segs, the segments of the runners of one load, cover
// it exactly once: no gap, no overlap. Its error names the first gap or
// overlap it finds.
func Cover(segs []Segment) error {
	if len(segs) == 0 {
		return usage.Errorf("no segment: gap 0:1")
	}
	s := append([]Segment(nil), segs...)
	sort.Slice(s, func(i, j int) bool {
		if c := s[i].From.Cmp(s[j].From); c != 0 {
			return c < 0
		}
		return s[i].To.Cmp(s[j].To) < 0
	})
	at := Frac{0, 1}
	for i, g := range s {
		switch c := g.From.Cmp(at); {
		case c > 0:
			return usage.Errorf("segments leave gap %s:%s, which no runner drives", at, g.From)
		case c < 0:
			prev := s[i-1]
			end := g.To
			if prev.To.Cmp(end) < 0 {
				end = prev.To
			}
			return usage.Errorf("segments %s and %s overlap on %s:%s, which two runners would drive", prev, g, g.From, end)
		}
		at = g.To
	}
	if at.Num != at.Den {
		return usage.Errorf("segments leave gap %s:1, which no runner drives", at)
	}
	return nil
}
