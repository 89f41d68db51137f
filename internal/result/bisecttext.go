package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/stats"
)

// WriteBisectJSON writes the result as one indented JSON document.
func WriteBisectJSON(w io.Writer, r *Bisect) error { return outfile.WriteJSON(w, r) }

// ReadBisect reads a result as WriteBisectJSON wrote it (vars bisect --json). A
// document that is not one, or holds no outcome, is an error.
func ReadBisect(r io.Reader) (*Bisect, error) {
	dec := json.NewDecoder(r)
	var res Bisect
	if err := dec.Decode(&res); err != nil {
		return nil, fmt.Errorf("read vars bisect result: %w", err)
	}
	if res.Outcome == "" || res.Control == "" || res.Candidate == "" {
		return nil, errors.New("read vars bisect result: no outcome, control or candidate: not a file vars bisect --json wrote")
	}
	return &res, nil
}

// Summary is the result's conclusion in a sentence or two.
func (r *Bisect) Summary() string {
	switch r.Outcome {
	case OutcomeNoDifferences:
		return "No differing variables between the control and the candidate (per-instance values such as server_id, ports and paths are ignored): nothing to bisect."
	case OutcomeSamePerf:
		return fmt.Sprintf("The control and the candidate do not differ clearly on this workload (candidate %s): nothing to bisect.", r.Difference)
	case OutcomeNothingToTest:
		return fmt.Sprintf("None of the %d differing variables can be tested here (see below).", len(r.Differences))
	}
	var b strings.Builder
	switch {
	case len(r.Causes) == 0 && len(r.Interactions) == 0 && r.All != nil && !r.All.Differs():
		fmt.Fprintf(&b, "Applying every testable difference on the control does not move it clearly (%s): the difference lies elsewhere (hardware, version, data, or the variables not testable here).", r.All)
	case len(r.Causes) == 0 && len(r.Interactions) == 0:
		b.WriteString("No variable was shown to matter.")
	default:
		b.WriteString(r.causesHeadline())
	}
	switch r.Outcome {
	case OutcomeBudget:
		b.WriteString(" The budget ran out: this is the answer so far.")
	case OutcomeInterrupted:
		b.WriteString(" Interrupted: this is the answer so far.")
	case OutcomeFailed:
		b.WriteString(" The bisect failed part way: this is the answer so far.")
	}
	return b.String()
}

// causesHeadline says what the causes found explain. It says that the
// difference comes from them only when the figures support it: together
// they are shown the same as every testable difference applied (or they
// are every variable tested), and every difference applied is not shown
// short of the candidate. Otherwise it says how much each explains of the
// whole and what is left open.
func (r *Bisect) causesHeadline() string {
	type found struct {
		name  string
		ratio float64
	}
	var all []found
	for _, c := range r.Causes {
		all = append(all, found{c.Variable, c.Effect.Ratio})
	}
	for _, in := range r.Interactions {
		all = append(all, found{in.Label(), in.Effect.Ratio})
	}
	names := make([]string, len(all))
	for i, f := range all {
		names[i] = f.name
	}
	if r.Together == nil && !r.causesAreAllTested() || r.Together != nil && r.Together.State != stats.Same {
		var b strings.Builder
		for i, f := range all {
			switch {
			case i == 0:
				fmt.Fprintf(&b, "%s explains %.2fx", f.name, f.ratio)
			case i == len(all)-1:
				fmt.Fprintf(&b, " and %s %.2fx", f.name, f.ratio)
			default:
				fmt.Fprintf(&b, ", %s %.2fx", f.name, f.ratio)
			}
		}
		whole := r.Difference
		if whole == nil {
			whole = r.All
		}
		if whole != nil {
			fmt.Fprintf(&b, " of the %.2fx", whole.Ratio)
		}
		switch {
		case r.Together == nil:
			b.WriteString("; whether together the causes found account for the rest was not measured.")
		case r.Together.Differs():
			fmt.Fprintf(&b, "; together the causes found do not account for the rest (%s against all differences applied).", r.Together)
		default:
			fmt.Fprintf(&b, "; together the causes found are not shown to account for the rest (%s against all differences applied).", r.Together)
		}
		return b.String()
	}
	if r.allShort() {
		verb := "accounts"
		if len(names) > 1 {
			verb = "account"
		}
		return fmt.Sprintf("%s %s for every testable difference applied on the control, %.2fx [%.2f, %.2f], but the candidate is %.2fx [%.2f, %.2f]: "+
			"the rest lies elsewhere (hardware, version, data, or the variables not testable here).",
			strings.Join(names, ", "), verb, r.All.Ratio, r.All.Lo, r.All.Hi, r.Difference.Ratio, r.Difference.Lo, r.Difference.Hi)
	}
	return fmt.Sprintf("The difference comes from %s.", strings.Join(names, ", "))
}

// causesAreAllTested says whether the causes and interactions found hold
// every variable tested: applied together they are then the round of
// every difference applied, and need no round of their own.
func (r *Bisect) causesAreAllTested() bool {
	found := map[string]bool{}
	for _, c := range r.Causes {
		found[c.Variable] = true
		for _, a := range c.Aliases {
			found[a] = true
		}
	}
	for _, in := range r.Interactions {
		for _, v := range in.Variables {
			found[v] = true
		}
	}
	for _, v := range r.Tested {
		if !found[v] {
			return false
		}
	}
	return len(r.Tested) > 0
}

// allShort says whether every testable difference applied on the control
// is shown short of (or beyond) the candidate itself: the ratio of the two
// effects, its interval combined from theirs the conservative way, lies
// beyond the threshold.
func (r *Bisect) allShort() bool {
	if r.All == nil || r.Difference == nil || r.Threshold <= 0 || r.All.Lo <= 0 || r.Difference.Lo <= 0 {
		return false
	}
	lo, hi := r.All.Lo/r.Difference.Hi, r.All.Hi/r.Difference.Lo
	st := stats.StateOf(lo, hi, r.Threshold)
	return st == stats.Faster || st == stats.Slower
}

// WriteBisectText writes the result for people: the conclusion, the causes by
// effect with intervals, interactions, what was cleared or left open, what
// could not be tested, and every measurement.
func WriteBisectText(w io.Writer, r *Bisect) error {
	ew := &outfile.Sticky{W: w}
	runs := fmt.Sprintf("%d runs of each server", r.Repeats)
	if n := len(r.ControlQPS); n > r.Repeats {
		// The first comparison was open after the runs asked and added pairs.
		runs = fmt.Sprintf("%d runs of each server (%d asked; more while the first comparison was open)", n, r.Repeats)
	}
	ew.Printf("vars bisect: %s %s, %s, %d pairs of runs a round\n", r.Workload, strings.Join(r.RunArgs, " "), runs, r.Pairs)
	ew.Printf("control:   %s\ncandidate: %s\n\n", r.Control, r.Candidate)
	if r.Difference != nil {
		ew.Printf("The candidate against the control: %s (median %.1f vs %.1f qps)\n", r.Difference, stats.Median(r.CandidateQPS), stats.Median(r.ControlQPS))
	}
	if r.All != nil {
		ew.Printf("All %d testable differences applied on the control: %s\n", len(r.Tested), r.All)
	}
	if r.Threshold > 0 && r.All != nil {
		ew.Printf("A set of variables matters when the whole 95%% interval of its effect lies beyond %.0f%% (a fifth of the whole difference, on a log scale), and is cleared when it lies within it.\n", r.Threshold*100)
	}
	ew.Printf("\n%s\n", r.Summary())

	if len(r.Causes) > 0 {
		ew.Printf("\nCauses, by effect (the candidate's value alone on the control):\n")
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  variable\tcontrol\tcandidate\teffect")
		for _, c := range r.Causes {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", c.Variable, short(c.ControlValue), short(c.CandidateValue), c.Effect)
		}
		tw.Flush()
		for _, c := range r.Causes {
			if c.ByElimination != nil {
				ew.Printf("  %s is named by elimination: its group moved the control %s and the rest of the group was cleared.\n", c.Variable, c.ByElimination)
			}
		}
	}
	if r.Together != nil {
		ew.Printf("Causes together against all differences applied: %s\n", r.Together)
	}
	if len(r.Interactions) > 0 {
		ew.Printf("\nVariables that matter together with others, not alone:\n")
		for _, in := range r.Interactions {
			ew.Printf("  %s: %s (%s)\n", in.Label(), in.Effect, aloneText(in.Alone))
		}
	}
	if r.RestOnTop != nil {
		ew.Printf("Everything else applied on top of them: %s\n", r.RestOnTop)
	}
	list := func(title string, names []string) {
		if len(names) > 0 {
			ew.Printf("\n%s (%d): %s\n", title, len(names), strings.Join(names, ", "))
		}
	}
	list("Cleared, shown not to matter", r.Cleared)
	list("Inconclusive, neither shown to matter nor not to", r.Inconclusive)
	if hint := r.SettleHint(); hint != "" {
		ew.Printf("  %s\n", hint)
	}
	list("Not resolved before the budget ran out", r.Unresolved)
	if len(r.NotTestable) > 0 {
		ew.Printf("\nNot testable (%d):\n", len(r.NotTestable))
		for _, n := range r.NotTestable {
			ew.Printf("  %s: %s\n", n.Name, n.Reason)
		}
	}
	if len(r.Measurements) > 0 {
		warm := 0
		for _, m := range r.Measurements {
			if m.Warmup {
				warm++
			}
		}
		ew.Printf("\nMeasurements (%d runs, %d of them to warm a server up, in %d rounds, %s; qps):\n", len(r.Measurements), warm, len(r.Rounds), MinSec(secondsDur(r.Elapsed)))
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  round\tapplied on the control\tqps\tcontrol qps\tagainst the control")
		if len(r.ControlQPS) > 0 {
			fmt.Fprintf(tw, "  0\t(candidate as it is)\t%s\t%s\t%s\n", JoinQPS(r.CandidateQPS), JoinQPS(r.ControlQPS), r.Difference)
		}
		for _, rd := range r.Rounds {
			label := appliedLabel(rd.Applied)
			if len(rd.On) > 0 {
				label += " on top of " + appliedLabel(rd.On)
			}
			if rd.Restart {
				label += " (restarted)"
			}
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\n", rd.N, label, JoinQPS(rd.QPS), JoinQPS(rd.Control), rd.Vs)
		}
		tw.Flush()
	}
	if r.Outcome != OutcomeNoDifferences && r.Outcome != OutcomeSamePerf && len(r.Rounds) > 0 {
		if r.Restored {
			ew.Printf("\nThe control was restored: every variable reads back as it was before.\n")
		} else {
			ew.Printf("\nThe control was NOT restored: see the message above and run shakedown vars bisect --undo FILE.\n")
		}
	}
	return ew.Err
}

// SettleHint says, when variables were left inconclusive, how far two runs
// of the control one after the other moved against the threshold, and
// what may settle them: against a noisy machine longer runs, against an
// effect near the threshold more pairs. "" when none was left open or no
// round has two such runs.
func (r *Bisect) SettleHint() string {
	if len(r.Inconclusive) == 0 || r.Threshold <= 0 {
		return ""
	}
	noise, ok := r.Noise()
	if !ok {
		return ""
	}
	if noise < r.Threshold/3 {
		return fmt.Sprintf("Two runs of the control one after the other differed by only %.0f%% (median), against a threshold of %.0f%%: "+
			"their effect lies near the threshold; more pairs (--max-repeats) may settle them.", noise*100, r.Threshold*100)
	}
	return fmt.Sprintf("Two runs of the control one after the other differed by %.0f%% (median), against a threshold of %.0f%%: "+
		"longer runs (--time), more pairs (--max-repeats) or a quieter machine may settle them.", noise*100, r.Threshold*100)
}

// Noise is the median relative change between two runs of the control
// made one after the other in a round (as it is, or with the variables
// underneath applied); ok is false when no round has two.
func (r *Bisect) Noise() (noise float64, ok bool) {
	var d []float64
	for _, rd := range r.Rounds {
		for i := 1; i < len(rd.Control); i++ {
			if a, b := rd.Control[i-1], rd.Control[i]; a > 0 && b > 0 {
				d = append(d, math.Abs(math.Log(b/a)))
			}
		}
	}
	if len(d) == 0 {
		return 0, false
	}
	return math.Exp(stats.Median(d)) - 1, true
}

// Label names the interaction: "a + b", or "c on top of a, b".
func (in BisectInteraction) Label() string {
	l := strings.Join(in.Variables, " + ")
	if len(in.On) > 0 {
		return l + " on top of " + strings.Join(in.On, ", ")
	}
	return l + " together"
}

// aloneText says what an interaction's variables did alone.
func aloneText(alone string) string {
	if alone == AloneCleared {
		return "alone, shown not to matter"
	}
	return "alone, inconclusive"
}

// appliedLabel names a round's variables, briefly when there are many.
func appliedLabel(names []string) string {
	if len(names) > 4 {
		return fmt.Sprintf("%d: %s, ...", len(names), strings.Join(names[:3], ", "))
	}
	return strings.Join(names, ", ")
}

// short cuts a long value (sql_mode, optimizer_switch) for a table.
func short(v string) string {
	const max = 40
	if len(v) > max {
		return v[:max-3] + "..."
	}
	return v
}

func secondsDur(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }
