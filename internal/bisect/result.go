package bisect

import (
	"io"

	"github.com/shakedown/shakedown/internal/bisectresult"
)

// The result document and its renderers live in bisectresult, so that a
// report renders a stored bisect without linking the load engine; these
// names keep bisect's own spelling of them.
type (
	Result      = bisectresult.Result
	Variable    = bisectresult.Variable
	Effect      = bisectresult.Effect
	Cause       = bisectresult.Cause
	Interaction = bisectresult.Interaction
	NotTestable = bisectresult.NotTestable
	Measurement = bisectresult.Measurement
	Round       = bisectresult.Round
)

// Outcomes.
const (
	OutcomeBisected      = bisectresult.OutcomeBisected
	OutcomeNoDifferences = bisectresult.OutcomeNoDifferences
	OutcomeSamePerf      = bisectresult.OutcomeSamePerf
	OutcomeNothingToTest = bisectresult.OutcomeNothingToTest
	OutcomeBudget        = bisectresult.OutcomeBudget
	OutcomeInterrupted   = bisectresult.OutcomeInterrupted
	OutcomeFailed        = bisectresult.OutcomeFailed
)

// What the parts of an interaction did alone.
const (
	AloneCleared = bisectresult.AloneCleared
	AloneOpen    = bisectresult.AloneOpen
)

// allNames is the variable's name and its aliases.
func allNames(v Variable) []string { return append([]string{v.Name}, v.Aliases...) }

func effect(c Comparison) Effect { return Effect(c) }

// WriteJSON writes the result as one indented JSON document.
func WriteJSON(w io.Writer, r *Result) error { return bisectresult.WriteJSON(w, r) }

// WriteText writes the result for a terminal.
func WriteText(w io.Writer, r *Result) error { return bisectresult.WriteText(w, r) }

// WriteHTMLPage writes the result as an HTML page of its own.
func WriteHTMLPage(w io.Writer, r *Result) error { return bisectresult.WriteHTMLPage(w, r) }
