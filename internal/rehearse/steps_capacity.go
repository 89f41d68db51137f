package rehearse

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
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
// configuration and targets, before anything runs: a bad SLO, peak or
// workload is a usage error naming its line. The search runs the sweep's
// first workload at its highest thread level on the source (the control)
// and every candidate.
func capacityPlan(p *plan.Rehearsal, version string) (*capacity.Config, []capacity.Target, error) {
	c := p.Capacity
	if c == nil || p.Steps[plan.StepCapacity].Skip {
		return nil, nil, nil
	}
	if p.Sweep == nil || len(p.Sweep.Workloads) == 0 {
		return nil, nil, usage.Errorf("%s:%d: capacity: needs a sweep: section: capacity searches its first workload", p.Path, c.Line)
	}
	slo, err := capacity.ParseSLO([]string{c.SLO})
	if err != nil {
		return nil, nil, usage.Errorf("%s:%d: capacity slo: %v", p.Path, c.Line, err)
	}
	w := p.Sweep.Workloads[0]
	threads := 1
	for _, n := range p.Sweep.Threads {
		threads = max(threads, n)
	}
	args := []string{w.Name, "--threads=" + strconv.Itoa(threads)}
	for _, o := range p.Sweep.EffectiveOptions(w) {
		args = append(args, "--"+o.Key+"="+o.Value)
	}
	cfg := &capacity.Config{Args: args, Control: p.Source.Name, Warmup: capacityWarmupS, Time: capacityStepS,
		Searches: c.Searches, Version: version,
		Options: capacity.Options{SLO: slo, Bracket: capacityBracket, Repeats: capacityRepeats, Budget: capacityBudget}}
	if c.StepTimeS > 0 {
		cfg.Time = c.StepTimeS
	}
	if c.WarmupS > 0 {
		cfg.Warmup = c.WarmupS
	}
	// The run lines carry no password: each target's URL as the plan
	// wrote it (it holds none) names a variable that only Password,
	// which answers from the targets already resolved, knows.
	passwords := map[string]string{}
	for i, t := range append([]*plan.Target{p.Source}, p.Candidates...) {
		u := t.URL
		if pw := t.Target.Password; pw != "" {
			name := t.Target.PasswordEnv
			if name == "" {
				name = fmt.Sprintf("SHAKEDOWN_REHEARSAL_PW_%d", i)
				u = withParam(u, "password_env", name)
			}
			passwords[name] = pw
		}
		cfg.Targets = append(cfg.Targets, t.Name+"="+u)
	}
	cfg.Password = func(name string) string { return passwords[name] }
	targets, err := capacity.Plan(*cfg)
	if err != nil {
		return nil, nil, usage.Errorf("%s:%d: %v", p.Path, c.Line, err)
	}
	// The peak is read as capacity --peak reads it, a file from the
	// plan's directory as the replay's capture is; the event kind that
	// picks a watch file's figure is the planned workload's.
	if cfg.Peak, cfg.PeakFrom, err = capacity.ReadPeak(p.ProductionPeak, filepath.Dir(p.Path), targets); err != nil {
		return nil, nil, usage.Errorf("%s:%d: production_peak: %v", p.Path, p.ProductionPeakLine, err)
	}
	return cfg, targets, nil
}

// withParam adds key=value to a URL's query.
func withParam(u, key, value string) string {
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	return u + sep + key + "=" + url.QueryEscape(value)
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
		return Result{Skipped: true, Summary: "skipped: the plan has no capacity: section"}, nil
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
