package bisect

import (
	"context"
	"errors"
	"math"
	"sort"
	"strconv"
	"strings"
)

// The search is adaptive group testing over the differing variables: apply
// the candidate's values of a group on the control and measure. A group
// that does not move the control is cleared whole; one that does is split
// in two and each half is tested, down to single variables. With one cause
// among n variables that is 2 rounds per halving, 2 x log2(n) in all. A
// group that moves the control while neither half does holds variables that
// matter only together; they are narrowed down (ddmin style: the smallest
// part of one half that still moves the control with the other half
// applied, then the same for the other half) and reported as an
// interaction.

// tester measures the control with the candidate's values of the variables
// in set (indexes into the search's variables) applied, and compares it with
// the control as it is.
type tester interface {
	test(ctx context.Context, set []int, roundsLeft int) (*round, error)
}

// round is one configuration of the control, measured.
type round struct {
	set     []int
	samples []float64
	vs      Comparison // against the control as it is
}

// errBudget stops the search with the answer so far.
var errBudget = errors.New("budget spent")

// Classes of a variable after the search.
const (
	classCause        = "cause"
	classInteraction  = "interaction"
	classTogether     = "together"
	classCleared      = "cleared"
	classInconclusive = "inconclusive"
	classUnresolved   = "unresolved"
)

// outcome is what the search found.
type outcome struct {
	class        []string // per variable
	interactions [][]int  // groups that matter only together
	// together are groups shown to matter whose parts were not shown to
	// matter alone, nor not to (inconclusive): the smallest sets found.
	together [][]int
	tested   map[string]*round
	stopped  error // errBudget, or nil when the search finished
}

// cause is a variable found to matter alone, with its round.
func (o *outcome) round(set []int) *round { return o.tested[key(set)] }

type searcher struct {
	t tester
	n int
	// apart marks variables that are split from the others first: those
	// applied by a restart, so that few rounds need one.
	apart   func(int) bool
	out     *outcome
	pending int // rounds the search still expects, for the ETA
}

// search finds which of n variables move the control. all is the round
// with every variable applied, already measured. apart, when not nil,
// marks variables to split from the rest before halving.
func search(ctx context.Context, t tester, n int, all *round, apart func(int) bool) (*outcome, error) {
	s := &searcher{t: t, n: n, apart: apart, out: &outcome{class: make([]string, n), tested: map[string]*round{}}}
	s.out.tested[key(all.set)] = all
	if !all.vs.Differs() {
		// Nothing to narrow down: all of them together do not move the
		// control (or not clearly).
		class := classInconclusive
		if all.vs.State == Same {
			class = classCleared
		}
		s.mark(all.set, class)
		return s.out, nil
	}
	s.expect(n)
	_, _, err := s.explore(ctx, all)
	if errors.Is(err, errBudget) {
		s.out.stopped = err
		err = nil
	}
	for i, c := range s.out.class {
		if c == "" {
			s.out.class[i] = classUnresolved
		}
	}
	return s.out, err
}

// expect adds the rounds a group of size k needs when one variable in it
// matters.
func (s *searcher) expect(k int) {
	if k > 1 {
		s.pending += 2 * int(math.Ceil(math.Log2(float64(k))))
	}
}

// test measures set, once: a set already measured is not measured again.
func (s *searcher) test(ctx context.Context, set []int) (*round, error) {
	set = sorted(set)
	if r, ok := s.out.tested[key(set)]; ok {
		return r, nil
	}
	r, err := s.t.test(ctx, set, s.pending)
	if err != nil {
		return nil, err
	}
	if s.pending > 0 {
		s.pending--
	}
	s.out.tested[key(set)] = r
	return r, nil
}

// explore resolves the variables of a measured group. It reports whether it
// found anything in the group that matters, and whether it left any of
// them inconclusive.
func (s *searcher) explore(ctx context.Context, g *round) (found, open bool, err error) {
	set := g.set
	switch {
	case g.vs.State == Same:
		s.mark(set, classCleared)
		return false, false, nil
	case len(set) == 1:
		if g.vs.Differs() {
			s.mark(set, classCause)
			return true, false, nil
		}
		s.mark(set, classInconclusive)
		return false, true, nil
	}
	left, right := s.split(set)
	s.expect(len(left))
	lr, err := s.test(ctx, left)
	if err != nil {
		return false, false, err
	}
	rr, err := s.test(ctx, right)
	if err != nil {
		return false, false, err
	}
	fl, ol, err := s.explore(ctx, lr)
	if err != nil {
		return false, false, err
	}
	fr, or, err := s.explore(ctx, rr)
	if err != nil {
		return false, false, err
	}
	found, open = fl || fr, ol || or
	if found || !g.vs.Differs() {
		return found, open, nil
	}
	if open {
		// The group matters and nothing in it was shown to alone, but some
		// of it was left open: the open part is the smallest set found.
		var part []int
		for _, x := range set {
			if s.out.class[x] == classInconclusive {
				part = append(part, x)
			}
		}
		s.mark(part, classTogether)
		s.out.together = append(s.out.together, g.set)
		return true, false, nil
	}
	// The group moves the control, and every part of it alone was shown
	// not to: some of its variables matter only together.
	s.expect(len(set))
	a, err := s.minimize(ctx, left, right)
	if err != nil {
		return false, false, err
	}
	b, err := s.minimize(ctx, right, a)
	if err != nil {
		return false, false, err
	}
	group := sorted(append(append([]int(nil), a...), b...))
	if _, err := s.test(ctx, group); err != nil {
		return false, false, err
	}
	s.mark(group, classInteraction)
	s.out.interactions = append(s.out.interactions, group)
	return true, false, nil
}

// minimize returns the smallest part of set found that, with context
// applied too, still moves the control.
func (s *searcher) minimize(ctx context.Context, set, context []int) ([]int, error) {
	if len(set) <= 1 {
		return set, nil
	}
	left, right := halves(set)
	for _, part := range [][]int{left, right} {
		r, err := s.test(ctx, union(part, context))
		if err != nil {
			return nil, err
		}
		if r.vs.Differs() {
			return s.minimize(ctx, part, context)
		}
	}
	// Both halves are needed.
	a, err := s.minimize(ctx, left, union(right, context))
	if err != nil {
		return nil, err
	}
	b, err := s.minimize(ctx, right, union(a, context))
	if err != nil {
		return nil, err
	}
	return union(a, b), nil
}

func (s *searcher) mark(set []int, class string) {
	for _, i := range set {
		s.out.class[i] = class
	}
}

// split divides a group in two: the variables kept apart from the others
// when it holds both kinds, else in halves.
func (s *searcher) split(set []int) (left, right []int) {
	if s.apart != nil {
		for _, x := range set {
			if s.apart(x) {
				left = append(left, x)
			} else {
				right = append(right, x)
			}
		}
		if len(left) > 0 && len(right) > 0 {
			return left, right
		}
	}
	return halves(set)
}

func halves(set []int) (left, right []int) {
	m := (len(set) + 1) / 2
	return append([]int(nil), set[:m]...), append([]int(nil), set[m:]...)
}

func union(a, b []int) []int {
	seen := map[int]bool{}
	var out []int
	for _, xs := range [][]int{a, b} {
		for _, x := range xs {
			if !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		}
	}
	return sorted(out)
}

func sorted(set []int) []int {
	out := append([]int(nil), set...)
	sort.Ints(out)
	return out
}

func key(set []int) string {
	parts := make([]string, len(set))
	for i, x := range sorted(set) {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}
