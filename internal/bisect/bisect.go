// Package bisect finds which configuration differences between two servers
// cause a difference in performance: it measures a workload on the control
// and the candidate, then applies the candidate's values of the differing
// global variables on the control, a group at a time, and measures again
// until each variable is shown to matter, shown not to, or left
// inconclusive (see search.go for the search).
//
// It changes the control, so it is careful: it writes an undo file before
// the first change, restores every variable at the end, on error and on
// cancel, verifies the restore by reading the variables back, and stops
// when another session changes the control's variables while it works.
// Variables that cannot be set at runtime are applied by restarting the
// control when it is a local sandbox, else listed as not testable.
package bisect

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/usage"
	"github.com/shakedown/shakedown/internal/vars"
)

// ErrInterrupted means the context ended before the bisect finished; the
// control was restored.
var ErrInterrupted = errors.New("interrupted")

// ErrChanged means another session changed the control's variables while
// bisect worked.
var ErrChanged = errors.New("the control's variables changed under bisect")

// Defaults.
const (
	DefaultRepeats = MinRepeats
	// matterShare is the share of the whole difference (on a log scale)
	// that a group's effect is judged against: it matters when its whole
	// interval lies beyond it, and is cleared when its whole interval lies
	// within it. One margin for both: a wider one to clear let a variable
	// whose effect was a third of the whole difference be cleared.
	matterShare = 0.2
	// minThreshold is the smallest relative change that counts, whatever
	// the whole difference.
	minThreshold = 0.05
)

// Config says what to bisect.
type Config struct {
	Control, Candidate *target.Target
	Workload           string
	// RunArgs are the workload's options as "shakedown run WORKLOAD" takes
	// them (--threads, --time, --tables...), without a target.
	RunArgs []string
	// Repeats is how many times each server is measured as it is, and how
	// many pairs of runs a round makes (MinPairs at least); MaxRepeats how
	// many at most, when the first ones leave the answer open (0 means
	// twice Repeats).
	Repeats    int
	MaxRepeats int
	// Budget, when > 0, stops the search with the answer so far once the
	// next round would not finish within it.
	Budget time.Duration
	// UndoPath is where the undo file goes.
	UndoPath string
	// SandboxHome is where to look for the control as a local sandbox,
	// which bisect may restart; "" when it may not.
	SandboxHome string
	// Progress receives progress lines; nil shows nothing.
	Progress io.Writer
	// Tool names the program in the undo file.
	Tool string
	// Version is shakedown's, recorded with each run as "shakedown run"
	// records it.
	Version string
}

// Variable is one differing variable.
type Variable struct {
	Name      string `json:"name"`
	Control   string `json:"control_value"`
	Candidate string `json:"candidate_value"`
	// Restart is set when the control must be restarted to apply it.
	Restart bool `json:"restart,omitempty"`
	// Aliases are other names of the same setting: they change with it.
	Aliases []string `json:"aliases,omitempty"`
	// kind is the group of variables known to change performance it
	// belongs to (durability, memory...), "" when it is not known to.
	kind string
}

// names is the variable's name and its aliases.
func (v Variable) names() []string { return append([]string{v.Name}, v.Aliases...) }

// Effect is a ratio of throughput (queries per second) with its interval.
type Effect struct {
	Ratio float64 `json:"ratio"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	State string  `json:"state"`
}

func effect(c Comparison) Effect { return Effect(c) }

// Cause is a variable that moves the control by itself.
type Cause struct {
	Variable       string `json:"variable"`
	ControlValue   string `json:"control_value"`
	CandidateValue string `json:"candidate_value"`
	// Aliases are other names of the same setting.
	Aliases []string `json:"aliases,omitempty"`
	// Effect is the control's throughput with this value applied alone,
	// against the control as it is.
	Effect Effect `json:"effect"`
	// ByElimination, when set, is the effect of the group that named the
	// variable: the group moved the control, the rest of it was cleared,
	// and the variable alone was left inconclusive.
	ByElimination *Effect `json:"by_elimination,omitempty"`
}

// Interaction is a group of variables that moves the control together
// while none of them was shown to alone.
type Interaction struct {
	Variables []string `json:"variables"`
	// On, when set, are the causes this group was found on top of: it
	// moves the control further once they are applied.
	On []string `json:"on,omitempty"`
	// Effect is the group's; when the group also held variables cleared on
	// their own, they were applied too.
	Effect Effect `json:"effect"`
	// Alone says what the parts did alone: AloneCleared (each shown not to
	// matter: they matter only together) or AloneOpen (inconclusive: they
	// may matter alone too, the measurements did not tell).
	Alone string `json:"alone"`
}

// What the parts of an interaction did alone.
const (
	AloneCleared = "cleared"
	AloneOpen    = "inconclusive"
)

// NotTestable is a differing variable bisect could not apply.
type NotTestable struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Measurement is one run of the workload.
type Measurement struct {
	N     int    `json:"n"`
	Round int    `json:"round"` // 0 = the first comparison of both sides
	On    string `json:"on"`    // control or candidate
	// Applied are the candidate's values in place on the control.
	Applied []string `json:"applied"`
	QPS     float64  `json:"qps"`
	Seconds float64  `json:"seconds"`
	// Warmup marks a run after a restart, made to warm the server and left
	// out of every comparison.
	Warmup bool `json:"warmup,omitempty"`
}

// Round is one configuration of the control, measured.
type Round struct {
	N       int      `json:"round"`
	Applied []string `json:"applied"`
	// On are applied under both the round's runs and the control's.
	On  []string  `json:"on,omitempty"`
	QPS []float64 `json:"qps"`
	// Control are the control's own measurements it was compared with.
	Control []float64 `json:"control_qps"`
	Vs      Effect    `json:"vs_control"`
	Restart bool      `json:"restart,omitempty"`
}

// Result is what a bisect found.
type Result struct {
	Control   string   `json:"control"`
	Candidate string   `json:"candidate"`
	Workload  string   `json:"workload"`
	RunArgs   []string `json:"run_options"`
	Repeats   int      `json:"repeats"`
	// Pairs is how many pairs of runs a round makes at first.
	Pairs int `json:"pairs"`
	// Differences are the differing variables, per-instance ones left out.
	Differences []Variable `json:"differences"`
	// ControlQPS and CandidateQPS are the first measurements of both
	// sides; Difference compares them.
	ControlQPS   []float64 `json:"control_qps"`
	CandidateQPS []float64 `json:"candidate_qps"`
	Difference   *Effect   `json:"difference,omitempty"`
	// Threshold is the relative change that counts as mattering; a group
	// shown to move the control by less is cleared.
	Threshold float64 `json:"threshold"`
	// Tested are the variables the search applied on the control.
	Tested []string `json:"tested"`
	// All is every testable difference applied on the control at once.
	All          *Effect       `json:"all_applied,omitempty"`
	Causes       []Cause       `json:"causes"`
	Interactions []Interaction `json:"interactions"`
	// RestOnTop is every other variable applied on top of the causes
	// found, against the causes alone.
	RestOnTop *Effect `json:"rest_on_top,omitempty"`
	// Together is the causes (and interactions) applied together, against
	// every testable difference applied: the ratio of their two rounds'
	// ratios, its interval combined from theirs.
	Together     *Effect       `json:"causes_vs_all,omitempty"`
	Cleared      []string      `json:"cleared"`
	Inconclusive []string      `json:"inconclusive"`
	Unresolved   []string      `json:"unresolved"`
	NotTestable  []NotTestable `json:"not_testable"`
	Rounds       []Round       `json:"rounds"`
	Measurements []Measurement `json:"measurements"`
	// Outcome says how it ended: "bisected", "no differing variables",
	// "no performance difference", "nothing testable", "budget spent",
	// "interrupted", "failed".
	Outcome  string  `json:"outcome"`
	Restored bool    `json:"restored"`
	Elapsed  float64 `json:"elapsed_s"`
}

// Outcomes.
const (
	OutcomeBisected      = "bisected"
	OutcomeNoDifferences = "no differing variables"
	OutcomeSamePerf      = "no performance difference"
	OutcomeNothingToTest = "nothing testable"
	OutcomeBudget        = "budget spent"
	OutcomeInterrupted   = "interrupted"
	OutcomeFailed        = "failed"
)

// Plan reads both servers' variables and returns the differences bisect
// would apply, without changing anything.
func Plan(ctx context.Context, cfg Config) ([]Variable, error) {
	if err := checkRun(cfg.Workload, cfg.RunArgs); err != nil {
		return nil, err
	}
	ctl, cand, err := readBoth(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return differences(ctl, cand), nil
}

func readBoth(ctx context.Context, cfg Config) (ctl, cand map[string]string, err error) {
	for i, tgt := range []*target.Target{cfg.Control, cfg.Candidate} {
		srv, err := openServer(ctx, tgt)
		if err != nil {
			return nil, nil, err
		}
		m, err := srv.read(ctx)
		srv.Close()
		if err != nil {
			return nil, nil, err
		}
		if i == 0 {
			ctl = m
		} else {
			cand = m
		}
	}
	return ctl, cand, nil
}

// differences lists the differing variables in vars diff's order (those
// known to matter first), derived figures left out (their parts are
// listed).
func differences(ctl, cand map[string]string) []Variable {
	var out []Variable
	for _, d := range vars.Diff(ctl, cand) {
		if strings.HasPrefix(d.Name, "(") {
			continue
		}
		v := Variable{Name: d.Name, Control: d.Values[0], Candidate: d.Values[1]}
		if d.Relevant {
			v.kind = d.Group
		}
		out = append(out, v)
	}
	return out
}

// Run bisects. It returns the result also on error: what was measured up
// to the error, with Restored saying whether the control is back as it
// was.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	if cfg.Repeats < MinRepeats {
		return nil, usage.Errorf("vars bisect: --repeats must be >= %d: with fewer runs per side no 95%% interval exists", MinRepeats)
	}
	if cfg.MaxRepeats == 0 {
		cfg.MaxRepeats = 2 * cfg.Repeats
	}
	if cfg.MaxRepeats < cfg.Repeats {
		return nil, usage.Errorf("vars bisect: --max-repeats must be >= --repeats (%d)", cfg.Repeats)
	}
	if err := checkRun(cfg.Workload, cfg.RunArgs); err != nil {
		return nil, err
	}
	if cfg.UndoPath == "" {
		return nil, usage.Errorf("vars bisect: no undo file path")
	}
	if _, err := os.Stat(cfg.UndoPath); err == nil {
		return nil, usage.Errorf("vars bisect: the undo file %s exists: a bisect did not finish; restore its control with 'shakedown vars bisect --undo %s', or remove the file", cfg.UndoPath, cfg.UndoPath)
	}
	start := time.Now()
	res := &Result{Control: cfg.Control.String(), Candidate: cfg.Candidate.String(), Workload: cfg.Workload,
		RunArgs: append([]string(nil), cfg.RunArgs...), Repeats: cfg.Repeats, Pairs: max(cfg.Repeats, MinPairs),
		Tested: []string{}, Causes: []Cause{}, Interactions: []Interaction{}, Cleared: []string{}, Inconclusive: []string{},
		Unresolved: []string{}, NotTestable: []NotTestable{}, Rounds: []Round{}, Measurements: []Measurement{}}
	defer func() { res.Elapsed = math.Round(time.Since(start).Seconds()*10) / 10 }()

	s, err := newSession(ctx, cfg, res)
	if err != nil {
		res.Outcome = OutcomeFailed
		return res, err
	}
	defer s.close()
	if len(res.Differences) == 0 {
		res.Outcome = OutcomeNoDifferences
		return res, nil
	}
	if err := s.classify(ctx); err != nil {
		res.Outcome = OutcomeFailed
		return res, err
	}
	// Both sides as they are, before anything changes: a workload that
	// fails on either side stops here.
	if err := s.measureBoth(ctx); err != nil {
		res.Outcome = failure(err)
		return res, err
	}
	if !res.Difference.differs() {
		res.Outcome = OutcomeSamePerf
		return res, nil
	}
	if len(s.testable) == 0 {
		res.Outcome = OutcomeNothingToTest
		return res, nil
	}
	err = s.bisect(ctx)
	rerr := s.restore(ctx)
	switch {
	case err != nil:
		res.Outcome = failure(err)
		return res, errors.Join(err, rerr)
	case rerr != nil:
		res.Outcome = OutcomeFailed
		return res, rerr
	}
	return res, nil
}

func (e *Effect) differs() bool { return e != nil && (e.State == Faster || e.State == Slower) }

func failure(err error) string {
	if errors.Is(err, ErrInterrupted) {
		return OutcomeInterrupted
	}
	return OutcomeFailed
}
