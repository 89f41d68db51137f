package mirror

import (
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shakedown/shakedown/internal/fingerprint"
	"github.com/shakedown/shakedown/internal/replay"
)

// tally gathers the figures of every session. The counters are atomic so
// that the client's path takes no lock but the one that finds a class;
// the latency samples and the samples of differences are under mu.
type tally struct {
	cands   []string
	keepLit bool

	through, mirrored, compared, differing, dropped atomic.Int64
	sessions                                        atomic.Int64
	// refusedPlain counts the clients refused for want of TLS (3159).
	refusedPlain atomic.Int64
	// ctlNS and candNS sum the latency of the compared statements (the
	// progress line's ratio over its last interval); byCand sums them per
	// candidate (each candidate's ratio, and its ratio over each period).
	ctlNS, candNS atomic.Int64
	byCand        []candNS

	mu      sync.Mutex
	classes map[string]*class
	other   map[string]int64 // commands other than COM_QUERY not mirrored
	rng     *rand.Rand
}

// candNS sums one candidate's latency and the control's over the same
// statements.
type candNS struct{ ctl, cand atomic.Int64 }

// class is one fingerprint's figures.
type class struct {
	info      *fingerprint.Info
	statement string // the first statement seen, literals redacted unless kept
	through   atomic.Int64
	cand      []classCand

	// Under tally.mu.
	skipped map[string]int64
}

// classCand is one class's figures on one candidate.
type classCand struct {
	mirrored, compared, differing, nondet, notComparable atomic.Int64
	dropped, down, lost, sessionErrors                   atomic.Int64

	// Under tally.mu: latency samples (ms) of compared statements, both
	// sides of each comparison at one index, a reservoir of maxSamples;
	// the same for the snapshot period under way (pctl, pcand: a
	// reservoir of maxPeriodSamples, emptied when a period ends); and the
	// first difference.
	ctl, cand   []float64
	seen        int64
	pctl, pcand []float64
	pseen       int64
	sample      *Sample
}

// maxPeriodSamples bounds the latency samples kept per class and
// candidate for the snapshot period under way.
const maxPeriodSamples = 1000

// maxSamples bounds the latency samples kept per class and candidate.
const maxSamples = 4000

// maxClasses bounds the classes kept; past it new fingerprints share one
// class, so that memory depends on the variety of statements up to a
// bound, never on their number.
const maxClasses = 5000

func newTally(cands []string, keepLit bool) *tally {
	return &tally{cands: cands, keepLit: keepLit, classes: map[string]*class{}, other: map[string]int64{},
		rng: rand.New(rand.NewPCG(7, 11)), byCand: make([]candNS, len(cands))}
}

// class finds (or makes) the class of a statement.
func (t *tally) class(info *fingerprint.Info, sql string) *class {
	key := info.Digest
	t.mu.Lock()
	defer t.mu.Unlock()
	if cl, ok := t.classes[key]; ok {
		return cl
	}
	if len(t.classes) >= maxClasses {
		key = "(other classes)"
		if cl, ok := t.classes[key]; ok {
			return cl
		}
		info = &fingerprint.Info{Fingerprint: key, Digest: key}
	}
	stmt := info.Fingerprint
	if t.keepLit {
		stmt, _ = fingerprint.Redact(sql)
	}
	cl := &class{info: info, statement: stmt, cand: make([]classCand, len(t.cands)), skipped: map[string]int64{}}
	t.classes[key] = cl
	return cl
}

// skip counts a statement of the class not mirrored, with why.
func (cl *class) skip(why string) {
	cl.through.Add(1)
	// The class's own lock would cost as much; the tally's is short.
	classMu.Lock()
	cl.skipped[why]++
	classMu.Unlock()
}

// classMu guards every class's skipped map: a map per class under one
// lock keeps the class small.
var classMu sync.Mutex

// notMirrored counts a command other than COM_QUERY that is not mirrored.
func (t *tally) notMirrored(why string) {
	t.mu.Lock()
	t.other[why]++
	t.mu.Unlock()
}

// compare records a candidate's result for a mirrored read.
func (t *tally) compare(ci int, it item, res *replay.Result) {
	cmp := replay.Compare(&it.control, res, it.info)
	cc := &it.cl.cand[ci]
	cc.compared.Add(1)
	t.compared.Add(1)
	ctl, cand := it.control.Duration(), res.Duration()
	t.ctlNS.Add(int64(ctl))
	t.candNS.Add(int64(cand))
	t.byCand[ci].ctl.Add(int64(ctl))
	t.byCand[ci].cand.Add(int64(cand))
	switch cmp.Outcome {
	case replay.Different:
		cc.differing.Add(1)
		t.differing.Add(1)
	case replay.NonDeterministic:
		cc.nondet.Add(1)
	case replay.NotComparable:
		cc.notComparable.Add(1)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	cc.seen++
	a, b := ms(ctl), ms(cand)
	if len(cc.ctl) < maxSamples {
		cc.ctl, cc.cand = append(cc.ctl, a), append(cc.cand, b)
	} else if j := t.rng.Int64N(cc.seen); j < maxSamples {
		cc.ctl[j], cc.cand[j] = a, b
	}
	cc.pseen++
	if len(cc.pctl) < maxPeriodSamples {
		cc.pctl, cc.pcand = append(cc.pctl, a), append(cc.pcand, b)
	} else if j := t.rng.Int64N(cc.pseen); j < maxPeriodSamples {
		cc.pctl[j], cc.pcand[j] = a, b
	}
	if cmp.Outcome == replay.Different && cc.sample == nil {
		stmt := it.cl.statement
		if t.keepLit {
			stmt, _ = fingerprint.Redact(it.sql)
		}
		cc.sample = &Sample{Statement: stmt, Kind: cmp.Kind, Control: outcomeOf(&it.control), Candidate: outcomeOf(res),
			First: replay.FirstDiff(&it.control, res, it.info)}
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func outcomeOf(r *replay.Result) SampleResult {
	out := SampleResult{Rows: r.Rows(), FirstRows: r.Sample()}
	if code, msg := r.Err(); code != 0 {
		out.Error = msg
		out.ErrorCode = code
	}
	return out
}

// sortedClasses are the classes, the most statements first.
func (t *tally) sortedClasses() []*class {
	t.mu.Lock()
	out := make([]*class, 0, len(t.classes))
	for _, cl := range t.classes {
		out = append(out, cl)
	}
	t.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].through.Load(), out[j].through.Load()
		if a != b {
			return a > b
		}
		return out[i].info.Digest < out[j].info.Digest
	})
	return out
}

// periodSamples are one class's latency samples on one candidate over a
// snapshot period: the control's and the candidate's, pairwise.
type periodSamples struct{ ctl, cand []float64 }

// takePeriod returns, per class digest, each candidate's latency samples
// of the period under way, and starts the next period's empty.
func (t *tally) takePeriod() map[string][]periodSamples {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string][]periodSamples, len(t.classes))
	for key, cl := range t.classes {
		ps := make([]periodSamples, len(cl.cand))
		for i := range cl.cand {
			cc := &cl.cand[i]
			ps[i] = periodSamples{cc.pctl, cc.pcand}
			cc.pctl, cc.pcand, cc.pseen = nil, nil, 0
		}
		out[key] = ps
	}
	return out
}
