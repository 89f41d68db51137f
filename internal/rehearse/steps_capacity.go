package rehearse

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/capacity"
	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/stats"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/usage"
)

// The capacity step's own settings: short steps, a coarse bracket and one
// confirmation, so that it fits in a rehearsal; the plan's capacity:
// section sets step_time, warmup and searches.
const (
	capacityStepS   = 5
	capacityWarmupS = 1
	capacityBracket = 0.1
	capacityRepeats = 1
	capacityBudget  = 15 * time.Minute
)

// capacityPlan turns the plan's capacity: section into capacity's
// configuration and targets, before anything runs (capacity.FromPlan):
// the sweep's first workload at its highest thread level on the source
// (the control) and every candidate.
func capacityPlan(p *plan.Rehearsal, version string) (*capacity.Config, []capacity.Target, error) {
	c := p.Capacity
	if c == nil || p.Steps[plan.StepCapacity].Skip {
		return nil, nil, nil
	}
	if p.Sweep == nil || len(p.Sweep.Workloads) == 0 {
		return nil, nil, usage.Errorf("%s:%d: capacity: needs a sweep: section: capacity searches its first workload", p.Path, c.Line)
	}
	return capacity.FromPlan(c, p.Sweep, p.ProductionPeak, p.ProductionPeakLine, capacity.Config{
		Warmup: capacityWarmupS, Time: capacityStepS, Version: version,
		Options: capacity.Options{Bracket: capacityBracket, Repeats: capacityRepeats, Budget: capacityBudget}})
}

type capacityStep struct{ c *chain }

func (capacityStep) Name() string { return plan.StepCapacity }

// Run searches the capacity of the source and the candidates and stores
// the report as capacity --store does. A candidate fails when its
// capacity is below the control's or the production peak, or the SLO is
// not met at any rate; it warns when the search could not tell.
func (s capacityStep) Run(ctx context.Context) (Result, error) {
	c := s.c
	if c.capCfg == nil {
		return noSection("capacity")
	}
	rep, runErr := capacity.Run(ctx, *c.capCfg, c.capTargets, nil)
	if rep == nil {
		return Result{}, runErr
	}
	if err := rep.Save(context.WithoutCancel(ctx), c.opts.Store, c.opts.Version); err != nil {
		return Result{}, err
	}
	outcome, sums := store.OutcomePass, []string{}
	for _, t := range rep.Targets {
		o, why := capacityOutcome(rep, t)
		outcome = worse(outcome, o)
		sums = append(sums, fmt.Sprintf("%s %.0f/s%s", t.Target, t.Capacity, why))
	}
	if runErr != nil {
		outcome = worse(outcome, store.OutcomeIncomplete)
	}
	return Result{Outcome: outcome, Summary: strings.Join(sums, "; "), Ref: "capacity evidence"}, runErr
}

// capacityOutcome weighs one target's search for the rehearsal.
func capacityOutcome(rep *capacity.Report, t *capacity.Result) (string, string) {
	switch {
	case t.Outcome == capacity.NotMet:
		return store.OutcomeFail, " (the SLO is met at no rate)"
	case t.Outcome != capacity.Found:
		return store.OutcomeWarn, " (" + t.Outcome + ")"
	case rep.Peak > 0 && t.Capacity < rep.Peak:
		return store.OutcomeFail, fmt.Sprintf(" (below the production peak %.0f/s)", rep.Peak)
	}
	for _, v := range rep.Versus {
		if v.Candidate != t.Target {
			continue
		}
		switch v.State {
		case stats.Slower:
			return store.OutcomeFail, fmt.Sprintf(" (%.2fx the control's: slower)", v.Ratio)
		case stats.Faster, stats.Same:
			return store.OutcomePass, fmt.Sprintf(" (%.2fx the control's)", v.Ratio)
		default:
			return store.OutcomeWarn, fmt.Sprintf(" (%.2fx the control's: %s)", v.Ratio, v.State)
		}
	}
	return store.OutcomePass, ""
}
