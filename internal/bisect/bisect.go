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

	"github.com/shakedown/shakedown/internal/result"
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
	// DefaultRepeats is --repeats' default: as few runs a side as give a
	// 95% interval (stats.MinRunsFor95), so that the first measurement
	// can be a verdict.
	DefaultRepeats = 4
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
	// Threads is every measurement's --threads.
	Threads int
	// RunArgs are the workload's other options as "shakedown run
	// WORKLOAD" takes them (--time, --tables...), as given, without a
	// target: read once (bench.ParseArgs), and recorded after --threads
	// as the result's run options.
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

// Plan reads both servers' variables and returns the differences bisect
// would apply, without changing anything.
func Plan(ctx context.Context, cfg Config) ([]result.BisectVariable, error) {
	if _, err := runSpec(cfg); err != nil {
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
func differences(ctl, cand map[string]string) []result.BisectVariable {
	var out []result.BisectVariable
	for _, d := range vars.Diff(ctl, cand) {
		if strings.HasPrefix(d.Name, "(") {
			continue
		}
		v := result.BisectVariable{Name: d.Name, Control: d.Values[0], Candidate: d.Values[1]}
		if d.Relevant {
			v.Kind = d.Group
		}
		out = append(out, v)
	}
	return out
}

// Run bisects. It returns the result also on error: what was measured up
// to the error, with Restored saying whether the control is back as it
// was.
func Run(ctx context.Context, cfg Config) (*result.Bisect, error) {
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	if err := checkRepeats(cfg.Repeats); err != nil {
		return nil, err
	}
	if cfg.MaxRepeats == 0 {
		cfg.MaxRepeats = 2 * cfg.Repeats
	}
	if cfg.MaxRepeats < cfg.Repeats {
		return nil, usage.Errorf("vars bisect: --max-repeats must be >= --repeats (%d)", cfg.Repeats)
	}
	run, err := runSpec(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.UndoPath == "" {
		return nil, usage.Errorf("vars bisect: no undo file path")
	}
	if _, err := os.Stat(cfg.UndoPath); err == nil {
		return nil, usage.Errorf("vars bisect: the undo file %s exists: a bisect did not finish; restore its control with 'shakedown vars bisect --undo %s', or remove the file", cfg.UndoPath, cfg.UndoPath)
	}
	start := time.Now()
	res := &result.Bisect{Control: cfg.Control.String(), Candidate: cfg.Candidate.String(), Workload: cfg.Workload,
		RunArgs: runOptions(cfg), Repeats: cfg.Repeats, Pairs: max(cfg.Repeats, MinPairs),
		Tested: []string{}, Causes: []result.BisectCause{}, Interactions: []result.BisectInteraction{}, Cleared: []string{}, Inconclusive: []string{},
		Unresolved: []string{}, NotTestable: []result.BisectNotTestable{}, Rounds: []result.BisectRound{}, Measurements: []result.BisectMeasurement{}}
	defer func() { res.Elapsed = math.Round(time.Since(start).Seconds()*10) / 10 }()

	s, err := newSession(ctx, cfg, run, res)
	if err != nil {
		res.Outcome = result.OutcomeFailed
		return res, err
	}
	defer s.close()
	if len(res.Differences) == 0 {
		res.Outcome = result.OutcomeNoDifferences
		return res, nil
	}
	if err := s.classify(ctx); err != nil {
		res.Outcome = result.OutcomeFailed
		return res, err
	}
	// Both sides as they are, before anything changes: a workload that
	// fails on either side stops here.
	if err := s.measureBoth(ctx); err != nil {
		res.Outcome = failure(err)
		return res, err
	}
	if !res.Difference.Differs() {
		res.Outcome = result.OutcomeSamePerf
		return res, nil
	}
	if len(s.testable) == 0 {
		res.Outcome = result.OutcomeNothingToTest
		return res, nil
	}
	err = s.bisect(ctx)
	rerr := s.restore(ctx)
	switch {
	case err != nil:
		res.Outcome = failure(err)
		return res, errors.Join(err, rerr)
	case rerr != nil:
		res.Outcome = result.OutcomeFailed
		return res, rerr
	}
	return res, nil
}

func failure(err error) string {
	if errors.Is(err, ErrInterrupted) {
		return result.OutcomeInterrupted
	}
	return result.OutcomeFailed
}
