// Package rehearse runs a rehearsal plan (plan.Rehearsal) unattended: the
// steps a DBA chains by hand before a migration (check, copy, verify,
// analyze, vars diff, replay, sweep, capacity) in that order, ending on a
// readiness page per candidate. A plan with follow: keeps each
// candidate's copy current from the source's binary log while the steps
// after the copy run (a follower in the background), and with cutover:
// rehearses the switch with it at work.
//
// Each step is a small Step: a name and Run, which does the work through
// the package that owns it (never through the command line) and hands
// back where its result is stored and what it found. The chain writes a
// row per step to the store as the step finishes, so that a rehearsal that
// is killed resumes after its last finished step. A step that fails stops
// the chain with its reason, unless the plan lets it go on; the readiness
// page is made in either case, from what the store then holds.
//
// The options of the steps that take the plan's settings (copy,
// capacity) are checked before anything runs: a bad one is a usage error
// naming its line. So are the servers' prerequisites of a follow step,
// before the copy.
//
// The followers are stopped, and their work stored, before the page is
// made; when the chain ends early (a failed step, a Ctrl-C) too: Run
// returns once each has saved its position.
package rehearse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/shakedown/shakedown/internal/capacity"
	"github.com/shakedown/shakedown/internal/dbcopy"
	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/readiness"
	"github.com/shakedown/shakedown/internal/store"
)

// Step is one step of a rehearsal.
type Step interface {
	// Name is the step's name in plans, the store and messages
	// (plan.StepCheck...).
	Name() string
	// Run does the step. An error means it could not do its work (a
	// server refused, ctx ended); what it found, good or bad, is the
	// Result.
	Run(ctx context.Context) (Result, error)
}

// Result is what a step found and where it is stored.
type Result struct {
	// Outcome is a store outcome (store.OutcomePass...); a step that
	// judges nothing leaves it empty.
	Outcome string
	// Ref says where the result is: "evidence 12", "sweep 3", a file.
	Ref     string
	Summary string
	// Skipped: the plan gives the step nothing to do.
	Skipped bool
}

// noSection is the result of a step whose section the plan leaves out.
func noSection(section string) (Result, error) {
	return Result{Skipped: true, Summary: "skipped: the plan has no " + section + ": section"}, nil
}

// Options are the rehearsal's surroundings.
type Options struct {
	// Store receives the rehearsal, its steps and their evidence. Required.
	Store *store.Store
	// StoreFlag is how commands the pages suggest name the store.
	StoreFlag string
	// Out receives a line per finished step.
	Out io.Writer
	// Progress receives the chain's progress line; Live means it is a
	// terminal, where the line is redrawn in place.
	Progress io.Writer
	Live     bool
	// PageDir is where the readiness pages are written.
	PageDir string
	// Version is shakedown's, recorded with results.
	Version string
	// Host is the client's host name, recorded with the sweep.
	Host string
	// Resume is a stored rehearsal to continue; 0 starts one.
	Resume int64
	// AfterStep, when set, is called once a step's row is stored.
	AfterStep func(store.RehearsalStep)
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// For tests: called after each range the copy step copies.
	copyProgress func(dbcopy.Progress)
}

// Summary says how a rehearsal went.
type Summary struct {
	ID      int64                 `json:"rehearsal"`
	Name    string                `json:"name"`
	Status  string                `json:"status"`
	Verdict string                `json:"verdict"` // the worst of the pages'
	Steps   []store.RehearsalStep `json:"steps"`
	Pages   []Page                `json:"pages"`
	// StoppedBy is the step that stopped the chain, if one did.
	StoppedBy string `json:"stopped_by,omitempty"`
	// Elapsed is this run's time: after a resume, the time since it.
	Elapsed time.Duration `json:"-"`
	Seconds float64       `json:"seconds"`
}

// Page is one candidate's readiness page.
type Page struct {
	Candidate string   `json:"candidate"`
	Path      string   `json:"path"`
	Verdict   string   `json:"verdict"`
	Reasons   []string `json:"reasons"`
}

// ErrInterrupted means ctx ended before the chain did; the finished steps
// are stored and the rehearsal can be resumed.
var ErrInterrupted = errors.New("rehearsal interrupted")

// ErrStepFailed means a step could not do its work and stopped the chain.
var ErrStepFailed = errors.New("step failed")

// Run carries out the rehearsal p. It returns the summary also with an
// error: ErrInterrupted when ctx ended, ErrStepFailed when a step could
// not do its work and stopped the chain, a usage error (exit 2) when a
// step's settings in the plan are wrong. A step that found something
// against the move is no error: the verdict says it.
func Run(ctx context.Context, p *plan.Rehearsal, opts Options) (*Summary, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &chain{p: p, opts: opts}
	steps := c.steps()
	for _, s := range steps {
		c.stepNames = append(c.stepNames, s.Name())
	}
	if err := preflight(p); err != nil {
		return nil, err
	}
	var err error
	if c.copyOpts, err = copyOptions(p); err != nil {
		return nil, err
	}
	if c.capCfg, c.capTargets, err = capacityPlan(p, opts.Version); err != nil {
		return nil, err
	}
	if err := c.preflightFollow(ctx); err != nil {
		return nil, err
	}
	done, err := c.begin(ctx)
	if err != nil {
		return nil, err
	}
	c.printf("%s", openingLine(p))
	sum := &Summary{ID: c.id, Name: p.Name, Pages: []Page{}, Steps: []store.RehearsalStep{}}
	started := opts.Now()
	line := newLine(opts, steps, p, started)
	c.line = line
	defer line.clear()
	var runErr error
	for i, s := range steps[:len(steps)-1] {
		if ctx.Err() != nil {
			runErr = ErrInterrupted
			break
		}
		if r, ok := done[s.Name()]; ok {
			sum.Steps = append(sum.Steps, r)
			line.done(i, 0)
			line.clear()
			c.printf("%-10s %-11s %s (finished before the resume)", s.Name(), status(r), describe(r))
			continue
		}
		row, err := c.runStep(ctx, i, s, line)
		sum.Steps = append(sum.Steps, row)
		if err != nil {
			runErr = err
			break
		}
		if row.Status == store.StepFailed {
			sum.StoppedBy = s.Name()
			if row.Outcome == "" {
				runErr = fmt.Errorf("%w: %s: %s", ErrStepFailed, s.Name(), row.Error)
			}
			break
		}
	}
	// The followers still at work stop here: the chain is over, and the
	// page weighs what they did.
	if err := c.stopFollowers(ctx, line); err != nil && runErr == nil {
		runErr = err
	}
	if !errors.Is(runErr, ErrInterrupted) && ctx.Err() == nil {
		// The page is made whether or not the chain went to its end: it
		// says from the store what is proven and what is not.
		row, err := c.runStep(ctx, len(steps)-1, steps[len(steps)-1], line)
		sum.Steps = append(sum.Steps, row)
		if err != nil && runErr == nil {
			runErr = err
		}
		sum.Pages = c.pages
	}
	if ctx.Err() != nil && runErr == nil {
		runErr = ErrInterrupted
	}
	sum.Elapsed = opts.Now().Sub(started)
	sum.Seconds = sum.Elapsed.Seconds()
	return sum, c.finish(ctx, sum, runErr)
}

// begin records a new rehearsal, or reads the one to resume: its finished
// steps by name, and the sweep it ran or began.
func (c *chain) begin(ctx context.Context) (map[string]store.RehearsalStep, error) {
	st, p := c.opts.Store, c.p
	done := map[string]store.RehearsalStep{}
	if c.opts.Resume == 0 {
		// The stored path is absolute, so that a resume from another
		// directory finds the plan's capture where the plan said.
		path, err := filepath.Abs(p.Path)
		if err != nil {
			return nil, fmt.Errorf("record rehearsal: %w", err)
		}
		r := &store.Rehearsal{Name: p.Name, PlanPath: path, Plan: string(p.Text), Tool: c.opts.Version, StartedAt: c.opts.Now()}
		if _, err := st.AddRehearsal(ctx, r); err != nil {
			return nil, err
		}
		c.id = r.ID
		return done, nil
	}
	rows, err := st.RehearsalSteps(ctx, c.opts.Resume)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if r.Name == plan.StepSweep && r.Status == store.StepInterrupted {
			fmt.Sscanf(r.Ref, "sweep %d", &c.resumeSweep)
		}
		switch r.Status {
		case store.StepDone, store.StepSkipped:
			done[r.Name] = r
		default:
			delete(done, r.Name)
		}
	}
	if r, ok := done[plan.StepSweep]; ok {
		fmt.Sscanf(r.Ref, "sweep %d", &c.sweepID)
	}
	// A follower is not a step that stays done: it stopped with the
	// rehearsal, and the resume starts it again (from the position it
	// saved) unless the cutover it was for is done.
	for _, r := range rows {
		c.followedBefore = c.followedBefore || r.Name == plan.StepFollow
	}
	if _, cut := done[plan.StepCutover]; !cut && following(c.p) {
		delete(done, plan.StepFollow)
	}
	c.id = c.opts.Resume
	if err := st.SetRehearsalStatus(ctx, c.id, store.RehearsalRunning, ""); err != nil {
		return nil, err
	}
	return done, nil
}

// finish records how the rehearsal ended and returns runErr, or the
// store's error.
func (c *chain) finish(ctx context.Context, sum *Summary, runErr error) error {
	sum.Verdict = worst(sum.Pages)
	sum.Status = store.RehearsalDone
	switch {
	case errors.Is(runErr, ErrInterrupted):
		sum.Status = store.RehearsalInterrupted
	case sum.StoppedBy != "" || runErr != nil:
		sum.Status = store.RehearsalStopped
	}
	if err := c.opts.Store.SetRehearsalStatus(context.WithoutCancel(ctx), sum.ID, sum.Status, sum.Verdict); err != nil && runErr == nil {
		return err
	}
	return runErr
}

// runStep runs one step and stores its row. The error is ErrInterrupted
// when ctx ended during the step, or the store's; a step that failed is
// a row with status failed.
func (c *chain) runStep(ctx context.Context, i int, s Step, line *chainLine) (store.RehearsalStep, error) {
	row := store.RehearsalStep{RehearsalID: c.id, Position: i, Name: s.Name(), StartedAt: c.opts.Now()}
	var res Result
	var err error
	if c.p.Steps[s.Name()].Skip {
		res = Result{Skipped: true, Summary: "skipped: the plan says skip: true"}
	} else {
		stop := line.running(i)
		if _, ok := s.(loader); ok {
			c.loading.Store(true)
		}
		res, err = s.Run(ctx)
		c.loading.Store(false)
		stop()
	}
	row.WallS = c.opts.Now().Sub(row.StartedAt).Seconds()
	row.Outcome, row.Ref, row.Summary = res.Outcome, res.Ref, res.Summary
	// The page comes last: what it finds is the verdict, not a failure.
	goOn := c.p.Steps[s.Name()].ContinueOnFailure || i == len(c.stepNames)-1
	switch {
	case err != nil && ctx.Err() != nil:
		row.Status, row.Error = store.StepInterrupted, err.Error()
	case err != nil:
		row.Status, row.Error = store.StepFailed, err.Error()
		if goOn {
			row.Status = store.StepDone
		}
	case res.Skipped:
		row.Status = store.StepSkipped
	case res.Outcome == store.OutcomeFail && !goOn:
		row.Status = store.StepFailed
	default:
		row.Status = store.StepDone
	}
	if _, serr := c.opts.Store.AddRehearsalStep(context.WithoutCancel(ctx), &row); serr != nil {
		return row, serr
	}
	line.done(i, row.WallS)
	// The step's line goes above the live line, which the next redraw
	// puts back.
	line.clear()
	note := ""
	if row.Status == store.StepDone && (err != nil || res.Outcome == store.OutcomeFail) && c.p.Steps[s.Name()].ContinueOnFailure {
		note = " (continue_on_failure: going on)"
	}
	c.printf("%-10s %-11s %s%s", s.Name(), status(row), describe(row), note)
	if c.opts.AfterStep != nil {
		c.opts.AfterStep(row)
	}
	if row.Status == store.StepInterrupted {
		return row, ErrInterrupted
	}
	return row, nil
}

// status is a row's status in a word, with the outcome when it has one.
func status(r store.RehearsalStep) string {
	if r.Status == store.StepInterrupted {
		return r.Status
	}
	if r.Error != "" {
		return store.StepFailed
	}
	if r.Outcome != "" && r.Status != store.StepSkipped {
		return r.Outcome
	}
	return r.Status
}

func describe(r store.RehearsalStep) string {
	s := r.Summary
	if r.Error != "" {
		if s != "" {
			s += ": "
		}
		s += r.Error
	}
	if r.Ref != "" {
		s += " [" + r.Ref + "]"
	}
	return s
}

// worst is the worst verdict of the pages: not ready over ready with
// warnings over ready; "" without pages.
func worst(pages []Page) string {
	rank := map[string]int{readiness.Ready: 1, readiness.ReadyWithWarnings: 2, readiness.NotReady: 3}
	v := ""
	for _, p := range pages {
		if rank[p.Verdict] > rank[v] {
			v = p.Verdict
		}
	}
	return v
}

// chain is what the steps of one rehearsal share. It holds no context:
// each step's Run is given one.
type chain struct {
	p    *plan.Rehearsal
	opts Options
	id   int64
	// sweepID is the sweep this rehearsal ran, for the pages;
	// resumeSweep one it began before it was killed, to continue.
	sweepID, resumeSweep int64
	pages                []Page
	stepNames            []string
	// copyOpts are the plan's data: copy options, read before the chain
	// starts.
	copyOpts dbcopy.Options
	// capCfg and capTargets are the capacity step's, nil without one.
	capCfg     *capacity.Config
	capTargets []capacity.Target
	// followers are the follow step's, at work until stopped;
	// followedBefore says the resumed rehearsal had started them.
	// loading is set while a load step runs, and read by the followers'
	// progress callbacks.
	followers      []*follower
	followedBefore bool
	loading        atomic.Bool
	// line is the progress line, nil until the chain starts; the sweep
	// step counts the steps repeats: auto adds into it.
	line *chainLine
}

func (c *chain) printf(format string, args ...any) {
	if c.opts.Out != nil {
		fmt.Fprintf(c.opts.Out, format+"\n", args...)
	}
}
