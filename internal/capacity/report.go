package capacity

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/shakedown/shakedown/internal/stats"
)

// Report is the searches of one capacity command: the document --json
// writes and the store keeps.
type Report struct {
	Workload string `json:"workload"`
	SLO      string `json:"slo"`
	// Bracket is the bisection's relative width.
	Bracket float64 `json:"bracket"`
	// Peak is the production peak the headroom is measured against; 0
	// when none was given.
	Peak    float64   `json:"peak,omitempty"`
	Control string    `json:"control"`
	Targets []*Result `json:"targets"`
	// Versus holds each candidate's capacity against the control's.
	Versus []Versus `json:"versus,omitempty"`
}

// Versus is a candidate's capacity over the control's. The interval comes
// from the two brackets: the lowest ratio is the candidate's held rate
// over the control's failed one, the highest the candidate's failed rate
// over the control's held one (unbounded when the candidate never
// failed). Its state is the sweep's (stats.StateOf) at the default 2%
// threshold.
type Versus struct {
	Candidate string      `json:"candidate"`
	Ratio     float64     `json:"ratio"`
	Low       float64     `json:"low"`
	High      float64     `json:"high"` // +Inf is written as 0 in JSON
	State     stats.State `json:"state"`
	Reason    string      `json:"reason,omitempty"`
}

// MarshalJSON writes an unbounded High as 0.
func (v Versus) MarshalJSON() ([]byte, error) {
	type plain Versus
	if math.IsInf(v.High, 1) {
		v.High = 0
	}
	return json.Marshal(plain(v))
}

// Compare fills r.Versus, comparing every target with the control.
func (r *Report) Compare() {
	var ctl *Result
	for _, t := range r.Targets {
		if t.Target == r.Control {
			ctl = t
		}
	}
	r.Versus = nil
	if ctl == nil {
		return
	}
	for _, t := range r.Targets {
		if t != ctl {
			r.Versus = append(r.Versus, versus(ctl, t))
		}
	}
}

func versus(ctl, c *Result) Versus {
	v := Versus{Candidate: c.Target, State: stats.NoVerdict}
	switch {
	case ctl.Outcome == ClientBound || c.Outcome == ClientBound:
		v.State, v.Reason = stats.Inconclusive, stats.ReasonClientBound
		return v
	case c.Outcome == NotMet && ctl.Capacity > 0:
		v.State, v.Reason = stats.Slower, "the candidate did not meet the SLO at any rate tried"
		return v
	case ctl.Capacity <= 0 || c.Capacity <= 0:
		v.Reason = "no capacity on one side"
		return v
	}
	v.Ratio = c.Capacity / ctl.Capacity
	v.Low, v.High = 0, math.Inf(1)
	if ctl.High > 0 {
		v.Low = c.Low / ctl.High
	}
	if c.High > 0 {
		v.High = c.High / ctl.Low
	}
	v.State = stats.StateOf(v.Low, v.High, stats.DefaultThreshold)
	return v
}

// Slower reports whether a candidate's capacity is below the control's.
func (r *Report) Slower() bool {
	for _, v := range r.Versus {
		if v.State == stats.Slower {
			return true
		}
	}
	return false
}

// NotMet reports whether some target met the SLO at no rate tried.
func (r *Report) NotMet() bool {
	for _, t := range r.Targets {
		if t.Outcome == NotMet {
			return true
		}
	}
	return false
}

// Headroom is capacity over the production peak; 0 without either.
func (r *Report) Headroom(t *Result) float64 {
	if r.Peak <= 0 || t.Capacity <= 0 {
		return 0
	}
	return t.Capacity / r.Peak
}

// WriteText writes the report for a terminal.
func (r *Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "Capacity of %s under %s (bracket %g%%)\n", r.Workload, r.SLO, 100*r.Bracket)
	for _, t := range r.Targets {
		role := "candidate"
		if t.Target == r.Control {
			role = "control"
		}
		fmt.Fprintf(w, "\n%s (%s): %s\n", t.Target, role, t.Message)
		if h := r.Headroom(t); h > 0 {
			fmt.Fprintf(w, "  headroom x%.2f over the production peak of %.1f/s\n", h, r.Peak)
		} else if r.Peak > 0 {
			fmt.Fprintf(w, "  no headroom: no capacity against the production peak of %.1f/s\n", r.Peak)
		}
		writeSteps(w, t)
	}
	if len(r.Versus) > 0 {
		fmt.Fprintf(w, "\nAgainst the control (%s):\n", r.Control)
	}
	for _, v := range r.Versus {
		fmt.Fprintf(w, "  %s: %s\n", v.Candidate, v.Text())
	}
	return nil
}

// Text is the comparison in a few words: the ratio, its interval and its
// state.
func (v Versus) Text() string {
	if v.Ratio == 0 {
		return fmt.Sprintf("%s (%s)", v.State, v.Reason)
	}
	hi := "unbounded"
	if !math.IsInf(v.High, 1) {
		hi = fmt.Sprintf("%.3f", v.High)
	}
	return fmt.Sprintf("x%.3f [%.3f, %s] %s", v.Ratio, v.Low, hi, v.State)
}

func writeSteps(w io.Writer, t *Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  step\tphase\toffered/s\tachieved/s\tp50 ms\tp95 ms\tp99 ms\terrors\theld\t")
	for _, s := range t.Steps {
		off, held := fmt.Sprintf("%.1f", s.Offered), "no"
		switch {
		case s.ClientBound:
			held = "client-bound"
		case s.Offered == 0:
			held = "-"
		case s.Held:
			held = "yes"
		}
		if s.Offered == 0 {
			off = "closed"
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%.1f\t%.2f\t%.2f\t%.2f\t%d\t%s\t\n", s.N, s.Phase, off, s.Achieved, s.P50MS, s.P95MS, s.P99MS, s.Errors, held)
	}
	tw.Flush()
	for _, s := range t.Steps {
		if len(s.Why) > 0 {
			fmt.Fprintf(w, "  step %d: %s\n", s.N, strings.Join(s.Why, "; "))
		}
	}
}
