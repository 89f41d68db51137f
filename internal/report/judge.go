package report

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/stats"
	"github.com/shakedown/shakedown/internal/store"
)

// NewBaseline is the baseline name of target's runs among runs (those of
// one stored sweep, or runs made one by one; source says which): the
// counted runs of target, and as witnesses the counted runs of every other
// target among them. The witnesses ran on the same machine at the same
// time, so a later comparison can tell a machine that moved from a server
// that did. workloads are target's, in order of appearance. A baseline
// with no RunIDs is for the caller to refuse.
func NewBaseline(name, source, target string, at time.Time, runs []store.Run) (b store.Baseline, workloads []string) {
	b = store.Baseline{Name: name, CreatedAt: at, Target: target, Source: source}
	for _, r := range runs {
		if !Counted(r) {
			continue
		}
		if r.Target != target {
			b.WitnessRunIDs = append(b.WitnessRunIDs, r.ID)
			continue
		}
		b.RunIDs = append(b.RunIDs, r.ID)
		if !slices.Contains(workloads, r.Workload) {
			workloads = append(workloads, r.Workload)
		}
	}
	return b, workloads
}

// BaselineJudgement is new results judged against a baseline.
type BaselineJudgement struct {
	Baseline store.Baseline
	// Report has the baseline's runs as the control ("baseline NAME") and
	// the new runs of its target as the candidate.
	Report *Report
	// Slower lists the figures that came out slower than the baseline
	// (Report.Slower): a regression.
	Slower []string
	// Moved lists the figures that moved against the baseline by as much
	// as every other target measured beside them (Report.Moved): the
	// machine changed, and they are inconclusive rather than slower or
	// faster.
	Moved []string
}

// JudgeBaseline compares fresh runs (of a sweep, or made one by one) with
// baseline b: the baseline's target, run by run, by the statistics of any
// comparison (see Method). Two rules come on top, both about what the
// figures of one target cannot say alone:
//
//   - Runs compared with themselves (the very runs the baseline was saved
//     from) are the same, whatever their spread.
//   - A figure that came out faster or slower is held against the other
//     targets of the new results that the baseline kept as witnesses
//     (measured beside its runs, see NewBaseline). When every witness
//     moved the same way against its own runs in the baseline, and the
//     target did not move against them (its runs divided by the
//     witness's of the same repeat are neither slower nor faster than in
//     the baseline), the machine changed, not the server: the figure is
//     "inconclusive: the machine changed (xFACTOR)", FACTOR being how far
//     the first witness moved, and is not a regression.
//
// New runs that do not match the baseline's workloads or options are bad
// input (see AgainstBaseline).
func JudgeBaseline(ctx context.Context, st *store.Store, b store.Baseline, fresh []store.Run) (*BaselineJudgement, error) {
	base, err := st.RunsByID(ctx, b.RunIDs)
	if err != nil {
		return nil, fmt.Errorf("read the runs of baseline %s: %w", b.Name, err)
	}
	witnesses, err := st.RunsByID(ctx, b.WitnessRunIDs)
	if err != nil {
		return nil, fmt.Errorf("read the runs beside baseline %s: %w", b.Name, err)
	}
	d, err := AgainstBaseline(b, base, fresh)
	if err != nil {
		return nil, err
	}
	rep := Build(d)
	j := &BaselineJudgement{Baseline: b, Report: rep}
	pick := picked(b, fresh)
	for _, w := range rep.Workloads {
		for _, c := range w.Comparisons() {
			ctl, cand := w.Row(c.Control, c.Threads), w.Row(c.Candidate, c.Threads)
			if ctl == nil || cand == nil {
				continue
			}
			if len(cand.Runs) > 0 && slices.Equal(runIDs(ctl.Runs), runIDs(cand.Runs)) {
				c.own()
				continue
			}
			cell := cellOf(w.Name, c.Threads)
			wit := witnessCells(witnesses, fresh, b.Target, pick, cell)
			for _, f := range c.figures() {
				if f.c.Reason == stats.ReasonClientBound || f.c.State == Wrong {
					continue // inconclusive or wrong already, for a reason of its own
				}
				if why, ok := rep.machineMoved(*f.c, f.get, f.lowerIsBetter, cell(base, b.Target), cell(fresh, pick), wit); ok {
					rep.Moved = append(rep.Moved, fmt.Sprintf("%s at %d threads: %s %s [%s], %s", w.Name, c.Threads, f.name, f3(f.c.Ratio), intervalText(*f.c), why))
					f.c.State, f.c.Needed = stats.Inconclusive, 0
					f.c.Reason = fmt.Sprintf("the machine changed (x%s)", f3(wit[0].moved.Ratio))
				}
			}
			if c.Verdict != stats.NoData {
				c.Verdict = c.QPS.State
			}
		}
	}
	j.Slower, j.Moved = rep.Slower(), rep.Moved
	return j, nil
}

// picked is the target of the fresh runs that AgainstBaseline compares
// with the baseline.
func picked(b store.Baseline, fresh []store.Run) string {
	if slices.ContainsFunc(fresh, func(r store.Run) bool { return r.Target == b.Target }) {
		return b.Target
	}
	for _, r := range fresh {
		if r.Role == "control" {
			return r.Target
		}
	}
	if len(fresh) > 0 {
		return fresh[0].Target
	}
	return ""
}

func runIDs(runs []store.Run) []int64 {
	out := make([]int64, 0, len(runs))
	for _, r := range runs {
		out = append(out, r.ID)
	}
	slices.Sort(out)
	return out
}

// own makes every figure of c "same": the candidate's runs are the
// control's own.
func (c *Comparison) own() {
	for _, f := range c.figures() {
		s := f.c
		*s = stats.Comparison{Control: s.Control, Candidate: s.Candidate, Ratio: 1, Low: 1, High: 1, Interval: true, Confidence: 1, P: 1,
			State: stats.Same, Threshold: s.Threshold, Reason: "the baseline's own runs"}
	}
	c.Ratio, c.Verdict = 1, stats.Same
}

// figure is one figure of a comparison and how to read it from a result.
type figure struct {
	name          string
	c             *stats.Comparison
	get           func(*result.Result) float64
	lowerIsBetter bool
}

func (c *Comparison) figures() []figure {
	return []figure{
		{"QPS", &c.QPS, func(r *result.Result) float64 { return r.QPS }, false},
		{"TPS", &c.TPS, func(r *result.Result) float64 { return r.TPS }, false},
		{"p95", &c.P95, func(r *result.Result) float64 { return r.LatencyMS.P95 }, true},
		{"p99", &c.P99, func(r *result.Result) float64 { return r.LatencyMS.P99 }, true},
	}
}

// cellOf returns a filter of the counted runs of one target at one
// workload and thread level.
func cellOf(workload string, threads int) func(runs []store.Run, target string) []store.Run {
	return func(runs []store.Run, target string) []store.Run {
		var out []store.Run
		for _, r := range runs {
			if r.Target == target && r.Workload == workload && r.Threads == threads && Counted(r) {
				out = append(out, r)
			}
		}
		return out
	}
}

// witness is one other target's runs at a cell, in the baseline and now.
type witness struct {
	name      string
	base, now []store.Run
	moved     stats.Comparison // set by machineMoved
}

// witnessCells are the witnesses at a cell that have runs on both sides:
// the targets the baseline kept beside its own, other than its target
// and the one now compared with it.
func witnessCells(kept, fresh []store.Run, target, pick string, cell func([]store.Run, string) []store.Run) []witness {
	var names []string
	for _, r := range kept {
		if r.Target != target && r.Target != pick && !slices.Contains(names, r.Target) {
			names = append(names, r.Target)
		}
	}
	var out []witness
	for _, n := range names {
		w := witness{name: n, base: cell(kept, n), now: cell(fresh, n)}
		if len(w.base) > 0 && len(w.now) > 0 {
			out = append(out, w)
		}
	}
	return out
}

// machineMoved says whether a figure that came out faster or slower (c)
// moved only as far as every witness did, and if so how they moved, in a
// few words. Where the target moved further than a witness, or less far,
// the targets did not move alike and c stands.
func (r *Report) machineMoved(c stats.Comparison, get func(*result.Result) float64, lowerIsBetter bool, base, now []store.Run, wit []witness) (string, bool) {
	if (c.State != stats.Slower && c.State != stats.Faster) || len(wit) == 0 {
		return "", false
	}
	o := stats.Options{Threshold: r.Threshold, Confidence: r.Confidence, LowerIsBetter: lowerIsBetter}
	var parts []string
	for i := range wit {
		w := &wit[i]
		w.moved = stats.Compare(values(w.base, get), values(w.now, get), o)
		beyond := stats.Compare(relative(base, w.base, get), relative(now, w.now, get), o)
		if w.moved.State != c.State || beyond.State == stats.Slower || beyond.State == stats.Faster {
			return "", false
		}
		parts = append(parts, fmt.Sprintf("%s %s [%s]", w.name, f3(w.moved.Ratio), intervalText(w.moved)))
	}
	return "and so did " + strings.Join(parts, ", "), true
}

func values(runs []store.Run, get func(*result.Result) float64) []float64 {
	out := make([]float64, 0, len(runs))
	for _, r := range runs {
		out = append(out, get(r.Result))
	}
	return out
}

// relative is each of runs divided by the witness's run of the same sweep
// and repeat, which ran beside it on the same machine, else by the
// witness's median: what is left is the target's own, less the machine's.
func relative(runs, wit []store.Run, get func(*result.Result) float64) []float64 {
	med := stats.Median(values(wit, get))
	out := make([]float64, 0, len(runs))
	for _, r := range runs {
		by := med
		for _, w := range wit {
			if r.SweepID != 0 && w.SweepID == r.SweepID && w.Repeat == r.Repeat && get(w.Result) > 0 {
				by = get(w.Result)
				break
			}
		}
		if by > 0 {
			out = append(out, get(r.Result)/by)
		}
	}
	return out
}
