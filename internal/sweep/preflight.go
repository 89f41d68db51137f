package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/segment"
	"github.com/shakedown/shakedown/internal/store"
)

// Preflight says on out what the plan will run, connects to every target
// and checks the data (CheckData), before anything runs: every sweep,
// whoever starts it, begins here. The data is checked once: in a split
// sweep by the first runner only (the others find the data it made, not
// data in the way), and not when resuming a sweep that made it.
func Preflight(ctx context.Context, out io.Writer, p *plan.Plan, sp segment.Split, resuming bool) ([]Env, error) {
	fmt.Fprintln(out, PlanLine(p, sp))
	envs, err := Check(ctx, p)
	if err != nil {
		return nil, err
	}
	for _, e := range envs {
		fmt.Fprintf(out, "  %-10s %-9s %s %s at %s\n", e.Target.Name, e.Target.Role, e.Server.Flavour, e.Server.Version, e.Target.Target.Redacted())
	}
	for _, line := range SameServers(envs) {
		fmt.Fprintf(out, "  %s\n", line)
	}
	if !resuming && (!sp.On || sp.First()) {
		if err := CheckData(ctx, p, envs); err != nil {
			return nil, err
		}
	}
	return envs, nil
}

// Resumed is a stored sweep that sweep --resume continues, ready to run:
// its plan, read back, and its targets, reached.
type Resumed struct {
	ID   int64
	Plan *plan.Plan
	Envs []Env
}

// Resume finds the sweep resume names in st (an ID, or latest), reads its
// stored plan and waits for its targets (DefaultDownWait), saying on out
// what it resumes and on progress what it waits for. where names the
// store in messages.
func Resume(ctx context.Context, out, progress io.Writer, st *store.Store, resume, where string, getenv func(string) string) (*Resumed, error) {
	sw, failed, err := FindResume(ctx, st, resume, where)
	if err != nil {
		return nil, err
	}
	id := sw.ID
	if failed > 0 {
		fmt.Fprintf(out, "sweep %d ended with %d failed steps: running them again\n", id, failed)
	}
	p, err := ParsePlan(sw.PlanPath, []byte(sw.Plan), getenv)
	if err != nil {
		return nil, fmt.Errorf("sweep --resume: the plan stored with sweep %d: %w", id, err)
	}
	fmt.Fprintf(out, "resuming sweep %d %q of plan %s in %s\n", id, sw.Name, sw.PlanPath, where)
	envs, err := CheckWait(ctx, p, DefaultDownWait, progress)
	if err != nil {
		return nil, err
	}
	return &Resumed{ID: id, Plan: p, Envs: envs}, nil
}

// Finish says on out how the sweep ended and where its report is, and
// returns how the command ends: runErr, or what to do about an
// interrupted sweep or failed steps. storePath is the store the sweep is
// stored in.
func (sum *Summary) Finish(out io.Writer, storePath string, runErr error) error {
	fmt.Fprintf(out, "\nsweep %d: %d of %d steps ok in %s; stored in %s\n", sum.SweepID, sum.OK, sum.Steps,
		sum.Elapsed.Round(time.Second), storePath)
	fmt.Fprintf(out, "full report: shakedown report --store %s --sweep %d --format html -o report.html\n", Quote(storePath), sum.SweepID)
	switch {
	case errors.Is(runErr, ErrInterrupted):
		return fmt.Errorf("interrupted: %d of %d steps finished and are stored as sweep %d; continue it with %s",
			sum.OK+sum.Failed, sum.Steps, sum.SweepID, ResumeCommand(sum.SweepID, storePath))
	case runErr != nil:
		return runErr
	case sum.Failed > 0:
		return fmt.Errorf("%d of %d steps failed (stored as failed in sweep %d; the report lists them); once the cause is fixed, run them again with %s",
			sum.Failed, sum.Steps, sum.SweepID, ResumeCommand(sum.SweepID, storePath))
	}
	return nil
}

// Search runs the plan's capacity search (nil for none) once every step
// is done: finished is what Finish returned, nil when they are. Where the
// plan says cleanup: true it drops the prepared data after the search
// (CleanUp). A search cut short leaves the data and stores the sweep as
// interrupted, so that sweep --resume runs the search again and no step.
func (sum *Summary) Search(ctx context.Context, st *store.Store, finished error, search func(context.Context, *store.Store) error) error {
	if finished != nil || search == nil {
		sum.CleanUp(ctx)
		return finished
	}
	err := search(ctx, st)
	if err == nil || ctx.Err() == nil {
		sum.CleanUp(ctx)
		return err
	}
	if ferr := st.FinishSweep(context.WithoutCancel(ctx), sum.SweepID, store.SweepInterrupted, time.Now()); ferr != nil {
		return errors.Join(err, ferr)
	}
	return fmt.Errorf("%w; the sweep's steps are stored as sweep %d, and %s runs the capacity search again",
		err, sum.SweepID, ResumeCommand(sum.SweepID, st.Path()))
}

// WriteSteps lists the plan's steps, one line each, as sweep --dry-run
// does, and the capacity search that follows them, if any.
func WriteSteps(w io.Writer, p *plan.Plan) error {
	for _, s := range p.Steps() {
		if _, err := fmt.Fprintf(w, "%4d  %-10s %s\n", s.Index, s.Target.Name, strings.Join(p.RunSpec(s.Workload, s.Threads).Args(), " ")); err != nil {
			return err
		}
	}
	if c := p.Capacity; c != nil {
		wl, threads := p.CapacityRun()
		_, err := fmt.Fprintf(w, "then  capacity of %s at %d threads on every target under %s\n", wl.Label(), threads, c.SLO)
		return err
	}
	return nil
}
