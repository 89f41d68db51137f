package capacity

import (
	"fmt"
	"strings"
)

// Unfinished is the error for the first target whose search ended on no
// answer (the client was the bottleneck, it was interrupted, the answer
// was not confirmed, or the host's latency varied too much to place one):
// the tool could not answer, which is not a difference; nil when every
// search ended on one.
func (r *Report) Unfinished() error {
	for _, t := range r.Targets {
		switch t.Outcome {
		case ClientBound, Interrupted, Unconfirmed, Inconclusive:
			return fmt.Errorf("%s: %s", t.Target, t.Message)
		}
	}
	return nil
}

// Shortfall says what makes the report a difference: a candidate's
// capacity below the control's, an SLO met at no rate tried; "" when
// nothing does.
func (r *Report) Shortfall() string {
	var why []string
	if r.Slower() {
		why = append(why, "a candidate's capacity is below the control's")
	}
	if r.NotMet() {
		why = append(why, "the SLO was not met at any rate tried")
	}
	return strings.Join(why, "; ")
}
