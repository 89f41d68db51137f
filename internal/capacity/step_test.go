package capacity

import (
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/histogram"
	"github.com/shakedown/shakedown/internal/stats"
)

// uniform is a histogram of n values 1..n milliseconds.
func uniform(n int) *histogram.Histogram {
	h := histogram.New()
	for i := 1; i <= n; i++ {
		h.Record(time.Duration(i) * time.Millisecond)
	}
	return h
}

func TestUpperBound(t *testing.T) {
	for _, tc := range []struct {
		name     string
		n        int
		q        float64
		min, max time.Duration // the bound's range
		bounded  bool
	}{
		// n=1000, q=0.99: rank ceil(990+1.645*3.146)+1 = 997.
		{"p99 of 1000", 1000, 0.99, 996 * time.Millisecond, 998 * time.Millisecond, true},
		// n=10000, q=0.5: rank ceil(5000+1.645*50)+1 = 5084.
		{"median of 10000", 10000, 0.5, 5080 * time.Millisecond, 5090 * time.Millisecond, true},
		{"p99 of 100: too few", 100, 0.99, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := UpperBound(uniform(tc.n), tc.q)
			if ok != tc.bounded {
				t.Fatalf("got bounded %v, want %v", ok, tc.bounded)
			}
			if ok && (got < tc.min || got > tc.max) {
				t.Errorf("got %v, want within [%v, %v]", got, tc.min, tc.max)
			}
		})
	}
}

func TestMinEvents(t *testing.T) {
	for _, tc := range []struct {
		name string
		slo  SLO
	}{
		{"p95", SLO{Latency: []Limit{{95, time.Second}}}},
		{"p99 and p50", SLO{Latency: []Limit{{50, time.Second}, {99, time.Second}}}},
		{"p99.9", SLO{Latency: []Limit{{99.9, time.Second}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := MinEvents(tc.slo)
			for _, l := range tc.slo.Latency {
				if _, ok := UpperBound(uniform(int(n)), l.Percentile/100); !ok {
					t.Errorf("got %d events, too few for a p%g bound", n, l.Percentile)
				}
			}
			worst := tc.slo.Latency[len(tc.slo.Latency)-1].Percentile / 100
			if _, ok := UpperBound(uniform(int(n-1)), worst); ok {
				t.Errorf("got %d events, want the fewest: %d already bound p%g", n, n-1, 100*worst)
			}
		})
	}
}

func TestJudge(t *testing.T) {
	slo := SLO{Latency: []Limit{{99, 2 * time.Second}}, ErrorPct: 1, ErrorSet: true}
	good := Measure{Offered: 100, Achieved: 99, Events: 1000, Latency: uniform(1000), Backlog: []int64{0, 3, 1}}
	for _, tc := range []struct {
		name string
		edit func(*Measure)
		why  string // "" holds
	}{
		{"holds", func(*Measure) {}, ""},
		{"short of the rate", func(m *Measure) { m.Achieved = 97.9 }, "achieved 97.9/s of 100.0/s offered"},
		{"short of what fell due", func(m *Measure) { m.Due = 103 }, "achieved 99.0/s of the 103.0/s that fell due"},
		{"fewer fell due", func(m *Measure) { m.Achieved, m.Due = 95, 96 }, ""},
		{"backlog grows", func(m *Measure) { m.Backlog = []int64{0, 4, 8} }, "backlog grew by 8"},
		{"breathing backlog", func(m *Measure) { m.Backlog = []int64{2, 9, 6} }, ""},
		{"latency", func(m *Measure) { m.Latency = uniform(3000) }, "p99 upper bound"},
		{"too few", func(m *Measure) { m.Latency, m.Events = uniform(50), 50 }, "too few events (50)"},
		{"errors", func(m *Measure) { m.Errors = 11 }, "errors 1.09% (11 of 1011) above 1%"},
		{"client-bound", func(m *Measure) { m.ClientBound = true }, "client-bound"},
		{"ended early", func(m *Measure) { m.EndedEarly = true }, "overloaded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := good
			tc.edit(&m)
			v := Judge(m, slo)
			if v.Held != (tc.why == "") {
				t.Fatalf("got held %v (%v), want %v", v.Held, v.Why, tc.why == "")
			}
			if got := strings.Join(v.Why, "; "); !strings.Contains(got, tc.why) {
				t.Errorf("got why %q, want it to hold %q", got, tc.why)
			}
		})
	}
}

func TestOverloaded(t *testing.T) {
	slo := SLO{Latency: []Limit{{99, 20 * time.Millisecond}}} // ten times: 200ms
	for _, tc := range []struct {
		name    string
		backlog []int64
		rate    float64
		want    bool
	}{
		{"one reading", []int64{500}, 1000, false},
		{"grew past 200ms of arrivals", []int64{100, 201}, 1000, true},
		{"grew, within 200ms", []int64{100, 199}, 1000, false},
		{"large but shrinking", []int64{900, 800}, 1000, false},
		{"closed loop", []int64{0, 900}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Overloaded(tc.backlog, tc.rate, slo); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestVersus(t *testing.T) {
	found := func(name string, caps ...float64) []*Result {
		var out []*Result
		for i, c := range caps {
			out = append(out, &Result{Target: name, Search: i + 1, Outcome: Found, Capacity: c, Low: c, High: c * 1.02})
		}
		return out
	}
	ctl := found("a", 1000, 1004, 998, 1002)
	for _, tc := range []struct {
		name   string
		cand   []*Result
		state  stats.State
		noteIn string
	}{
		{"faster", found("b", 1300, 1310, 1290, 1305), stats.Faster, "faster"},
		{"slower", found("b", 700, 710, 690, 705), stats.Slower, "slower"},
		{"same", found("b", 1001, 1003, 999, 1002), stats.Same, "same"},
		{"one search", found("b", 1300), stats.NoVerdict, "--searches 4"},
		{"one search of four with a capacity", append(found("b", 1300), &Result{Target: "b", Search: 2, Outcome: NotMet},
			&Result{Target: "b", Search: 3, Outcome: NotMet}, &Result{Target: "b", Search: 4, Outcome: NotMet}),
			stats.NoVerdict, "1 of the candidate's 4 found a capacity"},
		{"client-bound", []*Result{{Target: "b", Outcome: ClientBound}}, stats.Inconclusive, "client-bound"},
		{"not met", []*Result{{Target: "b", Outcome: NotMet}}, stats.Slower, "did not meet the SLO"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{Control: "a", Targets: append(append([]*Result{}, ctl...), tc.cand...)}
			r.Compare()
			if len(r.Versus) != 1 {
				t.Fatalf("got %d comparisons, want 1", len(r.Versus))
			}
			v := r.Versus[0]
			if v.State != tc.state || !strings.Contains(v.Note, tc.noteIn) {
				t.Errorf("got %s (%s), want %s (%s)", v.State, v.Note, tc.state, tc.noteIn)
			}
			if v.State == stats.Faster || v.State == stats.Slower && v.Ratio > 0 {
				if !v.Compare.Interval || (v.Low-1)*(v.High-1) <= 0 {
					t.Errorf("got interval [%g, %g], want one that excludes 1", v.Low, v.High)
				}
			}
		})
	}
}

// TestJudgeDefaultErrorLimit: an SLO that sets no error limit fails a step
// on errors above DefaultErrorPct, and says the limit is the default; one
// retried deadlock in thousands of events is no failure.
func TestJudgeDefaultErrorLimit(t *testing.T) {
	slo, err := ParseSLO([]string{"p99<=2s"})
	if err != nil {
		t.Fatal(err)
	}
	good := Measure{Offered: 1000, Achieved: 1000, Events: 11337, Latency: uniform(1000), Backlog: []int64{0, 1}}
	for _, tc := range []struct {
		name   string
		errors int64
		why    string // "" holds
	}{
		{"one retried deadlock", 1, ""},
		{"one in a thousand", 11, ""},
		{"two in a thousand", 23, "errors 0.202% (23 of 11360) above 0.1% (the default error limit)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := good
			m.Errors = tc.errors
			v := Judge(m, slo)
			if got := strings.Join(v.Why, "; "); v.Held != (tc.why == "") || !strings.Contains(got, tc.why) {
				t.Errorf("got held %v (%s), want held %v (%s)", v.Held, got, tc.why == "", tc.why)
			}
		})
	}
	if got := slo.ErrorRule(); !strings.Contains(got, "above 0.1% of its events (the default error limit") {
		t.Errorf("got error rule %q, want it to state the default limit", got)
	}
}

// TestAchievedNote: a step never shows more achieved than offered without
// saying why.
func TestAchievedNote(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    Measure
		want string // "" no note
	}{
		{"below offered", Measure{Offered: 100, Achieved: 99, Due: 100, Events: 990, Span: 10 * time.Second}, ""},
		{"within noise", Measure{Offered: 100, Achieved: 101.5, Due: 100, Events: 1015, Span: 10 * time.Second}, ""},
		{"Poisson drew more", Measure{Offered: 100, Achieved: 104, Due: 104.5, Events: 1040, Span: 10 * time.Second},
			"the Poisson arrivals drawn offered 104.5/s"},
		{"caught up after a stall", Measure{Offered: 2806.4, Achieved: 3647.1, Due: 2810, Events: 36471, Backlog: []int64{900, 3},
			Span: 10 * time.Second}, "achieved 3647.1/s of offered 2806.4/s: the schedule caught up after a stall, about 8374 events"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := achievedNote(tc.m)
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestReportSaysWhatHeld: a search that confirmed no rate says which
// rates held in single steps, beside the production peak and in the
// comparison, and why the control has no capacity.
func TestReportSaysWhatHeld(t *testing.T) {
	ctl := &Result{Target: "ctl", Outcome: Unconfirmed, Message: "no rate held on every repeat after 3 rounds",
		Steps: []Step{{N: 1, Offered: 0}, {N: 2, Offered: 1947, Held: true}, {N: 3, Offered: 3356, Held: true}, {N: 4, Offered: 4000}}}
	cand := &Result{Target: "cand", Outcome: Found, Capacity: 3000, Message: "capacity 3000.0/s",
		Steps: []Step{{N: 1, Offered: 3000, Achieved: 3647.1, Held: true, Note: "achieved 3647.1/s of offered 3000.0/s: the schedule caught up after a stall"}}}
	r := &Report{Workload: "w", SLO: "p99<=20ms", Errors: SLO{}.ErrorRule(), Bracket: 0.02, Peak: 300, Control: "ctl", Targets: []*Result{ctl, cand}}
	r.Compare()
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"(the default error limit",
		"no capacity to set against the production peak of 300.0/s (single steps held at 1947.0-3356.0/s, not confirmed)",
		"cand: no verdict: the control has no capacity (no rate held on every repeat; single steps held at 1947.0-3356.0/s)",
		"step 1: achieved 3647.1/s of offered 3000.0/s: the schedule caught up",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("got report:\n%s\nwant it to hold %q", out, want)
		}
	}
	if got := r.Headline(ctl); !strings.Contains(got, "single steps held at 1947.0-3356.0/s") {
		t.Errorf("got headline %q, want the rates that held", got)
	}
}
