package rehearse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"time"

	"github.com/shakedown/shakedown/internal/dbcopy"
	"github.com/shakedown/shakedown/internal/follow"
	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/readiness"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/usage"
)

// The follow and cutover steps. The follow step starts, per candidate, a
// follower of the source's binary log from the position the rehearsal's
// copy recorded; it runs in the background while the later steps do (the
// verify step compares beside it, the sweep's load is applied by it) until
// the cutover step has rehearsed the switch with it at work, or the chain
// ends. Its work is stored as evidence when it stops.

// followRechecks is how many times the verify step compares a chunk that
// differs again, each time once the follower has passed the source's
// position (verify.Options.Rechecks).
const followRechecks = 3

// followStart bounds the wait for a follower to begin.
const followStart = time.Minute

// following says the plan's follow step runs.
func following(p *plan.Rehearsal) bool {
	return p.Follow != nil && !p.Steps[plan.StepFollow].Skip
}

// followBase is the follower's options from the plan, for candidate i;
// Databases and From are the copy's. With several candidates each
// follower registers with the source under a server_id of its own.
func (c *chain) followBase(i int) follow.Options {
	f := c.p.Follow
	o := follow.Options{Workers: f.Workers, BatchRows: f.BatchRows, ServerID: f.ServerID, AllowWrite: true}
	if len(c.p.Candidates) > 1 {
		if o.ServerID != 0 {
			o.ServerID += uint32(i)
		} else {
			h := fnv.New32a()
			fmt.Fprintf(h, "%s|%s|%s", c.p.Name, c.p.Candidates[i].Name, strings.Join(c.p.Databases, ","))
			o.ServerID = 1<<30 | h.Sum32()&(1<<30-1)
		}
	}
	return o
}

// preflightFollow checks, before anything runs, what following the
// source into each candidate needs (follow.Preflight): a source that
// writes no ROW binary log, an account without replication privileges or
// a table without a key is bad usage, found before the copy, not after.
func (c *chain) preflightFollow(ctx context.Context) error {
	if !following(c.p) {
		return nil
	}
	for i, cand := range c.p.Candidates {
		o := c.followBase(i)
		for _, d := range c.p.Databases {
			o.Databases = append(o.Databases, follow.Pair{Source: d, Target: d})
		}
		err := follow.Preflight(ctx, c.p.Source.Target, cand.Target, o)
		switch {
		case errors.Is(err, follow.ErrPrerequisites):
			return usage.Errorf("%s:%d: follow: %s: %v", c.p.Path, c.p.Follow.Line, cand.Name, err)
		case err != nil:
			return fmt.Errorf("follow: %s: %w", cand.Name, err)
		}
	}
	return nil
}

// follower is the rehearsal's follower of one candidate, running in a
// goroutine of its own from the follow step until stop ends it: the
// cutover step, the chain before its page, or a rehearsal that ends
// otherwise (a Ctrl-C too). Its samples are written by the follower's
// progress callback and read by stop, under mu.
type follower struct {
	cand   *plan.Target
	opts   follow.Options
	cancel context.CancelFunc
	done   chan struct{} // closed once follow.Run has returned
	sum    *follow.Summary
	err    error
	// stopped is the chain's alone: stop was called.
	stopped bool

	mu      sync.Mutex
	lags    []float64 // one a second
	loaded  []float64 // those taken while a load step ran
	started bool
}

// targets are the followed databases as the candidate names them, in the
// follower's order (what its saved row is named by).
func (f *follower) targets() []string {
	out := make([]string, len(f.opts.Databases))
	for i, p := range f.opts.Databases {
		out[i] = p.Target
	}
	return out
}

// ended says follow.Run has returned: the follower stopped on its own.
func (f *follower) ended() bool {
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}

// loader is a step that puts load on the servers while it runs: the
// follower's lag samples taken meanwhile are its lag under the load.
type loader interface{ loads() }

func (sweepStep) loads() {}

type followStep struct{ c *chain }

func (followStep) Name() string { return plan.StepFollow }

// Run starts a follower per candidate from the position its copy
// recorded (on a resume, from the position the follower saved, where it
// is past the copy's) and returns once each is at work.
func (s followStep) Run(ctx context.Context) (Result, error) {
	c := s.c
	if c.p.Follow == nil {
		return noSection("follow")
	}
	i := -1
	return c.perCandidate(ctx, func(ctx context.Context, cand *plan.Target) (Result, error) {
		i++
		res, err := c.copyResult(ctx, cand)
		if err != nil {
			return Result{}, err
		}
		if res == nil || res.BinlogFile == "" {
			return Result{}, errors.New("follow: this rehearsal's copy recorded no binary log position to follow from")
		}
		o := c.followBase(i)
		for _, p := range res.Databases {
			o.Databases = append(o.Databases, follow.Pair{Source: p.Source, Target: p.Target})
		}
		o.From = follow.Position{File: res.BinlogFile, Pos: uint32(res.BinlogPos), GTID: res.GTID}
		from, how := o.From, "the copy's position"
		if c.followedBefore {
			if saved, err := c.savedPosition(ctx, cand, o); err == nil && saved.Reached(o.From) {
				from, how = saved, "the position it saved before the resume"
				o.From = follow.Position{}
			}
		}
		f, err := c.startFollower(ctx, cand, o)
		if err != nil {
			return Result{}, err
		}
		return Result{Summary: fmt.Sprintf("following %s from %s (%s), while the later steps run",
			strings.Join(f.targets(), ", "), from, how)}, nil
	})
}

// copyResult is the copy this rehearsal made onto cand, nil without one.
func (c *chain) copyResult(ctx context.Context, cand *plan.Target) (*dbcopy.Result, error) {
	src, dst := c.p.Source.Target.Redacted(), cand.Target.Redacted()
	e, err := c.opts.Store.LatestEvidence(ctx, KindCopy, func(s, t string) bool { return s == src && t == dst })
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var res dbcopy.Result
	if err := json.Unmarshal(e.Document, &res); err != nil {
		return nil, fmt.Errorf("read stored copy %d: %w", e.ID, err)
	}
	return &res, nil
}

// savedPosition is where the follower of o's databases on cand saved it
// was.
func (c *chain) savedPosition(ctx context.Context, cand *plan.Target, o follow.Options) (follow.Position, error) {
	src, err := connect(ctx, "source", c.p.Source.Target, 1)
	if err != nil {
		return follow.Position{}, err
	}
	defer src.DB.Close()
	dst, err := connect(ctx, "target", cand.Target, 1)
	if err != nil {
		return follow.Position{}, err
	}
	defer dst.DB.Close()
	f := &follower{opts: o}
	s, err := follow.NewWatcher(src.DB, dst.DB, f.targets()).Saved(ctx)
	if err != nil {
		return follow.Position{}, err
	}
	return s.Position, nil
}

// startFollower runs a follower of cand with o and returns once it is at
// work (its first progress report), or why it could not begin.
func (c *chain) startFollower(ctx context.Context, cand *plan.Target, o follow.Options) (*follower, error) {
	// Its own context: the follower outlives the step, and stop ends it.
	fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f := &follower{cand: cand, opts: o, cancel: cancel, done: make(chan struct{})}
	began := make(chan struct{})
	o.OnProgress = func(st follow.Stats) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.lags = append(f.lags, st.Lag)
		if c.loading.Load() {
			f.loaded = append(f.loaded, st.Lag)
		}
		if !f.started {
			f.started = true
			close(began)
		}
	}
	go func() {
		defer close(f.done)
		f.sum, f.err = follow.Run(fctx, c.p.Source.Target, cand.Target, o)
	}()
	c.followers = append(c.followers, f)
	select {
	case <-began:
		return f, nil
	case <-f.done:
		_, _, err := c.stopFollower(ctx, f)
		return nil, fmt.Errorf("follow: %w", errors.Join(f.err, err))
	case <-ctx.Done():
		c.stopFollower(ctx, f)
		return nil, ctx.Err()
	case <-time.After(followStart):
		c.stopFollower(ctx, f)
		return nil, fmt.Errorf("follow: the follower did not begin within %s", followStart)
	}
}

// followerOf is the rehearsal's follower of cand, nil without one.
func (c *chain) followerOf(cand *plan.Target) *follower {
	for _, f := range c.followers {
		if f.cand == cand && !f.stopped {
			return f
		}
	}
	return nil
}

// stopFollower ends f (follow.Run saves its position as it returns) and
// stores its work as evidence of kind follow; it returns the evidence's
// ID (0 when the follower never began) and outcome. Stopping a stopped
// follower does nothing.
func (c *chain) stopFollower(ctx context.Context, f *follower) (int64, *store.Evidence, error) {
	if f.stopped {
		return 0, nil, nil
	}
	f.stopped = true
	f.cancel()
	<-f.done
	if f.sum == nil {
		return 0, nil, nil
	}
	f.mu.Lock()
	doc := &readiness.Following{Rows: f.sum.Rows, Transactions: f.sum.Txns, Seconds: f.sum.Seconds, Reconnects: f.sum.Reconnects,
		State: f.sum.State, From: f.sum.From, Position: f.sum.To,
		Lag: readiness.LagOf(f.lags), LagUnderLoad: readiness.LagOf(f.loaded)}
	f.mu.Unlock()
	if f.err != nil {
		doc.Error = f.err.Error()
	}
	e, err := readiness.FollowEvidence(c.p.Source.Target.Redacted(), f.cand.Target.Redacted(), doc, c.opts.Version)
	id, err := c.evidence(ctx, e, err)
	return id, e, err
}

// stopFollowers stops the followers still at work, before the page: the
// chain is over, and what they did is evidence the page weighs. A line
// says what each did.
func (c *chain) stopFollowers(ctx context.Context, line *chainLine) error {
	var errs []error
	for _, f := range c.followers {
		if f.stopped {
			continue
		}
		id, e, err := c.stopFollower(ctx, f)
		if err != nil {
			errs = append(errs, fmt.Errorf("follow: %s: %w", f.cand.Name, err))
			continue
		}
		if e == nil {
			continue
		}
		line.clear()
		name := plan.StepFollow
		if len(c.p.Candidates) > 1 {
			name += " " + f.cand.Name
		}
		c.printf("%-10s %-11s stopped: %s [evidence %d]", name, e.Outcome, e.Summary, id)
	}
	return errors.Join(errs...)
}

type cutoverStep struct{ c *chain }

func (cutoverStep) Name() string { return plan.StepCutover }

// Run rehearses the switch to each candidate with the rehearsal's
// follower at work (follow.Cutover, its source made writable again at the
// end), then stops that follower, and stores the cutover and the
// follower's work as evidence.
func (s cutoverStep) Run(ctx context.Context) (Result, error) {
	c := s.c
	co := c.p.Cutover
	if co == nil {
		return noSection("cutover")
	}
	return c.perCandidate(ctx, func(ctx context.Context, cand *plan.Target) (Result, error) {
		f := c.followerOf(cand)
		if f == nil {
			return Result{}, errors.New("cutover: no follower of this rehearsal is at work on the candidate (the follow step did not start one)")
		}
		if f.ended() {
			_, _, err := c.stopFollower(ctx, f)
			return Result{}, fmt.Errorf("cutover: the rehearsal's follower stopped before the switch: %w", errors.Join(f.err, err))
		}
		res, runErr := follow.Cutover(ctx, c.p.Source.Target, cand.Target, follow.CutoverOptions{
			Follow: f.opts, MaxLag: co.MaxLag, LagWait: co.LagWait, AllowSetGlobal: co.AllowSetGlobal,
			KillWriters: co.KillWriters, Verify: co.Verify, Rehearse: true,
		})
		fid, _, ferr := c.stopFollower(ctx, f)
		if res == nil {
			return Result{}, errors.Join(runErr, ferr)
		}
		e, err := readiness.CutoverEvidence(res, runErr, c.opts.Version)
		id, err := c.evidence(ctx, e, err)
		if err != nil {
			return Result{}, errors.Join(runErr, err, ferr)
		}
		out := Result{Outcome: e.Outcome, Summary: e.Summary, Ref: fmt.Sprintf("evidence %d", id)}
		if fid != 0 {
			out.Ref += fmt.Sprintf(" (the follower's: evidence %d)", fid)
		}
		return out, errors.Join(runErr, ferr)
	})
}
