package capacity

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/histogram"
)

func TestJudgeNarrow(t *testing.T) {
	// uniform(1000): p99 990ms, its upper bound 997ms.
	slo := SLO{Latency: []Limit{{99, 993 * time.Millisecond}}, ErrorPct: 1, ErrorSet: true}
	good := Measure{Offered: 100, Achieved: 99, Due: 100, Events: 1000, Latency: uniform(1000),
		Backlog: []int64{0, 3}, Span: 10 * time.Second}
	for _, tc := range []struct {
		name         string
		edit         func(*Measure)
		held, narrow bool
	}{
		{"only the bound above the limit", func(*Measure) {}, false, true},
		{"holds", func(m *Measure) { m.Latency = uniform(900) }, true, false},
		{"the percentile itself above", func(m *Measure) { m.Latency = uniform(1100) }, false, false},
		{"short within twice the allowance", func(m *Measure) { m.Achieved, m.Latency = 96.5, uniform(900) }, false, true},
		{"short by more", func(m *Measure) { m.Achieved, m.Latency = 95.5, uniform(900) }, false, false},
		{"queued at the end is no shortfall", func(m *Measure) {
			m.Achieved, m.Backlog, m.Latency = 97.6, []int64{0, 5}, uniform(900) // 97.6+5/10 >= 98
		}, true, false},
		{"a backlog carried in is a shortfall", func(m *Measure) {
			m.Achieved, m.Backlog, m.Latency = 97, []int64{18, 20}, uniform(900) // 97+2/10 < 98
		}, false, true},
		{"a growing backlog", func(m *Measure) { m.Backlog = []int64{0, 9} }, false, false},
		{"errors", func(m *Measure) { m.Errors = 20 }, false, false},
		{"ended early", func(m *Measure) { m.EndedEarly = true }, false, false},
		{"client-bound", func(m *Measure) { m.ClientBound = true }, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := good
			tc.edit(&m)
			v := Judge(m, slo)
			if v.Held != tc.held || v.Narrow != tc.narrow {
				t.Errorf("got held %v narrow %v (%v), want held %v narrow %v", v.Held, v.Narrow, v.Why, tc.held, tc.narrow)
			}
		})
	}
}

func TestPool(t *testing.T) {
	a := Measure{Offered: 100, Achieved: 96, Due: 100, Events: 960, Errors: 1, Latency: uniform(960),
		Backlog: []int64{4}, Span: time.Second, Elapsed: time.Second}
	b := Measure{Offered: 100, Achieved: 100, Due: 102, Events: 1000, Latency: uniform(1000),
		Backlog: []int64{1, 2}, Span: 3 * time.Second, Elapsed: 3 * time.Second}
	p := Pool(a, b)
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"events", float64(p.Events), 1960},
		{"errors", float64(p.Errors), 1},
		{"latency count", float64(p.Latency.Count()), 1960},
		{"span s", p.Span.Seconds(), 4},
		{"achieved", p.Achieved, (96 + 300) / 4.0},
		// a's 4 events still queued at its end fell due but are no shortfall.
		{"due", p.Due, (100 - 4 + 306) / 4.0},
		{"last backlog", float64(p.Backlog[len(p.Backlog)-1]), 2},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}

// scripted is a target whose ceiling is 100 events/s, each rate's first
// step within 10% below it missing the achieved rate narrowly, as the
// bunching of a short step makes a real one do; above 100/s a step misses
// clearly, its backlog growing.
type scripted struct{ calls map[float64]int }

func (s *scripted) Step(_ context.Context, rate float64, seconds int, _ func([]int64) bool) (Measure, error) {
	s.calls[rate]++
	m := Measure{Offered: rate, Achieved: rate, Due: rate, Events: 1000, Latency: flat(1000),
		Backlog: []int64{0, 0}, Span: time.Duration(seconds) * time.Second}
	switch {
	case rate == 0:
		m.Achieved, m.Offered, m.Due = 80, 0, 0
	case rate > 100:
		m.Achieved, m.Backlog = 0.9*rate, []int64{0, int64(rate)}
	case rate > 90 && s.calls[rate] == 1:
		m.Achieved = 0.97 * rate
	}
	return m, nil
}

// flat is a histogram of n values of 1ms.
func flat(n int) *histogram.Histogram {
	h := histogram.New()
	for range n {
		h.Record(time.Millisecond)
	}
	return h
}

func TestSearchMeasuresNarrowMissAgain(t *testing.T) {
	slo, err := ParseSLO([]string{"p95<=40ms"})
	if err != nil {
		t.Fatal(err)
	}
	st := &scripted{calls: map[float64]int{}}
	res, err := Search(t.Context(), "scripted", st, Options{SLO: slo, Repeats: 1, StepTime: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// Judged on one step each, every rate above 90/s would fail and the
	// answer would be below 90/s.
	if res.Outcome != Found || res.Capacity < 98 || res.Capacity > 100 {
		t.Fatalf("got %s %.1f/s (%s), want found within 98-100/s", res.Outcome, res.Capacity, res.Message)
	}
	var narrow, again int
	for i, s := range res.Steps {
		if s.Phase != "again" {
			continue
		}
		again++
		prev := res.Steps[i-1]
		if prev.Held || prev.Offered != s.Offered || !strings.Contains(strings.Join(prev.Why, "; "), "narrow miss") {
			t.Errorf("step %d: got the step before it %+v, want a narrow miss at %.1f/s", s.N, prev, s.Offered)
		}
		if s.Held {
			narrow++
		}
	}
	if again == 0 || narrow != again {
		t.Errorf("got %d steps measured again, %d of them held, want at least one, all held", again, narrow)
	}
	for _, s := range res.Steps {
		if s.Offered > 100 && s.Phase == "again" {
			t.Errorf("step %d at %.1f/s: got it measured again, want a clear miss judged once", s.N, s.Offered)
		}
	}
}
