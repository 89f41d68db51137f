package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/shakedown/shakedown/internal/result"
)

// stepKey names one step of one split load.
type splitStep struct {
	split int64
	step  int
}

// mergeSplits replaces the runners' parts of each step of a split load
// among runs by one run that merges them (result.Merge), at the place of
// the first part. complete says runs holds every part of the steps it
// has parts of; otherwise the missing parts are read. Runs alone pass
// through as they are.
func (s *Store) mergeSplits(ctx context.Context, runs []Run, complete bool) ([]Run, error) {
	groups := map[splitStep][]Run{}
	var order []splitStep
	for _, r := range runs {
		if r.Part == nil {
			continue
		}
		k := splitStep{r.Part.SplitID, r.Step}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	if len(order) == 0 {
		return runs, nil
	}
	c := &mergeCache{splits: map[int64]*Split{}, runners: map[int64][]Runner{}}
	merged := map[splitStep]Run{}
	for _, k := range order {
		parts := groups[k]
		if !complete {
			var err error
			if parts, err = s.queryRuns(ctx, `split_id = ? AND step = ? ORDER BY seg_index`, k.split, k.step); err != nil {
				return nil, fmt.Errorf("read the runners of split %d step %d: %w", k.split, k.step, err)
			}
		}
		m, err := s.mergeStep(ctx, c, parts)
		if err != nil {
			return nil, err
		}
		merged[k] = m
	}
	out := make([]Run, 0, len(runs))
	done := map[splitStep]bool{}
	for _, r := range runs {
		if r.Part == nil {
			out = append(out, r)
			continue
		}
		k := splitStep{r.Part.SplitID, r.Step}
		if !done[k] {
			done[k] = true
			out = append(out, merged[k])
		}
	}
	return out, nil
}

type mergeCache struct {
	splits  map[int64]*Split
	runners map[int64][]Runner
}

// mergeStep merges the parts one step of a split load got.
func (s *Store) mergeStep(ctx context.Context, c *mergeCache, parts []Run) (Run, error) {
	parts = slices.Clone(parts)
	slices.SortFunc(parts, func(a, b Run) int { return a.Part.Index - b.Part.Index })
	id := parts[0].Part.SplitID
	sp, ok := c.splits[id]
	if !ok {
		var err error
		if sp, err = s.SplitByID(ctx, id); err != nil {
			return Run{}, err
		}
		c.splits[id] = sp
		if c.runners[id], err = s.Runners(ctx, id); err != nil {
			return Run{}, err
		}
	}
	ids := make([]int64, len(parts))
	for i, p := range parts {
		ids[i] = p.ID
	}
	hdrs, err := s.intervalHDR(ctx, ids)
	if err != nil {
		return Run{}, err
	}
	byIndex := map[int]Run{}
	for _, p := range parts {
		byIndex[p.Part.Index] = p
	}
	var in []result.Runner
	seen := map[int]bool{}
	add := func(idx int, reg *Runner) {
		r := result.Runner{Index: idx, Label: fmt.Sprintf("segment %d", idx+1)}
		if reg != nil {
			r.Range, r.Label, r.Host, r.ClockOffset = reg.Segment, reg.Label, reg.Host, reg.ClockOffset
		}
		if p, ok := byIndex[idx]; ok {
			r.Status, r.Error, r.Result, r.Intervals = p.Status, p.Error, p.Result, hdrs[p.ID]
			if seg := p.Result; seg != nil && seg.Segment != nil {
				if r.Range == "" {
					r.Range = seg.Segment.Range
				}
				if reg == nil {
					r.Label, r.Host = seg.Segment.Label, seg.Segment.Host
				}
			}
		}
		seen[idx] = true
		in = append(in, r)
	}
	for i := range c.runners[id] {
		reg := &c.runners[id][i]
		add(reg.Index, reg)
	}
	for _, p := range parts {
		if !seen[p.Part.Index] {
			add(p.Part.Index, nil)
		}
	}
	m := parts[0]
	m.Part = nil
	for _, p := range parts {
		m.WallS = max(m.WallS, p.WallS)
		if p.StartedAt.Before(m.StartedAt) {
			m.StartedAt = p.StartedAt
		}
	}
	res, err := result.Merge(in, sp.Runners, sp.Sequence)
	if errors.Is(err, result.ErrNothingToMerge) {
		var why []string
		for _, p := range parts {
			if p.Error != "" {
				why = append(why, p.Error)
			}
		}
		m.Result, m.Status = nil, RunFailed
		m.Error = fmt.Sprintf("no runner of the %d measured anything", sp.Runners)
		if len(why) > 0 {
			m.Error += ": " + strings.Join(why, "; ")
		}
		return m, nil
	}
	if err != nil {
		return Run{}, fmt.Errorf("merge the runners of split %d step %d: %w", id, m.Step, err)
	}
	m.Result, m.Degraded = res, res.Degraded
	// Every runner's part was judged by result.StatusOf when it was
	// stored; the merged whole is judged by it too (ok when each part
	// was), unless runners are missing from it.
	status, why := result.StatusOf(res, nil, false)
	m.Status, m.Error = status, ""
	if why != nil {
		m.Error = why.Error()
	}
	if res.Split.Partial {
		m.Status = RunPartial
		m.Error = res.Split.Label()
		if len(res.Split.Missing) > 0 {
			m.Error += ": " + strings.Join(res.Split.Missing, "; ")
		}
		for _, w := range res.Split.Warnings {
			m.Error += "; " + w
		}
	}
	return m, nil
}

// Parts returns the runners' parts of a split load as they stored them,
// unmerged, by step and segment.
func (s *Store) Parts(ctx context.Context, splitID int64) ([]Run, error) {
	runs, err := s.queryRuns(ctx, `split_id = ? ORDER BY step, seg_index`, splitID)
	if err != nil {
		return nil, fmt.Errorf("read the parts of split %d: %w", splitID, err)
	}
	return runs, nil
}
