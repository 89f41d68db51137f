package plan

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/runspec"
	"github.com/shakedown/shakedown/internal/suggest"
	"github.com/shakedown/shakedown/internal/usage"
	"github.com/shakedown/shakedown/internal/workload"
)

// Step is one engine run of a sweep.
type Step struct {
	Index    int // from 1
	Target   *Target
	Workload *Workload
	Threads  int
	Repeat   int // from 1
}

// Cell is one workload at one thread level: the unit that repeats make
// samples of, and that targets are compared in.
type Cell struct {
	Workload *Workload
	Threads  int
	// Index counts the cells in plan order, from 0.
	Index int
}

// Cells lists the plan's cells in the order they run.
func (p *Plan) Cells() []Cell {
	var cells []Cell
	for _, w := range p.Workloads {
		for _, th := range p.Threads {
			cells = append(cells, Cell{Workload: w, Threads: th, Index: len(cells)})
		}
	}
	return cells
}

// TargetsFor is the order of the targets at repeat r (from 1) of cell c:
// plan order for interleave and sequential; for counterbalanced, turned
// round by one place at each repeat and at each new cell, so that with two
// targets the repeats of a cell run A B, B A, A B... and the next cell
// starts with B.
func (p *Plan) TargetsFor(c Cell, r int) []*Target {
	if p.Order != Counterbalanced || len(p.Targets) < 2 {
		return p.Targets
	}
	n := len(p.Targets)
	shift := (r - 1 + c.Index) % n
	out := make([]*Target, 0, n)
	out = append(out, p.Targets[shift:]...)
	return append(out, p.Targets[:shift]...)
}

// Steps lists the steps in the order they run: every repeat of the plan
// (with repeats: auto, the first round's).
func (p *Plan) Steps() []Step {
	var steps []Step
	add := func(t *Target, w *Workload, th, r int) {
		steps = append(steps, Step{Index: len(steps) + 1, Target: t, Workload: w, Threads: th, Repeat: r})
	}
	switch p.Order {
	case Sequential:
		for _, t := range p.Targets {
			for _, w := range p.Workloads {
				for _, th := range p.Threads {
					for r := 1; r <= p.Repeats; r++ {
						add(t, w, th, r)
					}
				}
			}
		}
	default:
		for _, c := range p.Cells() {
			for r := 1; r <= p.Repeats; r++ {
				for _, t := range p.TargetsFor(c, r) {
					add(t, c.Workload, c.Threads, r)
				}
			}
		}
	}
	return steps
}

// MoreSteps is one more repeat, r, of the given cells (repeats: auto),
// numbered on from after: every target of each cell, in the order
// TargetsFor gives.
func (p *Plan) MoreSteps(cells []Cell, r, after int) []Step {
	var steps []Step
	for _, c := range cells {
		for _, t := range p.TargetsFor(c, r) {
			after++
			steps = append(steps, Step{Index: after, Target: t, Workload: c.Workload, Threads: c.Threads, Repeat: r})
		}
	}
	return steps
}

// Control returns the control target.
func (p *Plan) Control() *Target {
	for _, t := range p.Targets {
		if t.Role == Control {
			return t
		}
	}
	return nil
}

// EffectiveOptions are the plan's options that w takes, overridden by the
// workload's own. A plan-level option is a default for the workloads it
// makes sense for, as a DBA writes "tables: 4" once for all the sysbench
// workloads beside a sql one that has no tables option: a workload without
// the option runs without it. An option no workload of the plan takes is a
// mistake, which Parse reports. A plan not made by Parse has no engine to
// ask, and gives its options to every workload.
func (p *Plan) EffectiveOptions(w *Workload) []Option {
	out := make([]Option, 0, len(p.Options)+len(w.Options))
	own := map[string]bool{}
	for _, o := range w.Options {
		own[o.Key] = true
	}
	for _, o := range p.Options {
		if !own[o.Key] && (p.engine == nil || p.engine.Takes(w.Name, o.Key)) {
			out = append(out, o)
		}
	}
	return append(out, w.Options...)
}

// CapacityRun is what a capacity search of the plan runs: its first
// workload at its highest thread level.
func (p *Plan) CapacityRun() (*Workload, int) {
	return p.Workloads[0], slices.Max(p.Threads)
}

// CapacitySpec is the run of CapacityRun with its options; the search sets
// each step's time, warm-up and rate.
func (p *Plan) CapacitySpec() runspec.Spec {
	w, threads := p.CapacityRun()
	s := runspec.New(w.Name)
	s.Threads = threads
	s.Options = specOptions(p.EffectiveOptions(w))
	return s
}

// RunSpec is one step of w at threads: the run "shakedown run" would make
// of the step's command line (its Args), less the target.
func (p *Plan) RunSpec(w *Workload, threads int) runspec.Spec {
	s := runspec.New(w.Name)
	s.Threads, s.TimeS = threads, p.TimeS
	if p.Events > 0 {
		s.Events = p.Events
	}
	if p.WarmupS > 0 {
		s.WarmupS = p.WarmupS
	}
	s.Options = specOptions(p.EffectiveOptions(w))
	return s
}

// PrepareSpec is the run that prepares (or cleans up) w's data.
func (p *Plan) PrepareSpec(w *Workload) runspec.Spec {
	s := runspec.New(w.Name)
	s.Threads = p.PrepareThreads
	s.Options = specOptions(p.EffectiveOptions(w))
	return s
}

// PrepareArgs is PrepareSpec's command line (Spec.Args), which says
// what data a prepare makes: a key for the data, and a line to show.
func (p *Plan) PrepareArgs(w *Workload) []string {
	return p.PrepareSpec(w).Args()
}

// specOptions are opts by name, as a Spec holds them: the engine sets each
// on the workload's flag set, or, for one every workload takes, in its
// field.
func specOptions(opts []Option) []runspec.Option {
	out := make([]runspec.Option, len(opts))
	for i, o := range opts {
		out[i] = runspec.Option{Key: o.Key, Value: o.Value}
	}
	return out
}

// checkEngine has the engine check every workload's run, so that a plan is
// accepted only if each of its steps would be as a command line. Names and
// options are checked one by one always; the whole run of a step only when
// the rest of the plan is sound (whole, so that it has thread levels and
// limits to check).
func (ps *parser) checkEngine(whole bool) {
	p := ps.p
	names := workload.Names()
	ps.checkPlanOptions()
	for _, w := range p.Workloads {
		if _, ok := workload.Lookup(w.Name); !ok {
			msg := "unknown workload " + strconv.Quote(w.Name)
			if s := suggest.Closest(w.Name, names); s != "" {
				msg += " (did you mean " + strconv.Quote(s) + "?)"
			}
			ps.addf(w.Line, "%s; workloads: %s", msg, strings.Join(names, ", "))
			continue
		}
		// The options are checked together, as the workload checks some
		// of them against each other; an error is placed on the line of
		// the option it names, else on the workload's line.
		bad := false
		opts := p.EffectiveOptions(w)
		run := runspec.New(w.Name)
		run.TimeS, run.Options = 1, specOptions(opts)
		if err := p.engine.Check("run", run); err != nil {
			bad = true
			placed := false
			for _, o := range opts {
				if mentions(err.Error(), o.Key) {
					ps.addf(o.Line, "%s", optionProblem(w.Name, o, err))
					placed = true
					break
				}
			}
			if !placed {
				ps.addf(w.Line, "workload %s: %s", w.Name, strings.TrimPrefix(engineMsg(err), w.Name+": "))
			}
		}
		if bad || !whole {
			continue
		}
		if err := p.engine.Check("run", p.RunSpec(w, p.Threads[0])); err != nil {
			ps.addf(w.Line, "workload %s: %s", w.Name, strings.TrimPrefix(engineMsg(err), w.Name+": "))
			continue
		}
		if p.Prepare {
			if err := p.engine.Check("prepare", p.PrepareSpec(w)); err != nil {
				ps.addf(w.Line, "workload %s: prepare: %s", w.Name, strings.TrimPrefix(engineMsg(err), w.Name+": "))
			}
		}
	}
}

// checkPlanOptions reports the plan-level options that no workload of the
// plan takes: a misspelling, or an option of a workload the plan does not
// run. Unknown workloads are reported on their own and count as taking
// everything here, so that one mistake gives one message.
func (ps *parser) checkPlanOptions() {
	p := ps.p
	if len(p.Workloads) == 0 {
		return
	}
	var known, wls []string
	seen := map[string]bool{}
	for _, w := range p.Workloads {
		m, ok := workload.Lookup(w.Name)
		if !ok {
			return
		}
		if !seen["workload "+w.Name] {
			seen["workload "+w.Name] = true
			wls = append(wls, w.Name)
		}
		if f, ok := m.New().(workload.Flagser); ok {
			for _, n := range flagNames(f) {
				if !seen[n] {
					seen[n] = true
					known = append(known, n)
				}
			}
		}
	}
	for _, o := range p.Options {
		taken := false
		for _, w := range p.Workloads {
			if p.engine.Takes(w.Name, o.Key) {
				taken = true
				break
			}
		}
		if taken {
			continue
		}
		msg := "options: no workload of the plan (" + strings.Join(wls, ", ") + ") has option " + strconv.Quote(o.Key)
		if s := suggest.Closest(o.Key, known); s != "" {
			msg += " (did you mean " + strconv.Quote(s) + "?)"
		}
		ps.addf(o.Line, "%s; plan-level options apply to each workload that has them: see shakedown run WORKLOAD --help", msg)
	}
}

// mentions reports whether an engine message names option key (as --key,
// spelled with '-' or '_').
func mentions(msg, key string) bool {
	msg, _, _ = strings.Cut(msg, " (did you mean")
	k := strings.ReplaceAll(key, "_", "-")
	for _, form := range []string{"--" + k, "--" + strings.ReplaceAll(k, "-", "_")} {
		if i := strings.Index(msg, form); i >= 0 {
			rest := msg[i+len(form):]
			if rest == "" || !strings.ContainsAny(rest[:1], "abcdefghijklmnopqrstuvwxyz0123456789-_") {
				return true
			}
		}
	}
	return false
}

func optionProblem(wl string, o Option, err error) string {
	msg := strings.TrimPrefix(engineMsg(err), wl+": ")
	if !strings.Contains(msg, "unknown option") {
		return "option " + o.Key + " of " + wl + ": " + msg
	}
	out := wl + " has no option " + strconv.Quote(o.Key)
	var known []string
	if m, ok := workload.Lookup(wl); ok {
		if f, ok := m.New().(workload.Flagser); ok {
			known = flagNames(f)
		}
	}
	if s := suggest.Closest(o.Key, known); s != "" {
		out += " (did you mean " + strconv.Quote(s) + "?)"
	}
	return out + "; see shakedown run " + wl + " --help for its options"
}

func flagNames(f workload.Flagser) []string {
	var names []string
	fs := f.Flags()
	if fs == nil {
		return nil
	}
	fs.VisitAll(func(fl *pflag.Flag) { names = append(names, fl.Name) })
	return names
}

// engineMsg is the engine's message without the pointer to --help and
// without repeating the verb.
func engineMsg(err error) string {
	var ue *usage.Error
	msg := err.Error()
	if errors.As(err, &ue) {
		msg = ue.Msg
	}
	if i := strings.Index(msg, "; shakedown "); i >= 0 {
		msg = msg[:i] // "; shakedown run W --help lists them"
	}
	for _, verb := range []string{"run ", "prepare "} {
		msg = strings.TrimPrefix(msg, verb)
	}
	return msg
}
