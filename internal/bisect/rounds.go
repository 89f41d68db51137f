package bisect

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/stats"
	"github.com/shakedown/shakedown/internal/vars"
)

// bisect changes the control: it writes the undo file, tries every
// testable difference at once (dropping those the control refuses), then
// searches.
func (s *session) bisect(ctx context.Context) error {
	names := make([]string, len(s.testable))
	hasRestart := false
	for i, v := range s.testable {
		names[i] = v.Name
		hasRestart = hasRestart || v.Restart
	}
	s.undo = newUndo(s.cfg.Tool, s.cfg.Control.Redacted(), s.orig, names)
	if hasRestart {
		s.undo.Sandbox = &undoSandbox{Home: s.sb.Home, Name: s.sb.Name, Settings: append([]string(nil), s.sb.Settings...)}
	}
	s.printf("will change on the control %s (every variable is restored at the end):\n", s.cfg.Control)
	for _, v := range s.testable {
		if v.Restart {
			s.printf("  restart sandbox %s with %s=%s (now %s)\n", s.sb.Name, v.Name, v.Candidate, v.Control)
		} else {
			s.printf("  SET GLOBAL %s = %s (now %s)\n", v.Name, literal(v.Candidate), v.Control)
		}
	}
	if err := s.undo.write(s.cfg.UndoPath); err != nil {
		return err
	}
	s.changed = true
	s.printf("undo file: %s (after a crash: shakedown vars bisect --undo %s)\n", s.cfg.UndoPath, s.cfg.UndoPath)

	if err := s.tryAll(ctx); err != nil {
		return err
	}
	if len(s.testable) == 0 {
		s.res.Outcome = result.OutcomeNothingToTest
		return nil
	}
	all := make([]int, len(s.testable))
	for i := range all {
		all[i] = i
	}
	s.res.Tested = s.names(all)
	r, err := s.test(ctx, all, nil, 2*int(math.Ceil(math.Log2(float64(len(all))))))
	if errors.Is(err, errBudget) {
		s.res.Outcome = result.OutcomeBudget
		for _, v := range s.testable {
			s.res.Unresolved = append(s.res.Unresolved, allNames(v)...)
		}
		return nil
	}
	if err != nil {
		return err
	}
	e := r.vs
	s.res.All = &e
	if d := s.res.Difference; r.vs.Differs() && d != nil && s.smaller(*d, r.vs) {
		// What the search can explain is this difference, clearly smaller
		// than the servers' (the rest lies elsewhere: hardware, version,
		// data). Else the servers' difference, measured with as many runs
		// and no restart, stays what the thresholds are a share of: a
		// noisy round that came out lower would make them too tight to
		// clear anything.
		s.setThresholds(r.vs.Ratio)
	}
	oc, err := search(ctx, s, len(s.testable), r, func(i int) string { return s.testable[i].Kind }, func(i int) bool { return s.testable[i].Restart })
	if err != nil {
		return err
	}
	if err := s.fill(ctx, oc, r); err != nil {
		return err
	}
	// A change after the last run would otherwise go unseen.
	return s.checkUnchanged(ctx)
}

// tryAll applies every testable difference once. A variable the control
// refuses, or takes as another value, is not testable here and is left
// out of the search.
func (s *session) tryAll(ctx context.Context) error {
	drop := map[string]string{}
	var restart []string
	for _, v := range s.testable {
		if v.Restart {
			restart = append(restart, v.Name)
		}
	}
	sort.Strings(restart)
	restarted := false
	if len(restart) > 0 {
		err := s.restartWith(ctx, restart)
		if err != nil && ctx.Err() != nil {
			return ErrInterrupted
		}
		if err != nil {
			s.printf("  the sandbox did not start with them: %v\n", firstLine(err))
			if rerr := s.restartWith(ctx, nil); rerr != nil {
				return errors.Join(err, rerr)
			}
			for _, n := range restart {
				drop[n] = "the sandbox did not start with the candidate's value: " + firstLine(err)
			}
		}
		restarted = true
	}
	now, err := s.ctl.read(ctx)
	if err != nil {
		return err
	}
	// One at a time, reading back after each: a variable that changes with
	// another (two names for one setting, such as long_query_time and
	// log_slow_query_time) is applied with it, not apart.
	alias := map[string]string{}
	for _, v := range s.testable {
		if _, ok := alias[v.Name]; ok || v.Restart || vars.Normalize(now[v.Name]) == vars.Normalize(v.Candidate) {
			continue
		}
		if err := s.ctl.setGlobal(ctx, v.Name, v.Candidate); err != nil {
			if ctx.Err() != nil {
				return ErrInterrupted
			}
			drop[v.Name] = "the control refused the candidate's value: " + firstLine(err)
			continue
		}
		after, err := s.ctl.read(ctx)
		if err != nil {
			return err
		}
		for _, w := range s.testable {
			if w.Name != v.Name && !w.Restart && vars.Normalize(after[w.Name]) != vars.Normalize(now[w.Name]) {
				alias[w.Name] = v.Name
			}
		}
		now = after
	}
	if restarted {
		if err := s.resetOthers(ctx, now); err != nil {
			return err
		}
	}
	if now, err = s.ctl.read(ctx); err != nil {
		return err
	}
	for _, v := range s.testable {
		if _, ok := drop[v.Name]; ok || vars.Normalize(now[v.Name]) == vars.Normalize(v.Candidate) {
			continue
		}
		drop[v.Name] = fmt.Sprintf("the control takes the candidate's value %s as %s", v.Candidate, now[v.Name])
		if !v.Restart {
			if err := s.ctl.setGlobal(ctx, v.Name, v.Control); err != nil {
				return err
			}
		}
	}
	var keep []result.BisectVariable
	for _, v := range s.testable {
		if of, ok := alias[v.Name]; ok {
			for i := range keep {
				if keep[i].Name == of {
					keep[i].Aliases = append(keep[i].Aliases, v.Name)
				}
			}
			s.printf("  %s changes with %s: they are tested as one\n", v.Name, of)
			continue
		}
		if why, ok := drop[v.Name]; ok {
			s.res.NotTestable = append(s.res.NotTestable, result.BisectNotTestable{Name: v.Name, Reason: why})
			s.printf("  %s: not testable: %s\n", v.Name, why)
			continue
		}
		keep = append(keep, v)
	}
	s.testable = keep
	if err := s.reread(ctx, restarted); err != nil {
		return err
	}
	if restarted {
		all := make([]int, len(s.testable))
		for i := range all {
			all[i] = i
		}
		return s.warmUp(ctx, s.names(all))
	}
	return nil
}

// test is the search's tester: one round measures the control with set
// (and on) applied, in pairs with runs of the control as it is (or with on
// applied) made right next to them, and judges the pairs' ratios (see
// paired.go): drift of a shared machine then moves both runs of a pair
// alike. A round whose set needs a restart pairs blocks of runs, each
// block after a restart (see roundRuns.blocks). An inconclusive round gets
// one more pair (or pair of blocks) at a time, up to maxPairs.
func (s *session) test(ctx context.Context, set, on []int, left int) (*round, error) {
	restart := false
	for _, x := range set {
		restart = restart || s.testable[x].Restart
	}
	runs := 2*s.pairs() - 1
	restarts := 0
	if restart {
		// Every block restarts and warms up with one run.
		restarts = 2 * ((s.pairs() + blockRuns - 1) / blockRuns)
		runs = 2*s.pairs() + restarts
	}
	est := s.estimate(runs, restart || len(s.restartOn) > 0)
	for i := 1; i < restarts; i++ {
		est += s.estimate(0, true)
	}
	if !s.deadline.IsZero() && time.Now().Add(est).After(s.deadline) {
		s.printf("budget: the next round (about %s) would not finish within --budget; stopping with the answer so far\n", result.MinSec(est))
		return nil, errBudget
	}
	s.round++
	eta := ""
	if s.runs > 0 {
		// The rounds after it counted as rounds without a restart: most
		// are, and a restart round's cost would double the ETA.
		eta = fmt.Sprintf(" (about %d more after it, ETA %s)", left, result.MinSec(est+time.Duration(left)*s.estimate(2*s.pairs(), false)))
	}
	all := union(set, on)
	names, onNames, allNames := s.names(set), s.names(on), s.names(all)
	label := strings.Join(names, ", ")
	if len(on) > 0 {
		label += " on top of " + strings.Join(onNames, ", ")
	}
	s.printf("round %d%s: %s\n", s.round, eta, label)
	m := &roundRuns{s: s, all: all, on: on, allNames: allNames, onNames: onNames}
	var err error
	if restart {
		m.more = s.estimate(2*(blockRuns+1), true) + s.estimate(0, true)
		err = m.blocks(ctx)
	} else {
		m.more = s.estimate(2, false)
		err = m.alternate(ctx)
	}
	if err != nil {
		return nil, err
	}
	samples, control, vs := m.samples, m.control, m.vs
	s.res.Rounds = append(s.res.Rounds, result.BisectRound{N: s.round, Applied: names, On: onNames, QPS: samples, Control: control, Vs: vs, Restart: restart})
	s.printf("  %s qps against the control's %s: %s\n", result.JoinQPS(samples), result.JoinQPS(control), vs.String())
	leans := vs.State == stats.Inconclusive && math.Abs(math.Log(vs.Ratio)) > math.Log(1+s.threshold)
	return &round{set: sorted(set), on: sorted(on), samples: samples, vs: vs, leans: leans}, nil
}

// beyond tells the search whether b moved the control further than a
// did, clearly: the interval of the ratio of their effects (each round
// against its own control runs, so that drift between rounds minutes apart
// cancels) lies beyond the threshold. A ratio of point estimates alone
// sent every noisy bisect into a second phase that found nothing.
func (s *session) beyond(a, b *round) bool {
	e := s.relative(a.vs, b.vs)
	return e.Differs()
}

// smaller reports whether b's effect is clearly smaller than a's (nearer
// 1x, the interval of their ratio beyond the threshold).
func (s *session) smaller(a, b result.Effect) bool {
	e := s.relative(a, b)
	if a.Ratio >= 1 {
		return e.State == stats.Slower
	}
	return e.State == stats.Faster
}

// pairs is how many pairs a round makes at first, maxPairs how many at
// most: --repeats and --max-repeats, but never fewer than an exact 95%
// interval needs.
func (s *session) pairs() int    { return max(s.cfg.Repeats, MinPairs) }
func (s *session) maxPairs() int { return max(s.cfg.MaxRepeats, s.pairs()) }

// estimate is how long a round of runs takes, from the runs so far.
func (s *session) estimate(runs int, restart bool) time.Duration {
	if s.runs == 0 {
		return 0
	}
	d := time.Duration(runs) * (s.runWall / time.Duration(s.runs))
	if restart && s.restarts > 0 {
		d += s.restartWall / time.Duration(s.restarts)
	}
	return d
}

// fill turns the search's outcome into the result: causes ranked by effect,
// interactions, cleared and the rest, and the causes together against
// every difference applied.
func (s *session) fill(ctx context.Context, oc *outcome, all *round) error {
	var found []int
	for i, c := range oc.class {
		v := s.testable[i]
		switch c {
		case classCause:
			c := result.BisectCause{Variable: v.Name, ControlValue: v.Control, CandidateValue: v.Candidate,
				Aliases: v.Aliases, Effect: oc.round([]int{i}, nil).vs}
			for _, g := range oc.eliminated {
				if g.vars[0] == i {
					e := g.r.vs
					c.ByElimination = &e
				}
			}
			s.res.Causes = append(s.res.Causes, c)
			found = append(found, i)
		case classInteraction, classTogether, classOnTop:
			found = append(found, i) // listed with their group below
		case classCleared:
			s.res.Cleared = append(s.res.Cleared, allNames(v)...)
		case classInconclusive:
			s.res.Inconclusive = append(s.res.Inconclusive, allNames(v)...)
		default:
			s.res.Unresolved = append(s.res.Unresolved, allNames(v)...)
		}
	}
	sort.SliceStable(s.res.Causes, func(i, j int) bool {
		return math.Abs(math.Log(s.res.Causes[i].Effect.Ratio)) > math.Abs(math.Log(s.res.Causes[j].Effect.Ratio))
	})
	for _, g := range oc.interactions {
		s.res.Interactions = append(s.res.Interactions, result.BisectInteraction{Variables: s.names(g.vars), Effect: g.r.vs, Alone: result.AloneCleared})
	}
	for _, g := range oc.together {
		s.res.Interactions = append(s.res.Interactions, result.BisectInteraction{Variables: s.names(g.vars), Effect: g.r.vs, Alone: result.AloneOpen})
	}
	for _, g := range oc.onTop {
		alone := result.AloneCleared
		for _, x := range g.vars {
			if oc.alone[x] != classCleared {
				alone = result.AloneOpen
			}
		}
		s.res.Interactions = append(s.res.Interactions, result.BisectInteraction{Variables: s.names(g.vars), On: s.names(oc.on), Effect: g.r.vs, Alone: alone})
	}
	if oc.rest != nil {
		e := oc.rest.vs
		s.res.RestOnTop = &e
	}
	s.res.Outcome = result.OutcomeBisected
	if oc.stopped != nil {
		s.res.Outcome = result.OutcomeBudget
		return nil
	}
	if len(found) == 0 || len(found) == len(s.testable) {
		return nil
	}
	r := oc.round(found, nil)
	if r == nil {
		var err error
		if r, err = s.test(ctx, found, nil, 0); errors.Is(err, errBudget) {
			return nil
		} else if err != nil {
			return err
		}
	}
	t := s.relative(all.vs, r.vs)
	s.res.Together = &t
	return nil
}

// relative compares two rounds' effects, each against its own control runs
// (rounds minutes apart compare through them: drift cancels): b's ratio
// over a's, the interval combined from theirs the conservative way.
func (s *session) relative(a, b result.Effect) result.Effect {
	e := result.Effect{Ratio: b.Ratio / a.Ratio, Lo: b.Lo / a.Hi, Hi: b.Hi / a.Lo, State: stats.Inconclusive}
	if a.Lo == a.Hi || b.Lo == b.Hi {
		// Too few runs gave either round no interval: no verdict.
		return e
	}
	e.State = stats.StateOf(e.Lo, e.Hi, s.threshold)
	return e
}

func firstLine(err error) string {
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return msg
}
