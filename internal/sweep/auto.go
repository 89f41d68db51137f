package sweep

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/stats"
	"github.com/shakedown/shakedown/internal/store"
)

// moreRepeats decides the next round of repeats: auto from what the sweep
// has stored. A workload and thread level (a cell) gets one more repeat of
// every target while any candidate's QPS against the control is
// inconclusive and the estimate of the runs that would settle it is within
// twice max_repeats (always while it has fewer than stats.MinRunsFor95);
// cells at max_repeats, those that would need far more, and those with a
// client-bound run are left as they are, and the progress says so once. last is the highest
// step number so far; the new steps are numbered after it.
func (s *sweeper) moreRepeats(ctx context.Context, st *store.Store, id int64, last *int) ([]plan.Step, error) {
	runs, err := st.Runs(ctx, id)
	if err != nil {
		return nil, err
	}
	p := s.p
	type cellKey struct {
		workload string
		threads  int
	}
	samples := map[cellKey]map[string][]float64{}
	repeats := map[cellKey]int{}
	bound := map[cellKey]bool{}
	// A step run again (resumed) counts by its last run.
	for _, r := range store.Latest(runs) {
		k := cellKey{r.Workload, r.Threads}
		repeats[k] = max(repeats[k], r.Repeat)
		if !store.Counted(r) {
			continue
		}
		bound[k] = bound[k] || r.Result.ClientBound()
		if samples[k] == nil {
			samples[k] = map[string][]float64{}
		}
		samples[k][r.Target] = append(samples[k][r.Target], r.Result.QPS)
	}
	ctl := p.Control()
	var open []plan.Cell
	var waiting, hopeless, clientBound []string
	cells := p.Cells()
	for _, c := range cells {
		k := cellKey{c.Workload.Label(), c.Threads}
		name := fmt.Sprintf("%s at %d threads", k.workload, k.threads)
		if bound[k] {
			// A run the client limited makes the cell inconclusive
			// (client-bound) however many runs it gets.
			if !s.told[name] {
				clientBound = append(clientBound, name)
				s.told[name] = true
			}
			continue
		}
		worst := 0 // the most runs any candidate needs; 0: all settled
		for _, t := range p.Targets {
			if t == ctl {
				continue
			}
			cmp := stats.Compare(samples[k][ctl.Name], samples[k][t.Name], stats.Options{Threshold: threshold(p)})
			if cmp.State == stats.Inconclusive {
				worst = max(worst, cmp.Needed)
			}
		}
		switch {
		case worst == 0:
		case repeats[k] >= p.MaxRepeats:
		case worst > 2*p.MaxRepeats && repeats[k] >= stats.MinRunsFor95:
			// The estimate from a few runs is rough: give up only when it
			// is far beyond the maximum, and never below MinRunsFor95,
			// where there is no interval yet.
			if !s.told[name] {
				hopeless = append(hopeless, fmt.Sprintf("%s (~%s runs a side)", name, needText(worst)))
				s.told[name] = true
			}
		default:
			open = append(open, c)
			waiting = append(waiting, name)
		}
	}
	if len(clientBound) > 0 {
		s.pr.Printf("repeats: auto: left inconclusive (client-bound), as the client limited a run of theirs and more runs of the same client will not settle them: %s", strings.Join(clientBound, "; "))
	}
	if len(hopeless) > 0 {
		s.pr.Printf("repeats: auto: left inconclusive, as settling them would take far more than max_repeats %d: %s", p.MaxRepeats, strings.Join(hopeless, "; "))
	}
	if len(open) == 0 {
		return nil, nil
	}
	sort.SliceStable(open, func(i, j int) bool { return open[i].Index < open[j].Index })
	var steps []plan.Step
	for _, c := range open {
		r := repeats[cellKey{c.Workload.Label(), c.Threads}] + 1
		more := p.MoreSteps([]plan.Cell{c}, r, *last)
		*last += len(more)
		steps = append(steps, more...)
	}
	s.pr.Printf("repeats: auto: %d of %d workload and thread levels still inconclusive; one more repeat of each (%d steps): %s",
		len(open), len(cells), len(steps), strings.Join(waiting, ", "))
	return steps, nil
}

func needText(n int) string {
	if n >= 1000 {
		return "1000+"
	}
	return fmt.Sprint(n)
}

// threshold is the plan's noise threshold as the statistics take it: 0
// there means "any difference", which stats spells as a tiny threshold.
func threshold(p *plan.Plan) float64 {
	if p.NoiseThreshold <= 0 {
		return 1e-9
	}
	return p.NoiseThreshold
}
