package bisect

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/stats"
)

// model is a fake control: each variable multiplies throughput by its
// effect, a group in together only when all its members are applied, and
// variables in fuzzy read as inconclusive alone. The search is pure logic;
// the servers are in the integration tests.
type model struct {
	effect   map[int]float64
	together map[string]float64 // key(group) -> effect when the whole group is applied
	fuzzy    map[int]bool
	foggy    map[int]bool // any round holding one of these, not moving, is inconclusive
	budget   int          // rounds before errBudget; 0 = no limit
	rounds   int
}

func (m *model) test(_ context.Context, set, on []int, _ int) (*round, error) {
	if m.budget > 0 && m.rounds >= m.budget {
		return nil, errBudget
	}
	m.rounds++
	r := m.ratio(union(set, on)) / m.ratio(on)
	c := result.Effect{Ratio: r, Lo: r * 0.95, Hi: r * 1.05, State: stats.Same}
	switch {
	case len(set) == 1 && len(on) == 0 && m.fuzzy[set[0]]:
		c.State = stats.Inconclusive
	case m.foggyIn(set) && math.Abs(math.Log(r)) <= math.Log(1.2):
		c.State = stats.Inconclusive
	case math.Abs(math.Log(r)) > math.Log(1.2):
		c.State = stats.Faster
		if r < 1 {
			c.State = stats.Slower
		}
	}
	return &round{set: sorted(set), on: sorted(on), vs: c}, nil
}

func (m *model) beyond(a, b *round) bool {
	return math.Abs(math.Log(b.vs.Ratio/a.vs.Ratio)) > math.Log(1.2)
}

func (m *model) foggyIn(set []int) bool {
	for _, x := range set {
		if m.foggy[x] {
			return true
		}
	}
	return false
}

// ratio is the throughput of the control with set applied, relative to
// the control as it is.
func (m *model) ratio(set []int) float64 {
	r := 1.0
	in := map[int]bool{}
	for _, x := range set {
		in[x] = true
		if e, ok := m.effect[x]; ok {
			r *= e
		}
	}
	for k, e := range m.together {
		all := true
		for _, x := range parseKey(k) {
			all = all && in[x]
		}
		if all {
			r *= e
		}
	}
	return r
}

func parseKey(k string) []int {
	var out []int
	n, have := 0, false
	for _, ch := range k + "," {
		if ch == ',' {
			if have {
				out = append(out, n)
			}
			n, have = 0, false
			continue
		}
		n, have = n*10+int(ch-'0'), true
	}
	return out
}

func members(gs []group) [][]int {
	var out [][]int
	for _, g := range gs {
		out = append(out, g.vars)
	}
	return out
}

func indexes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func TestSearch(t *testing.T) {
	tests := []struct {
		name      string
		n         int
		m         *model
		causes    []int
		groups    [][]int
		together  [][]int
		onTop     [][]int
		cleared   int
		inconc    []int
		unres     int
		maxRounds int // rounds after the one with everything applied
		apart     func(int) bool
		kind      func(int) string
	}{
		{name: "one cause among 8", n: 8, m: &model{effect: map[int]float64{0: 2.5}}, causes: []int{0}, cleared: 7, maxRounds: 6},
		{name: "one cause among 16, last", n: 16, m: &model{effect: map[int]float64{15: 2}}, causes: []int{15}, cleared: 15, maxRounds: 8},
		{name: "one cause among 9", n: 9, m: &model{effect: map[int]float64{4: 2}}, causes: []int{4}, cleared: 8, maxRounds: 8},
		{name: "two causes apart", n: 8, m: &model{effect: map[int]float64{1: 1.9, 6: 1.5}}, causes: []int{1, 6}, cleared: 6},
		{name: "a slower cause too", n: 8, m: &model{effect: map[int]float64{0: 3, 5: 0.7}}, causes: []int{0, 5}, cleared: 6},
		{name: "a pair that matters only together", n: 8, m: &model{together: map[string]float64{"1,6": 2}}, groups: [][]int{{1, 6}}, cleared: 6},
		{name: "a pair in one half", n: 8, m: &model{together: map[string]float64{"2,3": 2}}, groups: [][]int{{2, 3}}, cleared: 6},
		{name: "an inconclusive variable", n: 4, m: &model{effect: map[int]float64{0: 2}, fuzzy: map[int]bool{0: true}}, causes: []int{0}, cleared: 3},
		{name: "two inconclusive variables that matter", n: 8, m: &model{effect: map[int]float64{0: 1.5, 1: 1.5}, fuzzy: map[int]bool{0: true, 1: true}}, together: [][]int{{0, 1}}, cleared: 6},
		{name: "one matters only on top of another", n: 8, m: &model{effect: map[int]float64{1: 1.4}, together: map[string]float64{"1,5": 1.9}},
			causes: []int{1}, onTop: [][]int{{5}}, cleared: 6},
		// One round more than 2 x log2(8): the open group is tried once on
		// top of the cause.
		{name: "an open group is not split", n: 8, m: &model{effect: map[int]float64{0: 2}, foggy: map[int]bool{5: true}},
			causes: []int{0}, inconc: []int{4, 5, 6, 7}, cleared: 3, maxRounds: 7},
		{name: "an open group that leans is split", n: 8, m: &model{effect: map[int]float64{5: 2}, foggy: map[int]bool{4: true}},
			causes: []int{5}, inconc: []int{4}, cleared: 6},
		{name: "nothing moves", n: 8, m: &model{}, cleared: 8},
		{name: "restart variables split off first", n: 8, m: &model{effect: map[int]float64{7: 2}}, causes: []int{7}, cleared: 7, maxRounds: 2,
			apart: func(i int) bool { return i == 7 }},
		{name: "a cause among the others, restart variables apart", n: 8, m: &model{effect: map[int]float64{1: 2}}, causes: []int{1}, cleared: 7, maxRounds: 8,
			apart: func(i int) bool { return i >= 6 }},
		// The fixture of the integration test: two durability settings that
		// matter, six others that do not, the last applied by a restart.
		{name: "the durability settings split off first", n: 8, m: &model{effect: map[int]float64{0: 1.4, 1: 1.4}}, causes: []int{0, 1}, cleared: 6, maxRounds: 4,
			kind: func(i int) string {
				return map[int]string{0: "durability", 1: "durability", 2: "memory", 3: "memory"}[i]
			}, apart: func(i int) bool { return i == 7 }},
		{name: "kinds do not split a group of one kind", n: 4, m: &model{effect: map[int]float64{2: 2}}, causes: []int{2}, cleared: 3, maxRounds: 4,
			kind: func(int) string { return "memory" }},
		{name: "budget", n: 8, m: &model{effect: map[int]float64{7: 2}, budget: 2}, cleared: 4, unres: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			all, err := tt.m.test(ctx, indexes(tt.n), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			tt.m.rounds = 0
			oc, err := search(ctx, tt.m, tt.n, all, tt.kind, tt.apart)
			if err != nil {
				t.Fatalf("search: %v", err)
			}
			var causes, inconc []int
			cleared, unres := 0, 0
			for i, c := range oc.class {
				switch c {
				case classCause:
					causes = append(causes, i)
				case classCleared:
					cleared++
				case classInconclusive:
					inconc = append(inconc, i)
				case classUnresolved:
					unres++
				}
			}
			if !reflect.DeepEqual(causes, tt.causes) {
				t.Errorf("causes: got %v, want %v", causes, tt.causes)
			}
			if got := members(oc.interactions); !reflect.DeepEqual(got, tt.groups) {
				t.Errorf("interactions: got %v, want %v", got, tt.groups)
			}
			if got := members(oc.onTop); !reflect.DeepEqual(got, tt.onTop) {
				t.Errorf("on top: got %v, want %v", got, tt.onTop)
			}
			if got := members(oc.together); !reflect.DeepEqual(got, tt.together) {
				t.Errorf("together: got %v, want %v", got, tt.together)
			}
			if !reflect.DeepEqual(inconc, tt.inconc) {
				t.Errorf("inconclusive: got %v, want %v", inconc, tt.inconc)
			}
			if cleared != tt.cleared || unres != tt.unres {
				t.Errorf("cleared %d, unresolved %d: want %d and %d (classes %v)", cleared, unres, tt.cleared, tt.unres, oc.class)
			}
			if tt.maxRounds > 0 && tt.m.rounds > tt.maxRounds {
				t.Errorf("rounds: got %d, want at most %d (2 x log2(%d))", tt.m.rounds, tt.maxRounds, tt.n)
			}
			if (tt.m.budget > 0) != (oc.stopped != nil) {
				t.Errorf("stopped: got %v, want it set only with a budget", oc.stopped)
			}
		})
	}
}

// TestSearchLeaningAll goes on when the round with everything applied was
// left open but its ratio lies beyond the threshold: one noisy round does
// not end the bisect.
func TestSearchLeaningAll(t *testing.T) {
	m := &model{effect: map[int]float64{0: 2}}
	all := &round{set: indexes(8), vs: result.Effect{Ratio: 2, Lo: 0.9, Hi: 3.1, State: stats.Inconclusive}, leans: true}
	oc, err := search(context.Background(), m, 8, all, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := oc.class[0]; got != classCause {
		t.Errorf("variable 0: got %s, want %s", got, classCause)
	}
	for i := 1; i < 8; i++ {
		if got := oc.class[i]; got != classCleared {
			t.Errorf("variable %d: got %s, want %s", i, got, classCleared)
		}
	}
}

// TestDefaultRepeatsGiveAnInterval: the default --repeats is not below
// what a 95% interval needs, so that a bisect run with it can decide.
func TestDefaultRepeatsGiveAnInterval(t *testing.T) {
	if DefaultRepeats < stats.MinRunsFor95 {
		t.Errorf("DefaultRepeats is %d, want at least %d", DefaultRepeats, stats.MinRunsFor95)
	}
	if err := checkRepeats(DefaultRepeats); err != nil {
		t.Errorf("checkRepeats(DefaultRepeats): got %v, want nil", err)
	}
	if err := checkRepeats(stats.MinRunsFor95 - 1); err == nil {
		t.Errorf("checkRepeats(%d): got nil, want an error", stats.MinRunsFor95-1)
	}
}
