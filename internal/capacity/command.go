package capacity

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/bench"
	"github.com/shakedown/shakedown/internal/monitor"
	"github.com/shakedown/shakedown/internal/runspec"
	"github.com/shakedown/shakedown/internal/stats"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/usage"
	"github.com/shakedown/shakedown/internal/workload"
)

// Config is one capacity command.
type Config struct {
	// Args is the run command line as the capacity command was given it
	// (the workload and its options, without the verb), without a target
	// when Targets names them; it must not choose the rate or the time.
	// Plan reads it, once (bench.ParseArgs).
	Args []string
	// Targets are URLs or NAME=URL; a name is the target's in the
	// report (else its URL without password).
	Targets []string
	// Control names the target the others are compared with; empty is
	// the first.
	Control string
	Options Options
	// Warmup and Time are each step's, in seconds.
	Warmup, Time int
	// Searches is how many times each target is searched, in rounds
	// that take the targets in turn; 0 is once.
	Searches int
	// Peak is the production peak in events per second; 0 is none.
	// PeakFrom is the watch file it was read from (ReadPeak); nil when it
	// was given as a number.
	Peak     float64
	PeakFrom *monitor.WatchPeak
	Password func(string) string
	// Version is shakedown's, stored with the evidence.
	Version string
	// Log, when set, is told what a step is judged by before the first
	// step runs (the error limit above all, which the SLO may not state).
	Log io.Writer
}

// chosen are the run options a search sets itself.
var chosen = map[string]string{
	"rate":        "capacity chooses the rate: it is what the search varies",
	"time":        "use --step-time, the length of each step",
	"events":      "each step is limited by --step-time",
	"warmup-time": "use --step-warmup, the warm-up of each step",
}

// Target is one target to search, as its run resolved it.
type Target struct {
	Name string
	// URL is the target's without its password: evidence is stored under
	// it, so that readiness finds it by the servers it names.
	URL string
	// Spec is the run of every step on the target, but for what the
	// search sets: the rate, the time and the warm-up.
	Spec     runspec.Spec
	Workload string
	// Event is what one event of the workload is as a server counts it;
	// "" when not known.
	Event workload.EventKind
}

// Plan checks cfg before any load runs and resolves each target's name
// and run: a bad option is bad usage (exit 2) before anything is
// measured.
func Plan(cfg Config) ([]Target, error) {
	var given []string
	for _, a := range cfg.Args {
		if strings.HasPrefix(a, "--") {
			name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			given = append(given, name)
		}
	}
	if err := checkGiven(cfg, given); err != nil {
		return nil, err
	}
	run, _, err := bench.ParseArgs("run", cfg.Args, nil)
	if err != nil {
		return nil, err
	}
	return targetsOf(cfg, run)
}

// checkGiven refuses the run options a search sets itself, named in given,
// and a search without an SLO.
func checkGiven(cfg Config, given []string) error {
	for _, name := range given {
		if why, ok := chosen[name]; ok {
			return usage.Errorf("capacity: --%s cannot be given: %s", name, why)
		}
	}
	if len(cfg.Options.SLO.Latency) == 0 {
		return usage.Errorf("capacity: --slo is required, e.g. --slo 'p99<=20ms'; accepted: %s", SLOForm)
	}
	return nil
}

// targetsOf resolves run on each target cfg names (run's own when it names
// none), checking it whole as a step will run it.
func targetsOf(cfg Config, run runspec.Spec) ([]Target, error) {
	specs := []runspec.Spec{run}
	if len(cfg.Targets) > 0 {
		specs = nil
		for _, t := range cfg.Targets {
			s := run
			if name, url, ok := strings.Cut(t, "="); ok && !strings.ContainsAny(name, ":/@") && strings.Contains(url, "://") {
				s.Name = name
				t = url
			}
			s.Conn = append(slices.Clone(run.Conn), runspec.Option{Key: "target", Value: t})
			specs = append(specs, s)
		}
	}
	var out []Target
	seen := map[string]bool{}
	for _, s := range specs {
		check := s
		check.TimeS = 1 // the search sets each step's
		job, err := bench.New("run", check, nil)
		if err != nil {
			return nil, err
		}
		// The job's Spec holds every option in its field, so that what a
		// step sets wins over a plan's option of the same name.
		spec := job.Spec()
		spec.TimeS = s.TimeS
		t := Target{Name: job.Target.String(), URL: job.Target.Redacted(), Spec: spec, Workload: job.Workload()}
		if k, ok := job.Gen.(workload.EventKinder); ok {
			t.Event = k.EventKind()
		}
		if seen[t.Name] {
			return nil, usage.Errorf("capacity: target %s given twice", t.Name)
		}
		seen[t.Name] = true
		out = append(out, t)
	}
	if cfg.Control != "" && !seen[cfg.Control] {
		names := make([]string, len(out))
		for i, t := range out {
			names[i] = t.Name
		}
		return nil, usage.Errorf("capacity: --control %q is not a target; targets: %s", cfg.Control, strings.Join(names, ", "))
	}
	return out, nil
}

// Run searches every target in turn, cfg.Searches rounds, and compares
// them with the control. It returns the report of what ran also when a
// search failed.
func Run(ctx context.Context, cfg Config, targets []Target, progress func(target string, p Progress)) (*Report, error) {
	r := &Report{Workload: targets[0].Workload, SLO: cfg.Options.SLO.String(), Errors: cfg.Options.SLO.ErrorRule(),
		Bracket: cfg.Options.Bracket, Peak: cfg.Peak, PeakFrom: cfg.PeakFrom, Control: cfg.Control}
	if cfg.Log != nil {
		fmt.Fprintf(cfg.Log, "shakedown: capacity under %s: %s\n", r.SLO, r.Errors)
	}
	if r.Control == "" {
		r.Control = targets[0].Name
	}
	defer r.Compare()
	for round := 1; round <= max(1, cfg.Searches); round++ {
		for _, t := range targets {
			o := cfg.Options
			o.StepTime, o.Warmup = time.Duration(cfg.Time)*time.Second, time.Duration(cfg.Warmup)*time.Second
			if progress != nil {
				name := t.Name
				if cfg.Searches > 1 {
					name = fmt.Sprintf("%s (search %d of %d)", t.Name, round, cfg.Searches)
				}
				o.Progress = func(p Progress) { progress(name, p) }
			}
			st := &EngineStepper{Spec: t.Spec, Password: cfg.Password, Warmup: cfg.Warmup}
			res, err := Search(ctx, t.Name, st, o)
			res.Search, res.URL = round, t.URL
			r.Targets = append(r.Targets, res)
			if err != nil {
				return r, fmt.Errorf("capacity of %s: %w", t.Name, err)
			}
			if res.Outcome == Interrupted || res.Outcome == ClientBound {
				return r, nil
			}
		}
	}
	return r, nil
}

// Save stores each target's search as evidence, with the control as its
// source, under the URLs of both (their names when a report has none),
// and the whole report as its document. The summary holds the headroom
// and the comparison with the control, which a readiness page shows.
func (r *Report) Save(ctx context.Context, st *store.Store, version string) error {
	doc, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("store capacity: %w", err)
	}
	source := r.Control
	for _, t := range r.Targets {
		if t.Target == r.Control && t.URL != "" {
			source = t.URL
		}
	}
	for _, t := range r.Targets {
		tgt := t.Target
		if t.URL != "" {
			tgt = t.URL
		}
		e := &store.Evidence{Kind: store.KindCapacity, Source: source, Target: tgt, At: time.Now().UTC(),
			Tool: "shakedown " + version, Outcome: r.outcome(t), Summary: r.Summary(t), Document: doc}
		if _, err := st.AddEvidence(ctx, e); err != nil {
			return fmt.Errorf("store capacity of %s: %w", t.Target, err)
		}
	}
	return nil
}

// outcome weighs one target's search as the store's evidence does.
func (r *Report) outcome(t *Result) string {
	switch {
	case t.Outcome == NotMet:
		return store.OutcomeFail
	case t.Outcome != Found:
		return store.OutcomeIncomplete
	case r.Peak > 0 && t.Capacity < r.Peak:
		return store.OutcomeFail
	}
	for _, v := range r.Versus {
		if v.Candidate == t.Target && v.State == stats.Slower {
			return store.OutcomeWarn
		}
	}
	return store.OutcomePass
}

// SplitArgs separates the options fs defines from the rest, which is the
// run line: "--name=value" and "--name value" alike, and --help.
func SplitArgs(fs *pflag.FlagSet, args []string) (own, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--help" || a == "-h" {
			own = append(own, a)
			continue
		}
		if !strings.HasPrefix(a, "--") {
			rest = append(rest, a)
			continue
		}
		name, _, hasValue := strings.Cut(a[2:], "=")
		if fs.Lookup(name) == nil {
			rest = append(rest, a)
			continue
		}
		own = append(own, a)
		if !hasValue && i+1 < len(args) {
			i++
			own = append(own, args[i])
		}
	}
	return own, rest
}

// ProgressText is a search's progress line.
func ProgressText(target string, p Progress) string {
	s := fmt.Sprintf("capacity %s: step %d (%s at %s)", target, p.Step, p.Phase, rateText(p.Rate))
	if p.Low > 0 && p.High > 0 {
		s += fmt.Sprintf(", bracket %.1f-%.1f/s", p.Low, p.High)
	} else if p.Low > 0 {
		s += fmt.Sprintf(", held %.1f/s", p.Low)
	}
	if p.LeftKnow {
		s += ", ETA " + p.Left.Round(time.Second).String()
	}
	return s
}
