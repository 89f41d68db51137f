package bisect

import (
	"context"
	"errors"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/stats"
)

// The search is adaptive group testing over the differing variables: apply
// the candidate's values of a group on the control and measure. A group
// that does not move the control is cleared whole; one that does is split
// in two and each half is tested, down to single variables; one left open
// by the measurements stays whole, inconclusive. With one cause
// among n variables that is 2 rounds per halving, 2 x log2(n) in all. A
// group that moves the control while neither half does holds variables that
// matter only together; they are narrowed down (ddmin style: the smallest
// part of one half that still moves the control with the other half
// applied, then the same for the other half) and reported as an
// interaction.
//
// Then the rest is applied on top of the causes found, in one round: a
// variable can matter only once another is applied (innodb_flush_log_at_
// trx_commit hardly matters while sync_binlog=1 makes every commit wait for
// an fsync anyway). If the rest moves the control further, the same search
// runs within it, each round measured against the control with the causes
// applied.

// tester measures the control with the candidate's values of the variables
// in set and in on (indexes into the search's variables) applied, and
// compares it with the control with those of on alone applied.
type tester interface {
	test(ctx context.Context, set, on []int, roundsLeft int) (*round, error)
	// beyond reports whether b's effect clearly exceeds a's (each against
	// its own control runs).
	beyond(a, b *round) bool
}

// round is one configuration of the control, measured.
type round struct {
	set     []int
	on      []int
	samples []float64
	vs      result.Effect // against the control with on applied
	// leans is set when vs is inconclusive but its ratio lies beyond the
	// threshold.
	leans bool
}

// errBudget stops the search with the answer so far.
var errBudget = errors.New("budget spent")

// Classes of a variable after the search.
const (
	classCause        = "cause"
	classInteraction  = "interaction"
	classTogether     = "together"
	classOnTop        = "on top"
	classCleared      = "cleared"
	classInconclusive = "inconclusive"
	classUnresolved   = "unresolved"
)

// group is variables found to matter together, and the round that showed
// it (which may have held variables cleared on their own too).
type group struct {
	vars []int
	r    *round
}

// outcome is what the search found.
type outcome struct {
	class        []string // per variable
	alone        []string // per variable, its class before the second phase
	interactions []group  // groups that matter only together
	// together are groups shown to matter whose parts were not shown to
	// matter alone, nor not to (inconclusive): the smallest sets found.
	together []group
	// eliminated are causes named by elimination: their group moved the
	// control, the rest of it was cleared, and they alone were left open.
	eliminated []group
	// on are the causes found first; rest is the round with every other
	// variable applied on top of them, and onTop what was found to move
	// the control further from there.
	on     []int
	rest   *round
	onTop  []group
	tested map[string]*round
	// stopped is errBudget when the budget ended the search.
	stopped error
}

// round returns the round of set measured on top of on, if any.
func (o *outcome) round(set, on []int) *round { return o.tested[roundKey(set, on)] }

type searcher struct {
	t tester
	n int
	// kind names what a variable acts on (its group among the variables
	// known to change performance, "" for the others): a group is split
	// along it first. apart marks variables split from the others next:
	// those applied by a restart, so that few rounds need one.
	kind    func(int) string
	apart   func(int) bool
	out     *outcome
	on      []int    // applied under every round of the current phase
	second  bool     // the second phase: on top of the causes
	cur     []string // the current phase's class of each variable
	pending int      // rounds the search still expects, for the ETA
}

// search finds which of n variables move the control. all is the round
// with every variable applied, already measured. kind and apart, when not
// nil, say how to split a group before halving it (see split).
func search(ctx context.Context, t tester, n int, all *round, kind func(int) string, apart func(int) bool) (*outcome, error) {
	s := &searcher{t: t, n: n, kind: kind, apart: apart, out: &outcome{class: make([]string, n), tested: map[string]*round{}}}
	s.cur = s.out.class
	s.out.tested[roundKey(all.set, nil)] = all
	if !all.vs.Differs() && !all.leans {
		// Nothing to narrow down: all of them together do not move the
		// control (or not clearly, and not even their ratio lies beyond
		// the threshold). A round that only leans is searched all the
		// same: the first comparison already showed a difference, and one
		// noisy round should not end the bisect.
		class := classInconclusive
		if all.vs.State == stats.Same {
			class = classCleared
		}
		s.mark(all.set, class)
		s.out.alone = append([]string(nil), s.out.class...)
		return s.out, nil
	}
	s.expect(n)
	_, _, err := s.explore(ctx, all)
	s.out.alone = append([]string(nil), s.out.class...)
	if err == nil {
		err = s.onTop(ctx, all)
	}
	if errors.Is(err, errBudget) {
		s.out.stopped = err
		err = nil
	}
	for i, c := range s.out.class {
		if c == "" {
			s.out.class[i] = classUnresolved
		}
		if s.out.alone[i] == "" {
			s.out.alone[i] = classUnresolved
		}
	}
	return s.out, err
}

// onTop is the second phase: the rest on top of the causes found. It is
// skipped when the causes alone, already measured, moved the control about
// as far as every variable applied did and none of the rest was left open.
func (s *searcher) onTop(ctx context.Context, all *round) error {
	var on, rest []int
	for i, c := range s.out.class {
		switch c {
		case classCause, classInteraction, classTogether:
			on = append(on, i)
		default:
			rest = append(rest, i)
		}
	}
	if len(on) == 0 || len(rest) == 0 {
		return nil
	}
	open := false
	for _, i := range rest {
		open = open || s.out.class[i] == classInconclusive
	}
	if r := s.out.round(on, nil); r != nil && !open && !s.t.beyond(r, all) {
		// The causes alone moved the control as far as everything did,
		// and nothing else is left open.
		return nil
	}
	s.on, s.second, s.cur = on, true, make([]string, s.n)
	s.out.on = on
	r, err := s.test(ctx, rest)
	if err != nil {
		return err
	}
	s.out.rest = r
	if !r.vs.Differs() {
		return nil
	}
	s.expect(len(rest))
	_, _, err = s.explore(ctx, r)
	for i, c := range s.cur {
		if c == classCause {
			s.out.onTop = append(s.out.onTop, group{vars: []int{i}, r: s.out.round([]int{i}, on)})
		}
		switch c {
		case classCause, classInteraction, classTogether:
			s.out.class[i] = classOnTop
		}
	}
	return err
}

// expect adds the rounds a group of size k needs when one variable in it
// matters.
func (s *searcher) expect(k int) {
	if k > 1 {
		s.pending += 2 * int(math.Ceil(math.Log2(float64(k))))
	}
}

// test measures set on top of the phase's variables, once: a round already
// measured is not measured again.
func (s *searcher) test(ctx context.Context, set []int) (*round, error) {
	set = sorted(set)
	k := roundKey(set, s.on)
	if r, ok := s.out.tested[k]; ok {
		return r, nil
	}
	r, err := s.t.test(ctx, set, s.on, s.pending)
	if err != nil {
		return nil, err
	}
	if s.pending > 0 {
		s.pending--
	}
	s.out.tested[k] = r
	return r, nil
}

// explore resolves the variables of a measured group. It reports whether it
// found anything in the group that matters, and whether it left any of
// them inconclusive.
func (s *searcher) explore(ctx context.Context, g *round) (found, open bool, err error) {
	set := g.set
	switch {
	case g.vs.State == stats.Same:
		s.mark(set, classCleared)
		return false, false, nil
	case len(set) == 1:
		if g.vs.Differs() {
			s.mark(set, classCause)
			return true, false, nil
		}
		s.mark(set, classInconclusive)
		return false, true, nil
	case !g.vs.Differs() && !g.leans:
		// Not split: chasing what the measurements cannot resolve costs
		// rounds and resolves nothing. A group whose ratio itself lies
		// beyond the threshold is split all the same: it most likely
		// holds a cause.
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
			if s.open(x) {
				part = append(part, x)
			}
		}
		if len(part) == 1 {
			// The rest of the group was cleared: this one is the cause,
			// by elimination, though alone it was left open.
			s.mark(part, classCause)
			s.out.eliminated = append(s.out.eliminated, group{vars: part, r: g})
			return true, false, nil
		}
		s.mark(part, classTogether)
		s.record(group{vars: part, r: g})
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
	both := union(a, b)
	r, err := s.test(ctx, both)
	if err != nil {
		return false, false, err
	}
	s.mark(both, classInteraction)
	if s.second {
		s.record(group{vars: both, r: r})
	} else {
		s.out.interactions = append(s.out.interactions, group{vars: both, r: r})
	}
	return true, false, nil
}

// record keeps a group found to matter without any of its variables
// alone.
func (s *searcher) record(g group) {
	if s.second {
		s.out.onTop = append(s.out.onTop, g)
		return
	}
	s.out.together = append(s.out.together, g)
}

// open reports whether x was left inconclusive in this phase.
func (s *searcher) open(x int) bool { return s.cur[x] == classInconclusive }

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

// mark classes variables in the current phase.
func (s *searcher) mark(set []int, class string) {
	for _, i := range set {
		s.cur[i] = class
	}
}

// split divides a group in two. The variables of the group's first kind
// (the search's order lists those that change commit cost first) go apart
// from the rest: variables that act on one mechanism tend to matter
// together or not at all, so the rest is often cleared in one round where
// halving would take a round per half. Next the variables kept apart from
// the others, else halves.
func (s *searcher) split(set []int) (left, right []int) {
	if s.kind != nil {
		if k := s.kind(set[0]); k != "" {
			for _, x := range set {
				if s.kind(x) == k {
					left = append(left, x)
				} else {
					right = append(right, x)
				}
			}
			if len(right) > 0 {
				return left, right
			}
			left, right = nil, nil
		}
	}
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

func roundKey(set, on []int) string { return key(set) + "|" + key(on) }
