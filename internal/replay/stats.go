package replay

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/shakedown/shakedown/internal/fingerprint"
	"github.com/shakedown/shakedown/internal/histogram"
	"github.com/shakedown/shakedown/internal/stats"
)

// fpStats are one fingerprint's figures. Guarded by tally.mu.
type fpStats struct {
	info          *fingerprint.Info
	example       string
	count         int64
	differences   int64
	errors        int64 // statements that failed on any target
	nondet        int64
	notComparable int64
	lat           []*histogram.Histogram // per target: control first
	samples       [][]float64            // per target: latency samples (ms), a reservoir
	seen          []int64
	perCand       []candStats
	examples      int
}

// candStats are one candidate's figures for one fingerprint.
type candStats struct {
	differences int64
	newErrors   int64
	nondet      int64
	notComp     int64
}

// maxSamples bounds the latency samples kept per fingerprint and target
// for the verdict; the histograms hold every value.
const maxSamples = 4000

// tally gathers the replay's figures from every session.
type tally struct {
	mu      sync.Mutex
	ntarget int
	byFP    map[string]*fpStats
	rng     *rand.Rand

	statements    int64
	differences   int64
	newErrors     int64
	errors        int64
	nondet        int64
	notComparable int64
	lost          int64 // statements that met a dropped connection
	skipped       map[string]int64
	examples      []Example
	perTarget     []targetTotals
}

type targetTotals struct {
	errors int64
	busy   time.Duration
}

// maxExamples bounds the examples kept in all, and per fingerprint.
const (
	maxExamples      = 50
	maxExamplesPerFP = 3
)

func newTally(ntarget int) *tally {
	return &tally{ntarget: ntarget, byFP: map[string]*fpStats{}, skipped: map[string]int64{},
		rng: rand.New(rand.NewPCG(7, 11)), perTarget: make([]targetTotals, ntarget)}
}

func (t *tally) skip(reason string) {
	t.mu.Lock()
	t.skipped[reason]++
	t.mu.Unlock()
}

// add records one statement's results on every target (control first).
func (t *tally) add(st *stmt, res []result) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.byFP[st.info.Digest]
	if f == nil {
		f = &fpStats{info: st.info, example: st.rec.SQL, lat: make([]*histogram.Histogram, t.ntarget),
			samples: make([][]float64, t.ntarget), seen: make([]int64, t.ntarget), perCand: make([]candStats, t.ntarget-1)}
		for i := range f.lat {
			f.lat[i] = histogram.New()
		}
		t.byFP[st.info.Digest] = f
	}
	t.statements++
	f.count++
	failed := false
	for i := range res {
		r := &res[i]
		if r.errCode != 0 {
			failed = true
			t.perTarget[i].errors++
		}
		if r.lost {
			t.lost++
		}
		t.perTarget[i].busy += r.dur
		if r.lost {
			continue // a broken connection's time says nothing of the server
		}
		f.lat[i].Record(r.dur)
		f.seen[i]++
		ms := float64(r.dur) / 1e6
		if len(f.samples[i]) < maxSamples {
			f.samples[i] = append(f.samples[i], ms)
		} else if j := t.rng.Int64N(f.seen[i]); j < maxSamples {
			f.samples[i][j] = ms
		}
	}
	if failed {
		f.errors++
		t.errors++
	}
	differs, nondet, notComp := false, false, false
	for ci := 1; ci < len(res); ci++ {
		cmp := compare(&res[0], &res[ci], st.info)
		cs := &f.perCand[ci-1]
		switch cmp.outcome {
		case Different:
			differs = true
			cs.differences++
			if cmp.newErr {
				cs.newErrors++
				t.newErrors++
			}
			if f.examples < maxExamplesPerFP && len(t.examples) < maxExamples {
				f.examples++
				t.examples = append(t.examples, makeExample(st, res, ci, cmp.kind))
			}
		case NonDeterministic:
			nondet = true
			cs.nondet++
		case NotComparable:
			notComp = true
			cs.notComp++
		}
	}
	switch {
	case differs:
		f.differences++
		t.differences++
	case notComp:
		f.notComparable++
		t.notComparable++
	case nondet:
		f.nondet++
		t.nondet++
	}
}

// LatencyVerdict compares a candidate's latencies with the control's by
// the project's statistics (internal/stats): the ratio of medians
// (candidate / control: above 1 is slower) with its exact 95% interval,
// and a state. Each statement's latency is one sample; up to maxCompared
// of them a side, evenly spaced, keep the interval's m*n ratios cheap.
// Fewer than minSamples on either side gives no verdict: a statement's
// latency is far noisier than a whole run's, and so is the threshold,
// latencyThreshold.
func LatencyVerdict(control, candidate []float64) (ratio, lo, hi float64, state stats.State) {
	if len(control) < minSamples || len(candidate) < minSamples {
		return 0, 0, 0, stats.NoVerdict
	}
	c := stats.Compare(thin(control, maxCompared), thin(candidate, maxCompared),
		stats.Options{Threshold: latencyThreshold, LowerIsBetter: true})
	return c.Ratio, c.Low, c.High, c.State
}

// PairedLatencyVerdict is LatencyVerdict for samples that are pairs:
// control[i] and candidate[i] timed the same statement (the mirror's).
// The ratio is the median of the pairs' ratios, within its sign-test
// interval (stats.ComparePaired); the thresholds are LatencyVerdict's.
func PairedLatencyVerdict(control, candidate []float64) (ratio, lo, hi float64, state stats.State) {
	if min(len(control), len(candidate)) < minSamples {
		return 0, 0, 0, stats.NoVerdict
	}
	c := stats.ComparePaired(control, candidate, stats.Options{Threshold: latencyThreshold, LowerIsBetter: true})
	return c.Ratio, c.Low, c.High, c.State
}

// thin keeps n evenly spaced values of xs.
func thin(xs []float64, n int) []float64 {
	if len(xs) <= n {
		return xs
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = xs[i*len(xs)/n]
	}
	return out
}

const (
	maxCompared      = 400
	minSamples       = 10
	latencyThreshold = 0.10
)
