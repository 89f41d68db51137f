// Package capacity finds the highest rate a target sustains within a
// latency SLO: a closed-loop probe for the peak, then bisection on the
// offered (open-loop, Poisson) rate to a bracket, then repeats of the
// answer. A step holds only when the rate offered was achieved, the
// backlog did not grow, each percentile's upper 95% confidence bound is
// within its limit, errors are within theirs, and the client was not the
// limit. The achieved rate is judged against the arrivals that fell due
// less those that fell due in the step and were still queued at its end,
// which are the backlog rule's to judge (a backlog the step began with
// counts as a shortfall). A step that missed only within its noise (each percentile
// within its limit and only its bound above, or the achieved rate short by
// at most twice the allowance, and nothing else broken) is measured again
// and the rate judged on both steps pooled, before the bisection moves
// down on it: near the ceiling one short step's verdict turns on a burst
// of a few events. The runs themselves are the runner's (through a
// Stepper); this package decides what to run next and what the steps mean.
package capacity

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// SLOForm is the accepted form, shown with every SLO that does not parse.
const SLOForm = "pNN<=DURATION (p99<=20ms, p99.9<=5ms) or errors<=PERCENT (errors<=0.1%), several separated by commas"

// Limit is one latency objective: the Percentile of a step's latency must
// be at most Max.
type Limit struct {
	Percentile float64       `json:"percentile"`
	Max        time.Duration `json:"max_ns"`
}

// String is the limit as it is written: p99<=20ms.
func (l Limit) String() string {
	return "p" + strconv.FormatFloat(l.Percentile, 'f', -1, 64) + "<=" + l.Max.String()
}

// SLO is what a step must meet.
type SLO struct {
	// Latency holds the percentile limits, in the order given.
	Latency []Limit `json:"latency"`
	// ErrorPct is the most errors a step may have, in percent of the
	// events it ran and the errors it had; ErrorSet says whether one was
	// given (without it, DefaultErrorPct is the limit: see ErrorLimit).
	ErrorPct float64 `json:"error_pct"`
	ErrorSet bool    `json:"error_set"`
}

// DefaultErrorPct is the error limit of an SLO that sets none, in percent
// of a step's events and errors. It is not 0: a deadlock or a lock wait
// timeout that the runner retried is counted as an error, and one such in
// the thousands of events of a step is the workload's, not a sign that
// the target is past its capacity; a server that fails one event in a
// thousand is. errors<=0% asks for none at all.
const DefaultErrorPct = 0.1

// ErrorLimit is the most errors a step may have, in percent: the SLO's,
// or DefaultErrorPct when it sets none.
func (s SLO) ErrorLimit() float64 {
	if s.ErrorSet {
		return s.ErrorPct
	}
	return DefaultErrorPct
}

// ErrorRule says in words what errors a step may have, and where the limit
// came from.
func (s SLO) ErrorRule() string {
	if s.ErrorSet {
		return fmt.Sprintf("a step fails with errors above %g%% of its events (the SLO's errors<=%g%%)", s.ErrorPct, s.ErrorPct)
	}
	return fmt.Sprintf("a step fails with errors above %g%% of its events (the default error limit: add errors<=PERCENT to --slo for another; retried deadlocks and lock waits count as errors)", DefaultErrorPct)
}

// String is the SLO as it is written.
func (s SLO) String() string {
	var parts []string
	for _, l := range s.Latency {
		parts = append(parts, l.String())
	}
	if s.ErrorSet {
		parts = append(parts, "errors<="+strconv.FormatFloat(s.ErrorPct, 'f', -1, 64)+"%")
	}
	return strings.Join(parts, ",")
}

// SLOError is an SLO that does not parse: the token, why, and the form.
type SLOError struct {
	Token string
	Why   string
}

func (e *SLOError) Error() string {
	return fmt.Sprintf("--slo %q: %s; accepted: %s", e.Token, e.Why, SLOForm)
}

// ParseSLO reads the values of --slo, each one or more objectives
// separated by commas. A percentile given twice is an error, as is an SLO
// with no latency limit: a capacity needs a latency to hold.
func ParseSLO(values []string) (SLO, error) {
	var s SLO
	seen := map[float64]bool{}
	for _, v := range values {
		for _, tok := range strings.Split(v, ",") {
			tok = strings.TrimSpace(tok)
			if tok == "" {
				return SLO{}, &SLOError{Token: v, Why: "empty objective"}
			}
			if err := s.add(tok, seen); err != nil {
				return SLO{}, err
			}
		}
	}
	if len(s.Latency) == 0 {
		tok := strings.Join(values, ",")
		return SLO{}, &SLOError{Token: tok, Why: "no latency objective: name at least one percentile"}
	}
	return s, nil
}

func (s *SLO) add(tok string, seen map[float64]bool) error {
	name, val, ok := strings.Cut(tok, "<=")
	if !ok {
		return &SLOError{Token: tok, Why: "no <= between the figure and its limit"}
	}
	name, val = strings.TrimSpace(strings.ToLower(name)), strings.TrimSpace(val)
	switch {
	case name == "errors":
		if s.ErrorSet {
			return &SLOError{Token: tok, Why: "errors given twice"}
		}
		num, ok := strings.CutSuffix(val, "%")
		if !ok {
			return &SLOError{Token: tok, Why: "the error limit is a percentage and ends in %"}
		}
		pct, err := strconv.ParseFloat(num, 64)
		if err != nil || math.IsNaN(pct) || pct < 0 || pct > 100 {
			return &SLOError{Token: tok, Why: "the error limit must be a number from 0 to 100"}
		}
		s.ErrorPct, s.ErrorSet = pct, true
	case strings.HasPrefix(name, "p"):
		p, err := strconv.ParseFloat(name[1:], 64)
		if err != nil || math.IsNaN(p) || p <= 0 || p >= 100 {
			return &SLOError{Token: tok, Why: fmt.Sprintf("%q is not a percentile: write p and a number above 0 and below 100", name)}
		}
		if seen[p] {
			return &SLOError{Token: tok, Why: name + " given twice"}
		}
		d, err := time.ParseDuration(val)
		if err != nil || d <= 0 {
			return &SLOError{Token: tok, Why: fmt.Sprintf("%q is not a positive duration such as 20ms", val)}
		}
		seen[p] = true
		s.Latency = append(s.Latency, Limit{Percentile: p, Max: d})
	default:
		return &SLOError{Token: tok, Why: fmt.Sprintf("unknown figure %q", name)}
	}
	return nil
}
