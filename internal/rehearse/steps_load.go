package rehearse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/capture"
	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/readiness"
	"github.com/shakedown/shakedown/internal/replay"
	"github.com/shakedown/shakedown/internal/segment"
	"github.com/shakedown/shakedown/internal/stats"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/sweep"
	"github.com/shakedown/shakedown/internal/usage"
)

// The steps that put load on the servers (replay, sweep) and the page.

// preflight refuses, before anything runs, what the plan names that is
// not there: a step an hour into the chain should not be the first to
// find that a file is missing.
func preflight(p *plan.Rehearsal) error {
	if p.Replay == nil || p.Steps[plan.StepReplay].Skip {
		return nil
	}
	if _, err := os.Stat(p.Replay.Capture); err != nil {
		return usage.Errorf("%s:%d: replay: capture %s cannot be read (%v): make it with shakedown capture, or fix the path (relative paths are from the plan's directory)",
			p.Path, p.Replay.Line, p.Replay.Capture, errors.Unwrap(err))
	}
	return nil
}

type replayStep struct{ c *chain }

func (replayStep) Name() string { return plan.StepReplay }

// Run replays the plan's capture on the source (the control) and the
// candidates and stores one piece of evidence per candidate, as replay
// --store does. Statements that may write are skipped unless the plan
// says allow_writes.
func (s replayStep) Run(ctx context.Context) (Result, error) {
	c := s.c
	rp := c.p.Replay
	if rp == nil {
		return noSection("replay")
	}
	f, err := os.Open(rp.Capture)
	if err != nil {
		return Result{}, fmt.Errorf("open capture: %w", err)
	}
	defer f.Close()
	rd, err := capture.NewReader(f)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", rp.Capture, err)
	}
	targets := []replay.Target{{Name: c.p.Source.Name, Target: c.p.Source.Target, FixedDB: c.p.Source.Target.NamesDB()}}
	for _, cand := range c.p.Candidates {
		targets = append(targets, replay.Target{Name: cand.Name, Target: cand.Target, FixedDB: cand.Target.NamesDB()})
	}
	rep, runErr := replay.Run(ctx, rd, targets, replay.Options{Speed: rp.Speed, Concurrency: rp.Concurrency,
		AllowWrites: rp.AllowWrites, Timeout: time.Duration(rp.TimeoutS) * time.Second})
	if rep == nil {
		return Result{}, runErr
	}
	rep.Capture = rp.Capture
	var out Result
	var refs, sums []string
	evs, err := readiness.ReplayEvidence(rep, c.opts.Version)
	if err != nil {
		return out, err
	}
	for i, cand := range rep.Candidates {
		outcome, summary := evs[i].Outcome, evs[i].Summary
		id, err := c.evidence(ctx, evs[i], nil)
		if err != nil {
			return out, err
		}
		out.Outcome = worse(out.Outcome, outcome)
		refs = append(refs, fmt.Sprintf("evidence %d", id))
		if len(rep.Candidates) > 1 {
			summary = cand.Name + ": " + summary
		}
		sums = append(sums, summary)
	}
	out.Ref, out.Summary = strings.Join(refs, ", "), strings.Join(sums, "; ")
	return out, runErr
}

// openingLine is the rehearsal's first line: the pair, what its sweep
// runs and about how long it takes. A sweep whose repeats can never give
// stats.MinRunsFor95 runs a side leaves every level inconclusive, so the
// page can never say ready: the line says so, and which setting to change,
// before an hour is spent on it.
func openingLine(p *plan.Rehearsal) string {
	names := make([]string, len(p.Candidates))
	for i, c := range p.Candidates {
		names[i] = c.Name
	}
	line := fmt.Sprintf("rehearsal %s: %s against %s; ", p.Name, p.Source.Name, strings.Join(names, ", "))
	sp := p.Sweep
	switch {
	case sp == nil:
		return line + "no sweep: section, so the page weighs no speed"
	case p.Steps[plan.StepSweep].Skip:
		return line + "its sweep is skipped (skip: true), so the page weighs no speed"
	}
	reps := fmt.Sprintf("%d repeats", sp.Repeats)
	most, fix := sp.Repeats, fmt.Sprintf("set repeats: auto, or %d or more, under sweep:", stats.MinRunsFor95)
	if sp.AutoRepeats {
		reps = fmt.Sprintf("%d repeats, auto: more where inconclusive, up to %d", sp.Repeats, sp.MaxRepeats)
		most, fix = sp.MaxRepeats, fmt.Sprintf("set max_repeats: %d or more under sweep:", stats.MinRunsFor95)
	}
	line += fmt.Sprintf("its sweep: %d load steps (%d targets x %d workloads x %d thread levels x %s), about %s",
		len(sp.Steps()), len(sp.Targets), len(sp.Workloads), len(sp.Threads), reps, sweep.Estimate(sp, segment.Split{}))
	if most < stats.MinRunsFor95 {
		run := "runs"
		if most == 1 {
			run = "run"
		}
		line += fmt.Sprintf("; with %d %s a side it cannot reach a verdict (that needs %d runs a side), so the page can say at best %s: %s",
			most, run, stats.MinRunsFor95, readiness.ReadyWithWarnings, fix)
	}
	return line
}

type sweepStep struct{ c *chain }

func (sweepStep) Name() string { return plan.StepSweep }

// Run runs the plan's sweep and stores it as a sweep of its own; the
// readiness page weighs its verdicts. A sweep this rehearsal began before
// it was killed is continued, not begun again.
func (s sweepStep) Run(ctx context.Context) (Result, error) {
	c := s.c
	p := c.p.Sweep
	if p == nil {
		return noSection("sweep")
	}
	envs, err := sweep.Preflight(ctx, io.Discard, p, segment.Split{}, c.resumeSweep != 0)
	if err != nil {
		return Result{}, err
	}
	opt := sweep.Options{Store: c.opts.Store, Host: c.opts.Host, Version: c.opts.Version, Resume: c.resumeSweep}
	if c.line != nil {
		opt.MoreSteps = c.line.moreSweepSteps
	}
	sum, err := sweep.Run(ctx, p, envs, opt)
	if sum == nil || sum.SweepID == 0 {
		return Result{}, err
	}
	c.sweepID = sum.SweepID
	res := Result{Ref: fmt.Sprintf("sweep %d", sum.SweepID),
		Summary: fmt.Sprintf("%d of %d load steps ok in %s", sum.OK, sum.Steps, sum.Elapsed.Round(time.Second))}
	if sum.Failed > 0 {
		res.Outcome = store.OutcomeIncomplete
		res.Summary += fmt.Sprintf(", %d failed", sum.Failed)
	}
	return res, err
}

type readinessStep struct{ c *chain }

func (readinessStep) Name() string { return plan.StepReadiness }

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// Run makes a readiness page per candidate from what the store holds,
// with this rehearsal's sweep, and writes it as HTML to the page
// directory.
func (s readinessStep) Run(ctx context.Context) (Result, error) {
	c := s.c
	c.pages = nil
	var out Result
	var refs, sums []string
	for _, cand := range c.p.Candidates {
		pg, err := readiness.Build(ctx, c.opts.Store, readiness.Options{Source: c.p.Source.Target, Target: cand.Target,
			SweepID: c.sweepID, StoreFlag: c.opts.StoreFlag, Now: c.opts.Now().UTC()})
		if err != nil {
			return out, fmt.Errorf("readiness page for %s: %w", cand.Name, err)
		}
		name := unsafeName.ReplaceAllString(c.p.Name+"-"+cand.Name, "_") + ".readiness.html"
		path := filepath.Join(c.opts.PageDir, name)
		if err := writePage(path, pg); err != nil {
			return out, err
		}
		page := Page{Candidate: cand.Name, Path: path, Verdict: pg.Verdict, Reasons: []string{}}
		for _, r := range pg.Reasons {
			page.Reasons = append(page.Reasons, r.Weight+": "+r.Text)
		}
		c.pages = append(c.pages, page)
		outcome := store.OutcomePass
		switch pg.Verdict {
		case readiness.NotReady:
			outcome = store.OutcomeFail
		case readiness.ReadyWithWarnings:
			outcome = store.OutcomeWarn
		}
		out.Outcome = worse(out.Outcome, outcome)
		refs = append(refs, path)
		sums = append(sums, fmt.Sprintf("%s: %s, %d reason(s)", cand.Name, pg.Verdict, len(pg.Reasons)))
	}
	out.Ref, out.Summary = strings.Join(refs, ", "), strings.Join(sums, "; ")
	return out, nil
}

func writePage(path string, pg *readiness.Page) error {
	if err := outfile.Create(path, func(w io.Writer) error { return readiness.WriteHTML(w, pg) }); err != nil {
		return fmt.Errorf("write readiness page: %w", err)
	}
	return nil
}
