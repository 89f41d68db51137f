package sweep

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/bench"
	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/runner"
	"github.com/shakedown/shakedown/internal/runspec"
	"github.com/shakedown/shakedown/internal/segment"
	"github.com/shakedown/shakedown/internal/splitload"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/vars"
	"github.com/shakedown/shakedown/internal/workload"
)

// dataSet is one workload's data prepared on one data home.
type dataSet struct {
	key      string
	workload *plan.Workload
	// tables are what its prepare made; known is false when the workload
	// cannot tell (a script of the user's).
	tables []string
	known  bool
}

type sweeper struct {
	p          *plan.Plan
	pr         *progress
	verbose    bool
	version    string // shakedown's, for the steps' results
	onInterval func(plan.Step, runner.Interval)
	// data are the data sets on each data home, in the order made.
	data    map[string][]*dataSet
	prepErr map[string]error // by data home + data key
	// homes maps each target to where its data lives: targets that are
	// one server and database (an A/A pair) share a home, and so one
	// prepare.
	homes map[string]string
	// told are the cells already named as too costly to settle.
	told map[string]bool
	// said are the messages given once.
	said map[string]bool
	// st and id, when set, receive the notes of what the sweep did to
	// the data (store.Note).
	st *store.Store
	id int64
	// split, when set, makes each step this runner's share of the load,
	// starting at loadAt, its intervals kept in intervals.
	split     *segment.Split
	loadAt    time.Time
	intervals []result.IntervalHDR
	// keep records a split runner's steps, in the store or, once it was
	// lost, in a file of the runner's own.
	keep *splitload.Keeper
	// down are the targets found not answering, with why; their steps are
	// skipped. downWait is how long a target is waited for.
	down     map[string]string
	downWait time.Duration
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

// dataOf is what w's prepare makes on t: ok is false when it makes
// nothing (no Preparer, or one that names no tables), so that there is
// nothing to prepare, drop or keep.
func (s *sweeper) dataOf(t *plan.Target, w *plan.Workload) (ds *dataSet, ok bool, err error) {
	j, err := job("prepare", s.p.PrepareSpec(w), t)
	if err != nil {
		return nil, false, fmt.Errorf("prepare %s: %w", w.Label(), err)
	}
	ds = &dataSet{key: s.dataKey(w), workload: w}
	if tb, isTabler := j.Gen.(workload.Tabler); isTabler {
		ds.tables, ds.known = tb.Tables(s.p.PrepareThreads)
	}
	if _, prep := j.Gen.(workload.Preparer); !prep || ds.known && len(ds.tables) == 0 {
		return ds, false, nil
	}
	return ds, true, nil
}

// job is a step's run on the plan's target, password and all, without the
// password ever being in a string.
func job(verb string, run runspec.Spec, t *plan.Target) (*bench.Job, error) {
	tg := *t.Target
	tg.Name = t.Name
	return bench.New(verb, run, &tg)
}

func (s *sweeper) out() io.Writer {
	if s.verbose {
		return &lineWriter{pr: s.pr}
	}
	return io.Discard
}

// note records what the sweep did to the data, for the report and for a
// later resume; a note the store does not take is said, not fatal.
func (s *sweeper) note(step int, kind string, t *plan.Target, w *plan.Workload, text string) {
	if s.st == nil || s.id == 0 {
		return
	}
	n := store.Note{At: time.Now(), Step: step, Kind: kind, Text: text}
	if t != nil {
		n.Target = t.Name
	}
	if w != nil {
		n.Workload = w.Label()
	}
	if err := s.st.AddNote(context.Background(), s.id, n); err != nil {
		s.pr.Printf("%v", err)
	}
}

// ensureData prepares the data step needs on its target, once.
func (s *sweeper) ensureData(ctx context.Context, step plan.Step) error {
	t, w := step.Target, step.Workload
	home := s.homes[t.Name]
	ds, ok, err := s.dataOf(t, w)
	if err != nil {
		return err
	}
	if !ok {
		if !s.said["none\x00"+w.Label()] {
			s.said["none\x00"+w.Label()] = true
			s.pr.Printf("%s prepares no data: it runs on each target's database as it is", w.Label())
		}
		return nil
	}
	if err, ok := s.prepErr[home+"\x00"+ds.key]; ok {
		return err
	}
	if s.holds(home, ds.key) != nil {
		return nil
	}
	err = s.prepare(ctx, step, ds)
	if err != nil && ctx.Err() == nil {
		s.prepErr[home+"\x00"+ds.key] = err
	}
	return err
}

// holds returns the data set of key on home, or nil.
func (s *sweeper) holds(home, key string) *dataSet {
	for _, ds := range s.data[home] {
		if ds.key == key {
			return ds
		}
	}
	return nil
}

// collide returns the tables that a and b both make; unknown says that
// either cannot tell.
func collide(a, b *dataSet) (both []string, unknown bool) {
	if !a.known || !b.known {
		return nil, true
	}
	for _, n := range a.tables {
		if slices.ContainsFunc(b.tables, func(m string) bool { return strings.EqualFold(n, m) }) {
			both = append(both, n)
		}
	}
	return both, false
}

// prepare makes ds on step's target. It drops only the tables ds's own
// prepare makes: a data set of an earlier workload that holds none of
// them stays as it is, and one that holds some is said to be replaced.
func (s *sweeper) prepare(ctx context.Context, step plan.Step, ds *dataSet) error {
	t, w := step.Target, step.Workload
	home := s.homes[t.Name]
	s.pr.startStep(step, "preparing data")
	owner := map[string]string{} // table -> the workload of this sweep whose data it holds
	var keep []*dataSet
	for _, cur := range s.data[home] {
		both, unknown := collide(ds, cur)
		switch {
		case unknown:
			s.pr.Printf("keeping %s data on %s: which tables %s's prepare touches is not known (a script's), so nothing of %s's is dropped for it",
				cur.workload.Label(), t.Name, w.Label(), cur.workload.Label())
		case len(both) > 0:
			s.pr.Printf("%s and %s both use %s on %s: %s's prepare replaces them, so %s's data there is gone once this prepare is done",
				cur.workload.Label(), w.Label(), strings.Join(both, ", "), t.Name, w.Label(), cur.workload.Label())
			for _, n := range both {
				owner[strings.ToLower(n)] = cur.workload.Label()
			}
			continue
		default:
			s.pr.Printf("keeping %s data on %s (%s): %s's tables (%s) stand beside it",
				cur.workload.Label(), t.Name, strings.Join(cur.tables, ", "), w.Label(), strings.Join(ds.tables, ", "))
		}
		keep = append(keep, cur)
	}
	s.data[home] = keep
	// Drop the tables of ds that are there already, and only those
	// (prepare creates them and fails on one in the way).
	var there []string
	if ds.known {
		var err error
		if there, err = existingTables(ctx, t, ds.tables); err != nil {
			return fmt.Errorf("prepare %s on %s: %w", w.Label(), t.Name, err)
		}
	}
	switch {
	case !ds.known:
		s.pr.Printf("running %s's cleanup on %s before its prepare (its scripts say which tables they drop and create)", w.Label(), t.Name)
		if err := s.cleanup(ctx, t, w); err != nil {
			return err
		}
	case len(there) > 0:
		why := make([]string, len(there))
		for i, n := range there {
			switch {
			case owner[strings.ToLower(n)] != "":
				why[i] = n + " (" + owner[strings.ToLower(n)] + "'s data, made by this sweep)"
			case s.p.PrepareReplace:
				why[i] = n + " (prepare: replace)"
			default:
				why[i] = n + " (it held no rows)"
			}
		}
		s.pr.Printf("dropping on %s before preparing %s: %s", t.Name, w.Label(), strings.Join(why, ", "))
		if err := s.cleanup(ctx, t, w); err != nil {
			return err
		}
		s.note(step.Index, store.NoteDropped, t, w, fmt.Sprintf("dropped %s on %s before preparing %s", strings.Join(why, ", "), t.Name, w.Label()))
	}
	j, err := job("prepare", s.p.PrepareSpec(w), t)
	if err != nil {
		return fmt.Errorf("prepare %s: %w", w.Label(), err)
	}
	if err := j.Prepare(ctx, bench.PrepareOptions{Out: s.out(), Version: s.version}); err != nil {
		return fmt.Errorf("prepare %s on %s: %w", w.Label(), t.Name, err)
	}
	s.data[home] = append(s.data[home], ds)
	made := "created " + strings.Join(ds.tables, ", ")
	if !ds.known {
		made = "the tables its scripts make"
	}
	msg := fmt.Sprintf("prepared %s data on %s (%s)", w.Label(), t.Name, made)
	var shared []string
	for _, o := range s.p.Targets {
		if o.Name != t.Name && s.homes[o.Name] == home {
			shared = append(shared, o.Name)
		}
	}
	if len(shared) > 0 {
		msg += fmt.Sprintf(", shared with %s (the same server and database)", strings.Join(shared, ", "))
	}
	s.pr.Printf("%s", msg)
	s.note(step.Index, store.NotePrepared, t, w, msg)
	return nil
}

func (s *sweeper) cleanup(ctx context.Context, t *plan.Target, w *plan.Workload) error {
	j, err := job("cleanup", s.p.PrepareSpec(w), t)
	if err != nil {
		return fmt.Errorf("cleanup %s: %w", w.Label(), err)
	}
	if _, ok := j.Gen.(workload.Cleaner); !ok {
		return nil
	}
	if err := j.Prepare(ctx, bench.PrepareOptions{Out: s.out(), Version: s.version}); err != nil {
		return fmt.Errorf("cleanup %s on %s: %w", w.Label(), t.Name, err)
	}
	return nil
}

// cleanupAll drops, at the end of the sweep, the data it made and that is
// still there: the tables each data set's workload made, and no others.
func (s *sweeper) cleanupAll(ctx context.Context) {
	for _, t := range s.p.Targets {
		home := s.homes[t.Name]
		var left []*dataSet
		for _, ds := range s.data[home] {
			what := "its tables"
			if ds.known {
				there, err := existingTables(ctx, t, ds.tables)
				if err != nil {
					s.pr.Printf("cleanup: %v", err)
					left = append(left, ds)
					continue
				}
				if len(there) == 0 {
					continue
				}
				what = strings.Join(there, ", ")
			}
			if err := s.cleanup(ctx, t, ds.workload); err != nil {
				s.pr.Printf("cleanup: %v", err)
				left = append(left, ds)
				continue
			}
			msg := fmt.Sprintf("cleaned up %s data on %s: dropped %s (cleanup: true)", ds.workload.Label(), t.Name, what)
			s.pr.Printf("%s", msg)
			s.note(0, store.NoteDropped, t, ds.workload, msg)
		}
		s.data[home] = left
	}
}

// existingTables returns those of names that are tables of t's database.
func existingTables(ctx context.Context, t *plan.Target, names []string) ([]string, error) {
	if len(names) == 0 {
		return nil, nil
	}
	args := make([]any, len(names))
	for i, n := range names {
		args[i] = n
	}
	var out []string
	err := withDB(ctx, t, func(ctx context.Context, db *sql.DB, ep target.Endpoint) error {
		have, err := target.QueryAll(ctx, db, target.ScanString, `SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN (?`+
			strings.Repeat(", ?", len(names)-1)+`)`, args...)
		if err != nil {
			return fmt.Errorf("list tables on %s: %w", t.Name, t.Target.Explain(ep, err))
		}
		found := map[string]bool{}
		for _, n := range have {
			found[strings.ToLower(n)] = true
		}
		for _, n := range names {
			if found[strings.ToLower(n)] {
				out = append(out, n)
			}
		}
		return nil
	})
	return out, err
}

// checkData asks ds's workload whether its data on t is there and whole;
// nil also when the workload cannot check.
func checkData(ctx context.Context, t *plan.Target, run runspec.Spec) error {
	j, err := job("run", run, t)
	if err != nil {
		return err
	}
	dc, ok := j.Gen.(workload.DataChecker)
	if !ok {
		return nil
	}
	ep := t.Target.Endpoints()[0]
	db, err := t.Target.Open(ep, 1)
	if err != nil {
		return err
	}
	defer db.Close()
	cctx, cancel := context.WithTimeout(ctx, t.Target.ConnectTimeout+30*time.Second)
	defer cancel()
	return dc.CheckData(cctx, &workload.PrepareEnv{DB: db, Threads: 1, Out: io.Discard})
}
