package result

// The document vars bisect writes (its --json file), rendered as text in
// bisecttext.go and as HTML in bisecthtml.go. It is apart from bisect,
// which measures, so that a report renders a stored bisect without linking
// the load engine.

import (
	"fmt"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/stats"
)

// BisectVariable is one differing variable.
type BisectVariable struct {
	Name      string `json:"name"`
	Control   string `json:"control_value"`
	Candidate string `json:"candidate_value"`
	// Restart is set when the control must be restarted to apply it.
	Restart bool `json:"restart,omitempty"`
	// Aliases are other names of the same setting: they change with it.
	Aliases []string `json:"aliases,omitempty"`
	// Kind is the group of variables known to change performance it
	// belongs to (durability, memory...), "" when it is not known to.
	Kind string `json:"-"`
}

// Effect is a ratio of throughput (queries per second) with its interval.
type Effect struct {
	Ratio float64     `json:"ratio"`
	Lo    float64     `json:"lo"`
	Hi    float64     `json:"hi"`
	State stats.State `json:"state"`
}

// BisectCause is a variable that moves the control by itself.
type BisectCause struct {
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

// BisectInteraction is a group of variables that moves the control together
// while none of them was shown to alone.
type BisectInteraction struct {
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

// BisectNotTestable is a differing variable bisect could not apply.
type BisectNotTestable struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// BisectMeasurement is one run of the workload.
type BisectMeasurement struct {
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

// BisectRound is one configuration of the control, measured.
type BisectRound struct {
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

// Bisect is what a bisect found.
type Bisect struct {
	Control   string   `json:"control"`
	Candidate string   `json:"candidate"`
	Workload  string   `json:"workload"`
	RunArgs   []string `json:"run_options"`
	Repeats   int      `json:"repeats"`
	// Pairs is how many pairs of runs a round makes at first.
	Pairs int `json:"pairs"`
	// Differences are the differing variables, per-instance ones left out.
	Differences []BisectVariable `json:"differences"`
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
	All          *Effect             `json:"all_applied,omitempty"`
	Causes       []BisectCause       `json:"causes"`
	Interactions []BisectInteraction `json:"interactions"`
	// RestOnTop is every other variable applied on top of the causes
	// found, against the causes alone.
	RestOnTop *Effect `json:"rest_on_top,omitempty"`
	// Together is the causes (and interactions) applied together, against
	// every testable difference applied: the ratio of their two rounds'
	// ratios, its interval combined from theirs.
	Together     *Effect             `json:"causes_vs_all,omitempty"`
	Cleared      []string            `json:"cleared"`
	Inconclusive []string            `json:"inconclusive"`
	Unresolved   []string            `json:"unresolved"`
	NotTestable  []BisectNotTestable `json:"not_testable"`
	Rounds       []BisectRound       `json:"rounds"`
	Measurements []BisectMeasurement `json:"measurements"`
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

// String writes an effect as "1.91x [1.80, 2.05] faster".
func (e Effect) String() string {
	return fmt.Sprintf("%.2fx [%.2f, %.2f] %s", e.Ratio, e.Lo, e.Hi, e.State)
}

// JoinQPS writes measurements as "1520.3 1498.7 1511.0", as bisect's
// rounds show them.
func JoinQPS(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%.1f", x)
	}
	return strings.Join(parts, " ")
}

// Differs says whether the effect is a verdict, faster or slower.
func (e *Effect) Differs() bool {
	return e != nil && (e.State == stats.Faster || e.State == stats.Slower)
}

// MinSec writes d to the second as minutes and seconds: 3m05s.
func MinSec(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}
