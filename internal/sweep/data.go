package sweep

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/engine"
	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/runner"
	"github.com/shakedown/shakedown/internal/segment"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/vars"
	"github.com/shakedown/shakedown/internal/workload"
)

// dataSet is the data prepared on one target.
type dataSet struct {
	key      string
	workload *plan.Workload
}

type sweeper struct {
	p          *plan.Plan
	pr         *progress
	verbose    bool
	version    string // shakedown's, for the steps' results
	onInterval func(plan.Step, runner.Interval)
	data       map[string]*dataSet // by data home
	prepErr    map[string]error    // by data home + data key
	// homes maps each target to where its data lives: targets that are
	// one server and database (an A/A pair) share a home, and so one
	// prepare.
	homes map[string]string
	// told are the cells already named as too costly to settle.
	told map[string]bool
	// split, when set, makes each step this runner's share of the load,
	// starting at loadAt, its intervals kept in intervals.
	split     *segment.Split
	loadAt    time.Time
	intervals []result.IntervalHDR
	// unsaved holds the steps of a split runner that the store did not
	// take, once it was lost, in the file unsavedPath.
	unsaved     *store.Unsaved
	unsavedPath string
}

// homes maps each target of p to its data home: its server (vars.ServerID)
// and database, or its own name when the server cannot be told.
func homes(p *plan.Plan, envs []Env) map[string]string {
	out := map[string]string{}
	for _, t := range p.Targets {
		out[t.Name] = "target " + t.Name
	}
	for _, e := range envs {
		if id := vars.ServerID(e.Variables); id != "" && e.Target.Target != nil {
			out[e.Target.Name] = id + "/" + e.Target.Target.DB
		}
	}
	return out
}

// dataKey says which workloads share data: the same implementation with
// the same set of options, set to the same values.
func (s *sweeper) dataKey(w *plan.Workload) string {
	meta, _ := workload.Lookup(w.Name)
	gen := meta.New()
	var names []string
	if f, ok := gen.(workload.Flagser); ok && f.Flags() != nil {
		f.Flags().VisitAll(func(fl *pflag.Flag) { names = append(names, fl.Name) })
	}
	sort.Strings(names)
	return fmt.Sprintf("%T|%s|%s", gen, strings.Join(names, ","), strings.Join(s.p.PrepareArgs(w)[1:], " "))
}

// job parses a step's command line and points it at the plan's target,
// password and all, without the password ever being in a string.
func job(verb string, args []string, t *plan.Target) (*engine.Job, error) {
	j, err := engine.Parse(verb, args, io.Discard)
	if err != nil {
		return nil, err
	}
	tg := *t.Target
	tg.Name = t.Name
	j.Target = &tg
	return j, nil
}

func (s *sweeper) out() io.Writer {
	if s.verbose {
		return &lineWriter{pr: s.pr}
	}
	return io.Discard
}

// ensureData prepares the data step needs on its target, once.
func (s *sweeper) ensureData(ctx context.Context, step plan.Step) error {
	t, w := step.Target, step.Workload
	key := s.dataKey(w)
	home := s.homes[t.Name]
	if err, ok := s.prepErr[home+"\x00"+key]; ok {
		return err
	}
	if cur := s.data[home]; cur != nil && cur.key == key {
		return nil
	}
	err := s.prepare(ctx, step, key)
	if err != nil && ctx.Err() == nil {
		s.prepErr[home+"\x00"+key] = err
	}
	return err
}

func (s *sweeper) prepare(ctx context.Context, step plan.Step, key string) error {
	t, w := step.Target, step.Workload
	home := s.homes[t.Name]
	s.pr.startStep(step, "preparing data")
	// Drop what an earlier workload left, then anything in the way of this
	// one (cleanup drops only if the tables exist).
	if cur := s.data[home]; cur != nil {
		delete(s.data, home)
		if err := s.cleanup(ctx, t, cur.workload); err != nil {
			return err
		}
	}
	if err := s.cleanup(ctx, t, w); err != nil {
		return err
	}
	j, err := job("prepare", s.p.PrepareArgs(w), t)
	if err != nil {
		return fmt.Errorf("prepare %s: %w", w.Label(), err)
	}
	if err := j.Prepare(ctx, engine.PrepareOptions{Out: s.out(), Version: s.version}); err != nil {
		return fmt.Errorf("prepare %s on %s: %w", w.Label(), t.Name, err)
	}
	s.data[home] = &dataSet{key: key, workload: w}
	var shared []string
	for _, o := range s.p.Targets {
		if o.Name != t.Name && s.homes[o.Name] == home {
			shared = append(shared, o.Name)
		}
	}
	if len(shared) > 0 {
		s.pr.Printf("prepared %s data on %s, shared with %s (the same server and database)", w.Label(), t.Name, strings.Join(shared, ", "))
		return nil
	}
	s.pr.Printf("prepared %s data on %s", w.Label(), t.Name)
	return nil
}

func (s *sweeper) cleanup(ctx context.Context, t *plan.Target, w *plan.Workload) error {
	j, err := job("cleanup", s.p.PrepareArgs(w), t)
	if err != nil {
		return fmt.Errorf("cleanup %s: %w", w.Label(), err)
	}
	if _, ok := j.Gen.(workload.Cleaner); !ok {
		return nil
	}
	if err := j.Prepare(ctx, engine.PrepareOptions{Out: s.out(), Version: s.version}); err != nil {
		return fmt.Errorf("cleanup %s on %s: %w", w.Label(), t.Name, err)
	}
	return nil
}

// cleanupAll drops the data of every target at the end of the sweep.
func (s *sweeper) cleanupAll(ctx context.Context) {
	for _, t := range s.p.Targets {
		home := s.homes[t.Name]
		cur := s.data[home]
		if cur == nil {
			continue
		}
		if err := s.cleanup(ctx, t, cur.workload); err != nil {
			s.pr.Printf("cleanup: %v", err)
			continue
		}
		delete(s.data, home)
		s.pr.Printf("cleaned up %s data on %s", cur.workload.Label(), t.Name)
	}
}
