package readiness

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/shakedown/shakedown/internal/report"
	"github.com/shakedown/shakedown/internal/stats"
	"github.com/shakedown/shakedown/internal/store"
)

// ErrNoCandidate means the sweep asked for does not have the target among
// its candidates.
var ErrNoCandidate = errors.New("the sweep has no candidate at the target's address")

// readSweep finds the sweep and reads the target's verdicts against the
// control from the report's model. Only the verdict of each comparison is
// used: faster, slower and same, and anything else (no data, no verdict,
// inconclusive) as inconclusive.
func (p *Page) readSweep(ctx context.Context, st *store.Store, opts Options) error {
	want := endpointOf(opts.Target)
	candidateIn := func(id int64) (string, error) {
		targets, err := st.Targets(ctx, id)
		if err != nil {
			return "", err
		}
		for _, t := range targets {
			if t.Role != "control" && endpointOfURL(t.URL) == want {
				return t.Name, nil
			}
		}
		return "", nil
	}
	id, candidate := opts.SweepID, ""
	if id != 0 {
		c, err := candidateIn(id)
		if err != nil {
			return err
		}
		if c == "" {
			return fmt.Errorf("sweep %d: %w (%s)", id, ErrNoCandidate, want)
		}
		candidate = c
	} else {
		sweeps, err := st.Sweeps(ctx)
		if err != nil {
			return err
		}
		for _, sw := range sweeps {
			c, err := candidateIn(sw.ID)
			if err != nil {
				return err
			}
			if c != "" {
				id, candidate = sw.ID, c
				break
			}
		}
	}
	if candidate == "" {
		p.Sweep.Status = StatusMissing
		return nil
	}
	d, err := st.Load(ctx, id)
	if err != nil {
		return err
	}
	r := report.Build(d)
	p.SweepName, p.Candidate, p.Control = fmt.Sprintf("sweep %d (%s)", id, d.Sweep.Name), candidate, r.Control
	p.Sweep.At = d.Sweep.StartedAt
	counts := map[stats.State]int{}
	var slower, unsure []string
	for _, w := range r.Workloads {
		for _, c := range w.Comparisons() {
			if c.Candidate != candidate {
				continue
			}
			v := verdictOf(c.Verdict)
			p.Levels = append(p.Levels, SweepLevel{Workload: w.Name, Threads: c.Threads, Verdict: string(c.Verdict)})
			counts[v]++
			where := fmt.Sprintf("%s at %d threads", w.Name, c.Threads)
			switch v {
			case stats.Slower:
				slower = append(slower, where)
			case stats.Inconclusive:
				unsure = append(unsure, where)
			}
		}
	}
	n := len(p.Levels)
	var parts []string
	for _, v := range []stats.State{stats.Faster, stats.Same, stats.Slower, stats.Inconclusive} {
		if counts[v] > 0 {
			parts = append(parts, fmt.Sprintf("%s at %d", v, counts[v]))
		}
	}
	what := fmt.Sprintf("%s against %s in %s: %s of %d levels", candidate, r.Control, p.SweepName, strings.Join(parts, ", "), n)
	switch {
	case n == 0:
		p.Sweep.Status, p.Sweep.Summary = StatusIncomplete, fmt.Sprintf("%s has no comparison of %s against the control", p.SweepName, candidate)
	case len(slower) > 0:
		p.Sweep.Status, p.Sweep.Summary = StatusFail, what+"; slower: "+strings.Join(slower, ", ")
	case len(unsure) > 0:
		p.Sweep.Status, p.Sweep.Summary = StatusWarn, what+"; no verdict: "+strings.Join(unsure, ", ")
	default:
		p.Sweep.Status, p.Sweep.Summary = StatusPass, what
	}
	return nil
}

// verdictOf maps the report's verdict to the four states the page weighs:
// anything that is not a verdict (no data, no verdict) is inconclusive.
func verdictOf(v stats.State) stats.State {
	switch v {
	case stats.Faster, stats.Slower, stats.Same:
		return v
	}
	return stats.Inconclusive
}
