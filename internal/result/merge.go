package result

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shakedown/shakedown/internal/histogram"
	"github.com/shakedown/shakedown/internal/segment"
	"github.com/shakedown/shakedown/internal/stats"
)

// Runner is one runner of a split load as a merge sees it: what it
// reported, if anything.
type Runner struct {
	// Index is the runner's segment's place in the sequence (from 0) and
	// Range the segment as FROM:TO; both are known from its registration
	// even when it never reported.
	Index int
	Range string
	Label string
	Host  string
	// Status is the stored run status of its part ("ok", "failed",
	// "interrupted"); "" when it never reported.
	Status string
	Error  string
	// Result and Intervals are what it measured: nil when it never
	// reported.
	Result    *Result
	Intervals []IntervalHDR
	// ClockOffset is the runner's clock minus the store's, as measured
	// when it registered.
	ClockOffset time.Duration
}

// ErrNothingToMerge means no runner of a split load reported anything.
var ErrNothingToMerge = errors.New("no runner reported a result")

// MaxSkew is how far apart the runners' starts may be, on a common clock,
// before a merged result warns of clock skew: beyond it their loads did
// not overlap as planned.
const MaxSkew = time.Second

// splitOptions are the options that differ between the runners of one
// load: a merged result records the load's, without them.
var splitOptions = []string{"segment", "segment-sequence", "segments", "segment-index-env", "start-at"}

// Merge adds up the runners of one split load, of n segments with the
// given sequence, into one result, exactly: counts are added, latency
// histograms added (percentiles come from the sum, never from averaging),
// and intervals lined up by wall clock (the intervals of the runners that
// began in the same second make that second). A runner that never
// reported, or stopped early, makes the result partial. The first
// runner's server series is cross-checked against the merged client rate.
func Merge(runners []Runner, n int, sequence string) (*Result, error) {
	rs := slices.Clone(runners)
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Index < rs[j].Index })
	var parts []Runner
	for _, r := range rs {
		if r.Result != nil {
			parts = append(parts, r)
		}
	}
	if len(parts) == 0 {
		return nil, ErrNothingToMerge
	}
	base := parts[0].Result
	m := &Result{
		SchemaVersion: SchemaVersion, Tool: base.Tool, Workload: base.Workload, Options: map[string]string{},
		Target: base.Target, StartedAt: base.StartedAt, WarmupS: base.WarmupS, Percentile: base.Percentile,
		Errors: Errors{ByCode: map[string]int64{}},
	}
	for k, v := range base.Options {
		if !slices.Contains(splitOptions, k) {
			m.Options[k] = v
		}
	}
	sp := &Split{Runners: n, Sequence: sequence}
	m.Split = sp
	var total histogram.Accumulator
	var fair []Fairness
	var fairN []int
	for _, p := range parts {
		r := p.Result
		m.Threads += r.Threads
		m.TimeS = math.Max(m.TimeS, r.TimeS)
		if r.StartedAt.Before(m.StartedAt) {
			m.StartedAt = r.StartedAt
		}
		m.Rate += r.Rate
		m.Interrupted = m.Interrupted || r.Interrupted
		m.Degraded = m.Degraded || r.Degraded
		m.Queries.Read += r.Queries.Read
		m.Queries.Write += r.Queries.Write
		m.Queries.Other += r.Queries.Other
		m.Queries.Total += r.Queries.Total
		m.Transactions += r.Transactions
		m.Reconnects += r.Reconnects
		m.QPS += r.QPS
		m.TPS += r.TPS
		for c, k := range r.Errors.ByCode {
			m.Errors.ByCode[c] += k
		}
		m.Errors.Total += r.Errors.Total
		if a := r.Availability; a != nil {
			if m.Availability == nil {
				m.Availability = &Availability{}
			}
			m.Availability.ReconnectAttempts += a.ReconnectAttempts
			m.Availability.ReconnectFailures += a.ReconnectFailures
			m.Availability.UnavailableS = math.Max(m.Availability.UnavailableS, a.UnavailableS)
			if m.Availability.FirstError == "" {
				m.Availability.FirstError = a.FirstError
			}
		}
		if r.Error != "" {
			m.Error = joinLine(m.Error, p.Label+": "+r.Error)
		}
		for _, c := range r.Checks {
			if p.Index != parts[0].Index {
				c = p.Label + ": " + c
			}
			if !slices.Contains(m.Checks, c) {
				m.Checks = append(m.Checks, c)
			}
		}
		if err := total.Add(r.Histogram); err != nil {
			return nil, fmt.Errorf("runner %s: %w", p.Label, err)
		}
		fair = append(fair, r.Fairness)
		fairN = append(fairN, r.Threads)
	}
	m.QPS, m.TPS, m.Rate = stats.Round(m.QPS, 2), stats.Round(m.TPS, 2), stats.Round(m.Rate, 6)
	all := total.Histogram()
	m.LatencyMS = LatencyOf(all, m.Percentile)
	snap, err := all.Snapshot()
	if err != nil {
		return nil, err
	}
	m.Histogram = snap
	m.Fairness = pooledFairness(fair, fairN)
	m.Client = mergeClient(parts)
	if err := mergeConnect(m, parts); err != nil {
		return nil, err
	}
	if err := mergeStatements(m, parts); err != nil {
		return nil, err
	}
	origin, err := mergeIntervals(m, parts)
	if err != nil {
		return nil, err
	}
	m.Server = base.Server
	if base.Server != nil {
		m.CrossCheck = crossCheck(base, m.Intervals, origin)
		if cc := m.CrossCheck; cc != nil && cc.Mismatch {
			m.Checks = append(m.Checks, fmt.Sprintf("client vs server QPS: client %.2f, server %.2f: %s", cc.ClientQPS, cc.ServerQPS, cc.Note))
		}
	}
	describe(sp, rs, parts)
	return m, nil
}

func joinLine(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// describe fills in who the runners were, which of them are missing and
// whether their starts and segments line up.
func describe(sp *Split, all, parts []Runner) {
	var ranges []segment.Segment
	seen := map[int]bool{}
	for _, r := range all {
		if seen[r.Index] {
			continue
		}
		seen[r.Index] = true
		if g, err := segment.Parse(r.Range); err == nil {
			ranges = append(ranges, g)
		}
		switch {
		case r.Result == nil:
			sp.Missing = append(sp.Missing, r.Label+" never reported")
		case r.Status != StatusOK:
			why := r.Status
			if r.Result.Interrupted {
				why = "interrupted"
			}
			sp.Missing = append(sp.Missing, r.Label+" stopped early: "+why)
		default:
			sp.Complete++
		}
	}
	if len(seen) < sp.Runners {
		// Runners that never even registered are known only by their
		// number.
		sp.Missing = append(sp.Missing, fmt.Sprintf("%d of %d segments never registered", sp.Runners-len(seen), sp.Runners))
	}
	if err := segment.Cover(ranges); err != nil && len(ranges) > 0 {
		sp.Warnings = append(sp.Warnings, "the runners' segments do not tile the load: "+err.Error())
		sp.Partial = true
	}
	sp.Partial = sp.Partial || sp.Complete < sp.Runners
	var first, last time.Time
	for _, p := range parts {
		r := p.Result
		part := Part{Segment: p.Label, Host: p.Host, Status: p.Status, Threads: r.Threads, Queries: r.Queries.Total, QPS: r.QPS,
			ClockOffsetMS: stats.Round(float64(p.ClockOffset)/float64(time.Millisecond), 3), Error: r.Error}
		if s := r.Segment; s != nil {
			part.Started = s.Started
			at := s.Measured.Add(-p.ClockOffset) // on the store's clock
			if first.IsZero() || at.Before(first) {
				first = at
			}
			if at.After(last) {
				last = at
			}
		}
		sp.Parts = append(sp.Parts, part)
	}
	if !first.IsZero() {
		skew := last.Sub(first)
		sp.StartSkewS = stats.Round(skew.Seconds(), 3)
		if skew > MaxSkew {
			sp.Warnings = append(sp.Warnings, fmt.Sprintf("clock skew: the runners started measuring %.2fs apart (more than %s), so their loads overlapped less than planned; synchronise the clocks (NTP) of the runners' hosts", skew.Seconds(), MaxSkew))
		}
	}
}

// pooledFairness combines the runners' thread fairness: the mean and
// (population) deviation of all their threads together.
func pooledFairness(f []Fairness, n []int) Fairness {
	var total float64
	var me, mt float64
	for i := range f {
		w := float64(n[i])
		total += w
		me += w * f[i].EventsAvg
		mt += w * f[i].TimeAvgS
	}
	if total == 0 {
		return Fairness{}
	}
	me /= total
	mt /= total
	var ve, vt float64
	for i := range f {
		w := float64(n[i])
		ve += w * (sq(f[i].EventsStddev) + sq(f[i].EventsAvg-me))
		vt += w * (sq(f[i].TimeStddevS) + sq(f[i].TimeAvgS-mt))
	}
	return Fairness{EventsAvg: stats.Round(me, 4), EventsStddev: stats.Round(math.Sqrt(ve/total), 2),
		TimeAvgS: stats.Round(mt, 4), TimeStddevS: stats.Round(math.Sqrt(vt/total), 2)}
}

// mergeHist adds snapshots; ok is false when any is missing.
func mergeHist(snaps []*histogram.Snapshot) (*histogram.Histogram, bool, error) {
	var acc histogram.Accumulator
	for _, s := range snaps {
		if s == nil {
			return nil, false, nil
		}
		if err := acc.Add(*s); err != nil {
			return nil, false, err
		}
	}
	return acc.Histogram(), true, nil
}

func mergeConnect(m *Result, parts []Runner) error {
	var snaps []*histogram.Snapshot
	for _, p := range parts {
		c := p.Result.Connect
		if c == nil {
			continue
		}
		if m.Connect == nil {
			m.Connect = &ConnectStats{Mode: c.Mode}
		}
		m.Connect.Count += c.Count
		m.Connect.PerSec = stats.Round(m.Connect.PerSec+c.PerSec, 2)
		snaps = append(snaps, c.Histogram)
	}
	if m.Connect == nil {
		return nil
	}
	h, ok, err := mergeHist(snaps)
	if err != nil {
		return fmt.Errorf("merge connect latencies: %w", err)
	}
	if ok {
		m.Connect.LatencyMS = LatencyOf(h, m.Percentile)
	}
	return nil
}

func mergeStatements(m *Result, parts []Runner) error {
	idx := map[string]int{}
	var snaps [][]*histogram.Snapshot
	for _, p := range parts {
		for _, s := range p.Result.Statements {
			i, ok := idx[s.Name]
			if !ok {
				i = len(m.Statements)
				idx[s.Name] = i
				m.Statements = append(m.Statements, StatementStats{Name: s.Name, Errors: Errors{ByCode: map[string]int64{}}})
				snaps = append(snaps, nil)
			}
			t := &m.Statements[i]
			t.Count += s.Count
			t.QPS = stats.Round(t.QPS+s.QPS, 2)
			t.Errors.Total += s.Errors.Total
			for c, k := range s.Errors.ByCode {
				t.Errors.ByCode[c] += k
			}
			snaps[i] = append(snaps[i], s.Histogram)
		}
	}
	for i := range m.Statements {
		h, ok, err := mergeHist(snaps[i])
		if err != nil {
			return fmt.Errorf("merge latencies of %s: %w", m.Statements[i].Name, err)
		}
		if ok {
			m.Statements[i].LatencyMS = LatencyOf(h, m.Percentile)
		}
	}
	return nil
}

// bucket is one merged interval being added up: the runners' intervals
// that began in the same second.
type bucket struct {
	endUS   int64
	members []IntervalHDR
}

// mergeIntervals lines the runners' intervals up by wall clock and adds
// them. The origin is the earliest start of measurement; an interval
// belongs to the second (or --report-interval) it began in, counted from
// there. It returns the origin.
func mergeIntervals(m *Result, parts []Runner) (time.Time, error) {
	var originUS int64 = math.MaxInt64
	var lengths []int64
	for _, p := range parts {
		if s := p.Result.Segment; s != nil && !s.Measured.IsZero() {
			originUS = min(originUS, s.Measured.UnixMicro())
		}
		for _, iv := range p.Intervals {
			originUS = min(originUS, iv.StartUS)
			lengths = append(lengths, iv.EndUS-iv.StartUS)
		}
	}
	if len(lengths) == 0 {
		return time.Time{}, nil
	}
	origin := time.UnixMicro(originUS)
	slices.Sort(lengths)
	step := max(lengths[len(lengths)/2], 1) // the usual interval: the last one of each runner may be shorter
	buckets := map[int64]*bucket{}
	for _, p := range parts {
		for _, iv := range p.Intervals {
			k := int64(math.Floor(float64(iv.StartUS-originUS)/float64(step) + 0.5))
			b := buckets[k]
			if b == nil {
				b = &bucket{}
				buckets[k] = b
			}
			b.endUS = max(b.endUS, iv.EndUS)
			b.members = append(b.members, iv)
		}
	}
	keys := make([]int64, 0, len(buckets))
	for k := range buckets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	m.Intervals = make([]Interval, len(keys))
	// Each merged interval adds its runners' histograms: the work is
	// spread over the CPUs, one accumulator each.
	errs := make([]error, len(keys))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(keys)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var acc histogram.Accumulator
			for {
				i := int(next.Add(1) - 1)
				if i >= len(keys) {
					return
				}
				m.Intervals[i], errs[i] = mergeBucket(buckets[keys[i]], originUS, m.Percentile, &acc)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return origin, fmt.Errorf("merge intervals: %w", err)
	}
	return origin, nil
}

// mergeBucket adds the runners' intervals of one bucket: rates are each
// runner's count over its own interval's length, added; latency comes from
// the sum of their histograms.
func mergeBucket(b *bucket, originUS int64, pct float64, acc *histogram.Accumulator) (Interval, error) {
	acc.Reset()
	var threads int
	var tps, read, write, other, errPS, reconn float64
	for _, iv := range b.members {
		sec := float64(max(iv.EndUS-iv.StartUS, 1)) / 1e6
		threads += iv.Threads
		tps += float64(iv.Events) / sec
		read += float64(iv.Reads) / sec
		write += float64(iv.Writes) / sec
		other += float64(iv.Others) / sec
		errPS += float64(iv.Errors) / sec
		reconn += float64(iv.Reconnects) / sec
		if err := acc.Add(iv.Latency); err != nil {
			return Interval{}, fmt.Errorf("interval at %s: %w", time.UnixMicro(iv.StartUS).UTC().Format(time.RFC3339), err)
		}
	}
	lat := acc.Histogram()
	out := Interval{
		AtS: stats.Round(float64(b.endUS-originUS)/1e6, 3), Threads: threads,
		TPS: stats.Round(tps, 2), ReadQPS: stats.Round(read, 2), WriteQPS: stats.Round(write, 2), OtherQPS: stats.Round(other, 2),
		ErrorsPS: stats.Round(errPS, 2), ReconnPS: stats.Round(reconn, 2),
		LatencyPct: Millis(lat.Percentile(pct)), LatencyAvg: Millis(lat.Mean()), LatencyMax: Millis(lat.Max()),
	}
	out.QPS = stats.Round(read+write+other, 2)
	return out, nil
}

// crossCheck compares the merged client rate with the server series the
// first runner sampled, shifted to the merged intervals' origin.
func crossCheck(base *Result, ivs []Interval, origin time.Time) *CrossCheck {
	s := *base.Server
	if !s.Start.IsZero() && !origin.IsZero() {
		shift := s.Start.Sub(origin).Seconds()
		s.Samples = slices.Clone(s.Samples)
		for i := range s.Samples {
			s.Samples[i].AtS += shift
		}
		s.Start = origin
	}
	client := make([]Rate, len(ivs))
	for i, iv := range ivs {
		client[i] = Rate{At: time.Duration(iv.AtS * float64(time.Second)), QPS: iv.QPS}
	}
	counter := ""
	if cc := base.CrossCheck; cc != nil {
		counter = cc.Counter
		if cc.NotApplicable {
			counter = NoCounter
		}
	}
	cc := CheckCounter(&s, client, counter)
	if cc != nil && cc.Note != "" && !cc.NotApplicable {
		cc.Note = "merged runners: " + cc.Note
	}
	return cc
}

// Describe is the merged result's runners in one line: "4 runners: 1/4
// host-a, 2/4 host-b, ...".
func (s *Split) Describe() string {
	var b strings.Builder
	b.WriteString(s.Label())
	for i, p := range s.Parts {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(p.Segment)
		if p.Host != "" {
			b.WriteString(" " + p.Host)
		}
	}
	if len(s.Missing) > 0 {
		b.WriteString("; " + strings.Join(s.Missing, "; "))
	}
	return b.String()
}
