package result

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/histogram"
)

// synthRunner is one runner's result, made of samples drawn from rnd:
// seconds intervals of perSecond events each, starting at start. all
// receives every sample too.
func synthRunner(t testing.TB, idx, n int, start time.Time, seconds, perSecond int, rnd *rand.Rand, all *histogram.Histogram) Runner {
	t.Helper()
	total := histogram.New()
	var ivs []IntervalHDR
	var rivs []Interval
	for s := range seconds {
		h := histogram.New()
		for range perSecond {
			// A skewed distribution, different for each runner, so that
			// averaging percentiles would not give the merged one.
			d := time.Duration(200+rnd.ExpFloat64()*float64(1000*(idx+1))) * time.Microsecond
			h.Record(d)
			if all != nil {
				all.Record(d)
			}
		}
		total.Merge(h)
		snap, err := h.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		b := start.Add(time.Duration(s) * time.Second).Add(time.Duration(idx) * time.Millisecond) // a few ms apart, as real runners are
		ivs = append(ivs, IntervalHDR{StartUS: b.UnixMicro(), EndUS: b.Add(time.Second).UnixMicro(), Threads: 2,
			Events: int64(perSecond), Reads: int64(perSecond), Latency: snap})
		rivs = append(rivs, Interval{AtS: float64(s + 1), Threads: 2, QPS: float64(perSecond)})
	}
	snap, err := total.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	q := int64(seconds * perSecond)
	res := &Result{
		SchemaVersion: SchemaVersion, Workload: "oltp_point_select", Threads: 2, Percentile: 95, TimeS: float64(seconds),
		Options:      map[string]string{"threads": fmt.Sprint(2 * n), "segment": fmt.Sprintf("%d/%d", idx+1, n)},
		Queries:      Queries{Read: q, Total: q},
		Transactions: q, QPS: float64(perSecond), TPS: float64(perSecond),
		Errors:    Errors{ByCode: map[string]int64{}},
		Histogram: snap, Intervals: rivs,
		Fairness: Fairness{EventsAvg: float64(q) / 2, EventsStddev: float64(idx), TimeAvgS: float64(seconds), TimeStddevS: 0.01},
		Segment:  &Segment{Label: fmt.Sprintf("%d/%d", idx+1, n), Index: idx, Runners: n, Started: start, Measured: start.Add(time.Duration(idx) * time.Millisecond)},
	}
	return Runner{Index: idx, Range: fmt.Sprintf("%d/%d:%d/%d", idx, n, idx+1, n), Label: fmt.Sprintf("%d/%d", idx+1, n),
		Host: fmt.Sprintf("runner-%d", idx), Status: "ok", Result: res, Intervals: ivs}
}

func TestMergeIsExact(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rnd := rand.New(rand.NewPCG(1, 2))
	all := histogram.New()
	var rs []Runner
	for i := range 4 {
		rs = append(rs, synthRunner(t, i, 4, start, 5, 1000+100*i, rnd, all))
	}
	m, err := Merge(rs, 4, "0,1/4,1/2,3/4,1")
	if err != nil {
		t.Fatal(err)
	}
	var q int64
	var qps float64
	for _, r := range rs {
		q += r.Result.Queries.Total
		qps += r.Result.QPS
	}
	if m.Queries.Total != q || m.Transactions != q || m.Histogram.Count != q {
		t.Errorf("queries %d, transactions %d, latencies %d: want each %d, the runners' sum", m.Queries.Total, m.Transactions, m.Histogram.Count, q)
	}
	if m.QPS != qps || m.Threads != 8 {
		t.Errorf("qps %g threads %d: want %g and 8", m.QPS, m.Threads, qps)
	}
	want := LatencyOf(all, 95)
	if m.LatencyMS != want {
		t.Errorf("latency: got %+v, want %+v (one histogram of every sample)", m.LatencyMS, want)
	}
	if len(m.Intervals) != 5 {
		t.Fatalf("got %d intervals, want 5", len(m.Intervals))
	}
	for i, iv := range m.Intervals {
		if want := float64(4600); iv.QPS != want || iv.Threads != 8 {
			t.Errorf("interval %d: qps %g threads %d, want %g and 8", i, iv.QPS, iv.Threads, want)
		}
		if want := float64(i+1) + 0.003; iv.AtS != want {
			t.Errorf("interval %d ends at %gs, want %gs (the last runner's end)", i, iv.AtS, want)
		}
	}
	if _, ok := m.Options["segment"]; ok || m.Options["threads"] != "8" {
		t.Errorf("options %v: want the load's (threads 8), without the segment", m.Options)
	}
	sp := m.Split
	if sp == nil || sp.Partial || sp.Complete != 4 || len(sp.Parts) != 4 || sp.Parts[2].Host != "runner-2" {
		t.Fatalf("split: got %+v, want 4 complete runners named", sp)
	}
	if got := sp.Describe(); !strings.HasPrefix(got, "4 runners: 1/4 runner-0, 2/4 runner-1") {
		t.Errorf("Describe: got %q", got)
	}
	if sp.StartSkewS != 0.003 || len(sp.Warnings) != 0 {
		t.Errorf("skew %gs, warnings %v: want 0.003s and none", sp.StartSkewS, sp.Warnings)
	}
	if m.Fairness.EventsAvg <= 0 || m.Fairness.EventsStddev <= 0 {
		t.Errorf("fairness %+v: want the pooled threads", m.Fairness)
	}
}

func TestMergePartial(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rnd := rand.New(rand.NewPCG(3, 4))
	a := synthRunner(t, 0, 3, start, 3, 100, rnd, nil)
	b := synthRunner(t, 1, 3, start, 2, 100, rnd, nil)
	b.Status, b.Result.Interrupted = "interrupted", true
	c := Runner{Index: 2, Range: "2/3:1", Label: "3/3"} // registered, never reported
	for _, tc := range []struct {
		name     string
		runners  []Runner
		n        int
		complete int
		missing  string
	}{
		{"one never reported, one interrupted", []Runner{a, b, c}, 3, 1, "2/3 stopped early: interrupted; 3/3 never reported"},
		{"one never registered", []Runner{a, b}, 3, 1, "1 of 3 segments never registered"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Merge(tc.runners, tc.n, "0,1/3,2/3,1")
			if err != nil {
				t.Fatal(err)
			}
			sp := m.Split
			if !sp.Partial || sp.Complete != tc.complete || !strings.Contains(strings.Join(sp.Missing, "; "), tc.missing) {
				t.Errorf("got partial %v, %d complete, missing %q; want partial, %d, %q", sp.Partial, sp.Complete, sp.Missing, tc.complete, tc.missing)
			}
			if got := sp.Label(); got != fmt.Sprintf("partial, %d of 3 runners", tc.complete) {
				t.Errorf("label: got %q", got)
			}
			if m.Queries.Total != 500 || !m.Interrupted {
				t.Errorf("got %d queries, interrupted %v: want what the two that reported measured (500), interrupted", m.Queries.Total, m.Interrupted)
			}
		})
	}
	if _, err := Merge([]Runner{c}, 3, "0,1/3,2/3,1"); !errors.Is(err, ErrNothingToMerge) {
		t.Errorf("nobody reported: got %v, want ErrNothingToMerge", err)
	}
}

func TestMergeWarnsOfSkewAndGaps(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rnd := rand.New(rand.NewPCG(5, 6))
	a := synthRunner(t, 0, 2, start, 2, 50, rnd, nil)
	b := synthRunner(t, 1, 2, start, 2, 50, rnd, nil)
	// b's clock runs 1.5 s ahead of the store's: by the store's clock it
	// started 1.5 s before a.
	b.ClockOffset = 1500 * time.Millisecond
	m, err := Merge([]Runner{a, b}, 2, "0,1/2,1")
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(m.Split.Warnings, "; "); !strings.Contains(w, "clock skew") || m.Split.StartSkewS < 1.4 {
		t.Errorf("got skew %gs, warnings %q: want a clock skew warning", m.Split.StartSkewS, w)
	}
	b.ClockOffset = 0
	b.Range = "3/4:1"
	m, err = Merge([]Runner{a, b}, 2, "0,1/2,1")
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(m.Split.Warnings, "; "); !strings.Contains(w, "gap 1/2:3/4") || !m.Split.Partial {
		t.Errorf("got warnings %q, partial %v: want the gap named, partial", w, m.Split.Partial)
	}
}

// The first runner's server series is compared with the merged client
// rate, not its own.
func TestMergeCrossCheck(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rnd := rand.New(rand.NewPCG(7, 8))
	var rs []Runner
	for i := range 2 {
		rs = append(rs, synthRunner(t, i, 2, start, 6, 500, rnd, nil))
	}
	s := &Series{IntervalS: 1, Start: start}
	for k := 1; k <= 6; k++ {
		s.Samples = append(s.Samples, Sample{AtS: float64(k), ElapsedS: 1, Values: map[string]float64{"qps": 1000}})
	}
	rs[0].Result.Server = s
	rs[0].Result.CrossCheck = &CrossCheck{}
	m, err := Merge(rs, 2, "0,1/2,1")
	if err != nil {
		t.Fatal(err)
	}
	cc := m.CrossCheck
	if cc == nil || cc.Mismatch || cc.ClientQPS < 990 || cc.ClientQPS > 1010 || cc.ServerQPS != 1000 {
		t.Fatalf("cross-check: got %+v, want client ~1000 (both runners) agreeing with the server's 1000", cc)
	}
}

// BenchmarkMerge16x600 merges 16 runners of 600 one-second intervals.
func BenchmarkMerge16x600(b *testing.B) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rnd := rand.New(rand.NewPCG(9, 10))
	var rs []Runner
	for i := range 16 {
		rs = append(rs, synthRunner(b, i, 16, start, 600, 200, rnd, nil))
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := Merge(rs, 16, Equal16); err != nil {
			b.Fatal(err)
		}
	}
}

// Equal16 is the sequence of 16 equal segments.
const Equal16 = "0,1/16,1/8,3/16,1/4,5/16,3/8,7/16,1/2,9/16,5/8,11/16,3/4,13/16,7/8,15/16,1"

// TestMergeClient: the merged result of a split load carries the client
// figures of the runner nearest its limit, a client-bound one first: one
// starved runner holds the whole load back.
func TestMergeClient(t *testing.T) {
	at := func(pct float64, bound bool) *Client { return &Client{Bound: bound, CPUPct: pct, Cores: 2} }
	for _, tc := range []struct {
		name    string
		clients []*Client
		want    *Client
	}{
		{"none recorded", []*Client{nil, nil}, nil},
		{"the busiest", []*Client{at(40, false), at(70, false), nil}, at(70, false)},
		{"a bound one before a busier one", []*Client{at(95, false), at(30, true)}, at(30, true)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rs []Runner
			for i, c := range tc.clients {
				r := synthRunner(t, i, len(tc.clients), time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), 2, 10, rand.New(rand.NewPCG(1, uint64(i))), nil)
				r.Result.Client = c
				rs = append(rs, r)
			}
			m, err := Merge(rs, len(rs), "")
			if err != nil {
				t.Fatal(err)
			}
			if (m.Client == nil) != (tc.want == nil) || (m.Client != nil && *m.Client != *tc.want) {
				t.Errorf("got %+v, want %+v", m.Client, tc.want)
			}
		})
	}
}
