package capacity

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/shakedown/shakedown/internal/monitor"
	"github.com/shakedown/shakedown/internal/stats"
)

// Report is the searches of one capacity command: the document --json
// writes and the store keeps.
type Report struct {
	Workload string `json:"workload"`
	SLO      string `json:"slo"`
	// Errors says what errors a step may have (SLO.ErrorRule); "" in
	// reports from before it was recorded.
	Errors string `json:"errors,omitempty"`
	// Bracket is the bisection's relative width.
	Bracket float64 `json:"bracket"`
	// Peak is the production peak the headroom is measured against; 0
	// when none was given.
	Peak float64 `json:"peak,omitempty"`
	// PeakFrom is the watch file the peak was read from, the figure, its
	// time and the samples it was the highest of; absent when the peak
	// was given as a number.
	PeakFrom *monitor.WatchPeak `json:"peak_from,omitempty"`
	Control  string             `json:"control"`
	Targets  []*Result          `json:"targets"`
	// Versus holds each candidate's capacity against the control's.
	Versus []Versus `json:"versus,omitempty"`
}

// Versus is a candidate's capacity over the control's, by the sweep's
// statistics (stats.Compare) over the capacities of their searches
// (--searches): the ratio of the medians, its 95% interval and its state.
// One search a side gives a ratio and no verdict, as one run a side does in
// a sweep: a bracket says how finely one search placed the rate, not how
// much the rate moves from one search to the next, which on a busy host is
// far more.
type Versus struct {
	Candidate string           `json:"candidate"`
	Ratio     float64          `json:"ratio"`
	Low       float64          `json:"low"`
	High      float64          `json:"high"`
	State     stats.State      `json:"state"`
	Note      string           `json:"note"`
	Compare   stats.Comparison `json:"comparison"`
}

// Compare fills r.Versus, comparing every candidate with the control.
func (r *Report) Compare() {
	r.Versus = nil
	byTarget := map[string][]*Result{}
	var order []string
	for _, t := range r.Targets {
		if _, ok := byTarget[t.Target]; !ok {
			order = append(order, t.Target)
		}
		byTarget[t.Target] = append(byTarget[t.Target], t)
	}
	ctl, ok := byTarget[r.Control]
	if !ok {
		return
	}
	for _, name := range order {
		if name != r.Control {
			r.Versus = append(r.Versus, versus(ctl, byTarget[name], name))
		}
	}
}

func versus(ctl, cand []*Result, name string) Versus {
	v := Versus{Candidate: name}
	caps := func(rs []*Result) (xs []float64, bound, notMet bool) {
		for _, r := range rs {
			switch r.Outcome {
			case Found:
				xs = append(xs, r.Capacity)
			case ClientBound:
				bound = true
			case NotMet:
				notMet = true
			}
		}
		return xs, bound, notMet
	}
	cx, cb, _ := caps(ctl)
	xx, xb, xnm := caps(cand)
	c := stats.Compare(cx, xx, stats.Options{})
	switch {
	case cb || xb:
		c = c.ClientBound()
	case xnm && len(xx) == 0 && len(cx) > 0:
		c.State, c.Reason = stats.Slower, "the candidate did not meet the SLO at any rate tried"
	}
	v.Compare, v.Ratio, v.Low, v.High, v.State, v.Note = c, c.Ratio, c.Low, c.High, c.State, c.Note()
	switch {
	case v.Note == "1 run: no verdict" && len(cx) == len(ctl) && len(xx) == len(cand):
		v.Note = "1 search a side: no verdict (--searches 4 gives a 95% interval)"
	case v.Note == "1 run: no verdict":
		// More searches ran, but only one on a side found a capacity.
		v.Note = fmt.Sprintf("no verdict: %d of the control's %d searches and %d of the candidate's %d found a capacity",
			len(cx), len(ctl), len(xx), len(cand))
	case len(cx) == 0 && c.Reason == "":
		v.Note = "no verdict: the control has no capacity (" + noCapacity(ctl) + ")"
	case len(xx) == 0 && c.Reason == "":
		v.Note = "no verdict: the candidate has no capacity (" + noCapacity(cand) + ")"
	}
	return v
}

// noCapacity says why searches found no capacity, each outcome once.
func noCapacity(rs []*Result) string {
	why := map[string]string{
		NotMet:       "the SLO was not met at any rate tried",
		Unconfirmed:  "no rate held on every repeat",
		Budget:       "--budget was spent before a rate was confirmed",
		Interrupted:  "the search was interrupted",
		Inconclusive: "its latency at one rate varied too much to place a capacity",
	}
	var out []string
	seen := map[string]bool{}
	for _, r := range rs {
		w, ok := why[r.Outcome]
		if !ok {
			w = "its search ended " + r.Outcome
		}
		if r.Outcome == Unconfirmed {
			if lo, hi, ok := heldRange(r.Steps); ok {
				w += fmt.Sprintf("; single steps held at %s", rangeText(lo, hi))
			}
		}
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return "it was not searched"
	}
	return strings.Join(out, "; ")
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

// Summary is one search's answer in a line: its message, the headroom
// over the production peak and the comparison with the control.
func (r *Report) Summary(t *Result) string {
	s := r.Headline(t)
	for _, v := range r.Versus {
		if v.Candidate == t.Target {
			s += fmt.Sprintf("; against the control %s: %s", r.Control, v.Text())
		}
	}
	return s
}

// Headline is one search's message with its headroom over the production
// peak, when one was given.
func (r *Report) Headline(t *Result) string {
	s := t.Message
	switch h := r.Headroom(t); {
	case h > 0:
		s += fmt.Sprintf("; headroom x%.2f over the production peak of %.1f/s", h, r.Peak)
	case r.Peak > 0:
		s += "; " + r.noHeadroom(t)
	}
	return s
}

// noHeadroom says why a search has no headroom over the production peak:
// no capacity was found, and what held, if anything did.
func (r *Report) noHeadroom(t *Result) string {
	s := fmt.Sprintf("no headroom: no capacity to set against the production peak of %.1f/s", r.Peak)
	if lo, hi, ok := heldRange(t.Steps); ok {
		s += fmt.Sprintf(" (single steps held at %s, not confirmed)", rangeText(lo, hi))
	}
	return s
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
	if r.Errors != "" {
		fmt.Fprintln(w, "Errors: "+r.Errors)
	}
	if p := r.PeakText(); p != "" {
		fmt.Fprintln(w, p)
	}
	for _, t := range r.Targets {
		role := "candidate"
		if t.Target == r.Control {
			role = "control"
		}
		name := t.Target
		if t.Search > 1 || r.searches(t.Target) > 1 {
			name = fmt.Sprintf("%s, search %d", t.Target, t.Search)
		}
		fmt.Fprintf(w, "\n%s (%s): %s\n", name, role, t.Message)
		if h := r.Headroom(t); h > 0 {
			fmt.Fprintf(w, "  headroom x%.2f over the production peak of %.1f/s\n", h, r.Peak)
		} else if r.Peak > 0 {
			fmt.Fprintf(w, "  %s\n", r.noHeadroom(t))
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

// searches is how many searches of target the report holds.
func (r *Report) searches(target string) int {
	n := 0
	for _, t := range r.Targets {
		if t.Target == target {
			n++
		}
	}
	return n
}

// Text is the comparison in a few words: the ratio, its interval and its
// state.
func (v Versus) Text() string {
	switch {
	case v.Ratio == 0:
		return v.Note
	case v.Compare.Interval:
		return fmt.Sprintf("x%.3f [%.3f, %.3f] %s", v.Ratio, v.Low, v.High, v.Note)
	}
	return fmt.Sprintf("x%.3f, %s", v.Ratio, v.Note)
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
		why := s.Why
		if s.Note != "" {
			why = append(append([]string(nil), why...), s.Note)
		}
		if len(why) > 0 {
			fmt.Fprintf(w, "  step %d: %s\n", s.N, strings.Join(why, "; "))
		}
	}
}
