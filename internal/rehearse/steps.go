package rehearse

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/shakedown/shakedown/internal/readiness"
	"github.com/shakedown/shakedown/internal/schema"
	"io"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/check"
	"github.com/shakedown/shakedown/internal/dbcopy"
	"github.com/shakedown/shakedown/internal/follow"
	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/vars"
	"github.com/shakedown/shakedown/internal/verify"
)

// steps is the chain, in the order it runs; the readiness page is last.
func (c *chain) steps() []Step {
	return []Step{
		checkStep{c},
		copyStep{c},
		followStep{c},
		verifyStep{c},
		analyzeStep{c},
		varsStep{c},
		replayStep{c},
		sweepStep{c},
		capacityStep{c},
		cutoverStep{c},
		readinessStep{c},
	}
}

// connect opens a side the way check and verify do (its errors name the
// role and the server); the caller closes its DB.
func connect(ctx context.Context, role string, t *target.Target, size int) (*schema.Side, error) {
	return verify.Connect(ctx, role, t, size)
}

// databases are the plan's databases, else the source URL's, else every
// user database of the source (nil: the command's own rule).
func (c *chain) databases(ctx context.Context, src *schema.Side) ([]string, error) {
	if len(c.p.Databases) == 0 && !src.Target.NamesDB() {
		return nil, nil
	}
	return src.Target.Databases(ctx, src.DB, c.p.Databases, target.EveryDatabase, c.p.Path+": databases")
}

// evidence stores a command's result as evidence for the pair, weighed
// and written as the command's --store does (package readiness).
func (c *chain) evidence(ctx context.Context, e *store.Evidence, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return c.opts.Store.AddEvidence(context.WithoutCancel(ctx), e)
}

// perCandidate runs fn for each candidate and gathers what it found into
// one result: the worst outcome, every reference, one summary per
// candidate.
func (c *chain) perCandidate(ctx context.Context, fn func(ctx context.Context, cand *plan.Target) (Result, error)) (Result, error) {
	var out Result
	var refs, sums []string
	for _, cand := range c.p.Candidates {
		r, err := fn(ctx, cand)
		if r.Ref != "" {
			refs = append(refs, r.Ref)
		}
		if r.Summary != "" {
			s := r.Summary
			if len(c.p.Candidates) > 1 {
				s = cand.Name + ": " + s
			}
			sums = append(sums, s)
		}
		out.Outcome = worse(out.Outcome, r.Outcome)
		out.Ref, out.Summary = strings.Join(refs, ", "), strings.Join(sums, "; ")
		if err != nil {
			return out, fmt.Errorf("%s: %w", cand.Name, err)
		}
	}
	return out, nil
}

// perCandidateSide is perCandidate with each candidate connected (a pool
// of size), closed once fn returns.
func (c *chain) perCandidateSide(ctx context.Context, size int, fn func(ctx context.Context, cand *plan.Target, dst *schema.Side) (Result, error)) (Result, error) {
	return c.perCandidate(ctx, func(ctx context.Context, cand *plan.Target) (Result, error) {
		dst, err := connect(ctx, "target", cand.Target, size)
		if err != nil {
			return Result{}, err
		}
		defer dst.DB.Close()
		return fn(ctx, cand, dst)
	})
}

// worse is the worse of two outcomes.
func worse(a, b string) string {
	rank := map[string]int{store.OutcomePass: 1, store.OutcomeWarn: 2, store.OutcomeIncomplete: 3, store.OutcomeFail: 4}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

type checkStep struct{ c *chain }

func (checkStep) Name() string { return plan.StepCheck }

func (s checkStep) Run(ctx context.Context) (Result, error) {
	c := s.c
	src, err := connect(ctx, "source", c.p.Source.Target, 2)
	if err != nil {
		return Result{}, err
	}
	defer src.DB.Close()
	dbs, err := c.databases(ctx, src)
	if err != nil {
		return Result{}, err
	}
	return c.perCandidateSide(ctx, 2, func(ctx context.Context, cand *plan.Target, dst *schema.Side) (Result, error) {
		rep, err := check.Run(ctx, src, dst, check.Options{Databases: dbs, CopyTime: 24 * time.Hour,
			SkipAccounts: check.DefaultSkipAccounts, MaxScanRows: 1000000, QueryTimeout: 30 * time.Second})
		if err != nil {
			return Result{}, err
		}
		c.copyResolves(rep)
		e, err := readiness.CheckEvidence(rep, c.opts.Version)
		id, err := c.evidence(ctx, e, err)
		if err != nil {
			return Result{}, err
		}
		return Result{Outcome: e.Outcome, Summary: e.Summary, Ref: fmt.Sprintf("evidence %d", id)}, nil
	})
}

type verifyStep struct{ c *chain }

func (verifyStep) Name() string { return plan.StepVerify }

func (s verifyStep) Run(ctx context.Context) (Result, error) {
	c := s.c
	const threads = 2
	src, err := connect(ctx, "source", c.p.Source.Target, threads+2)
	if err != nil {
		return Result{}, err
	}
	defer src.DB.Close()
	// As verify does: without databases: each side's URL names its own,
	// so that a copy under another name is compared.
	var dbs []string
	if len(c.p.Databases) > 0 || !src.Target.NamesDB() {
		if dbs, err = src.Target.Databases(ctx, src.DB, c.p.Databases, target.EveryDatabase, c.p.Path+": databases"); err != nil {
			return Result{}, err
		}
	}
	return c.perCandidateSide(ctx, threads+2, func(ctx context.Context, cand *plan.Target, dst *schema.Side) (Result, error) {
		// A subset copy is compared on the rows it chose only.
		sub, err := c.copied(ctx, cand)
		if err != nil {
			return Result{}, err
		}
		var rep *verify.Report
		var runErr error
		opts := verify.Options{Databases: dbs, Threads: threads, Recheck: 3, Progress: io.Discard, ProgressInterval: 1000 * time.Hour}
		// Beside the rehearsal's follower at work, a chunk that differs
		// is compared again once it has passed the source's position.
		if f := c.followerOf(cand); f != nil {
			if w := follow.NewWatcher(src.DB, dst.DB, f.targets()); w.Alive(ctx) {
				opts.Rechecks, opts.Settle, opts.Align = followRechecks, w.Settle, w.Align
			}
		}
		if sub != nil {
			rep, runErr = dbcopy.VerifyCopied(ctx, c.p.Source.Target, cand.Target, sub, threads)
			if rep == nil && runErr == nil {
				runErr = errors.New("verify: the stored copy lists no table to compare")
			}
		} else {
			rep, runErr = verify.Run(ctx, src, dst, opts)
		}
		if rep == nil {
			return Result{}, runErr
		}
		e, err := readiness.VerifyEvidence(rep, runErr, c.opts.Version)
		if opts.Settle != nil {
			e, err = readiness.VerifyWhileFollowingEvidence(rep, runErr, opts.Rechecks, c.opts.Version)
		}
		id, err := c.evidence(ctx, e, err)
		if err != nil {
			return Result{}, err
		}
		outcome, summary := e.Outcome, e.Summary
		return Result{Outcome: outcome, Summary: summary, Ref: fmt.Sprintf("evidence %d", id)}, runErr
	})
}

type analyzeStep struct{ c *chain }

func (analyzeStep) Name() string { return plan.StepAnalyze }

// Run refreshes the candidates' index statistics, as a migration's last
// step does, so that the replay and the sweep measure the plans the
// candidate will really choose. It writes statistics only.
func (s analyzeStep) Run(ctx context.Context) (Result, error) {
	c := s.c
	return c.perCandidateSide(ctx, 1, func(ctx context.Context, cand *plan.Target, dst *schema.Side) (Result, error) {
		dbs, err := cand.Target.Databases(ctx, dst.DB, c.p.Databases, target.EveryDatabase, c.p.Path+": databases")
		if err != nil {
			return Result{}, err
		}
		n, err := verify.Analyze(ctx, dst, verify.AnalyzeOptions{Databases: dbs, Out: io.Discard})
		if err != nil {
			return Result{}, err
		}
		if n == 0 {
			return Result{}, errors.New("analyze: no table to analyze in " + strings.Join(dbs, ", "))
		}
		return Result{Summary: fmt.Sprintf("analyzed %d tables in %s", n, strings.Join(dbs, ", "))}, nil
	})
}

type varsStep struct{ c *chain }

func (varsStep) Name() string { return plan.StepVars }

// Run compares the global variables of the source and each candidate and
// stores the comparison as evidence of kind vars. A candidate less durable
// than the source warns (readiness.JudgeVariables).
func (s varsStep) Run(ctx context.Context) (Result, error) {
	c := s.c
	collect := func(ctx context.Context, role string, t *target.Target) (map[string]string, error) {
		side, err := connect(ctx, role, t, 1)
		if err != nil {
			return nil, err
		}
		defer side.DB.Close()
		return vars.Collect(ctx, side.DB)
	}
	srcVars, err := collect(ctx, "source", c.p.Source.Target)
	if err != nil {
		return Result{}, err
	}
	return c.perCandidate(ctx, func(ctx context.Context, cand *plan.Target) (Result, error) {
		v, err := collect(ctx, "target", cand.Target)
		if err != nil {
			return Result{}, err
		}
		diffs := vars.Compare([]map[string]string{srcVars, v}, false)
		// Weighed as the readiness page weighs the check's diff of the
		// same servers, so that this line and the page agree.
		outcome, summary, _ := readiness.JudgeVariables(diffs)
		names := []string{c.p.Source.Target.String(), cand.Target.String()}
		var doc bytes.Buffer
		err = vars.WriteJSON(&doc, names, diffs)
		id, err := c.evidence(ctx, &store.Evidence{Kind: store.KindVars, Source: c.p.Source.Target.Redacted(),
			Target: cand.Target.Redacted(), Outcome: outcome, Summary: summary, Tool: c.opts.Version, Document: doc.Bytes()}, err)
		if err != nil {
			return Result{}, err
		}
		return Result{Outcome: outcome, Summary: summary, Ref: fmt.Sprintf("evidence %d", id)}, nil
	})
}
