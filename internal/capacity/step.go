package capacity

import (
	"fmt"
	"math"
	"time"

	"github.com/shakedown/shakedown/internal/histogram"
)

// Measure is what one step measured, after its warm-up.
type Measure struct {
	// Offered is the rate asked for in events per second; 0 is the
	// closed-loop probe. Achieved is the rate the events completed at.
	Offered, Achieved float64
	// Due is the rate of the arrivals that fell due in the step: Poisson
	// arrivals offer Offered on average only, and over a short step the
	// count alone strays by several percent. 0 when unknown.
	Due            float64
	Events, Errors int64
	// Latency is the step's distribution, counted (under a rate) from
	// each event's intended start.
	Latency *histogram.Histogram
	// Backlog is the number of events due but not started at the end of
	// each interval, in order, the last at the end of the step.
	Backlog []int64
	// ClientBound says the client, not the server, set the step's pace.
	ClientBound bool
	// EndedEarly says the step was stopped for overload (see Overloaded).
	EndedEarly bool
	Elapsed    time.Duration
	// Span is the time the rates are over (the step after its warm-up);
	// 0 when unknown.
	Span time.Duration
}

// queued is what the backlog grew by over the step (its last reading less
// its first; with one reading, the step began with none), the events that
// fell due in the step and had not started at its end, as a rate over the
// step's span: 0 when unknown. A backlog the step began with fell due
// before it and is no part of its rate: counting it let a server that
// completed 160 events a second hold at 312 offered.
func (m Measure) queued() float64 {
	n := len(m.Backlog)
	if n == 0 || m.Span <= 0 {
		return 0
	}
	grown := m.Backlog[n-1]
	if n > 1 {
		grown -= m.Backlog[0]
	}
	return float64(max(grown, 0)) / m.Span.Seconds()
}

// oneSidedZ95 is the normal quantile of a one-sided 95% bound.
const oneSidedZ95 = 1.6448536269514722

// UpperBound is the upper 95% confidence bound of the q quantile (q in
// (0, 1)) of the distribution h was drawn from, by order statistics: the
// k-th smallest of n values is above the quantile with probability
// P(Binomial(n, q) < k), and k is chosen (by the normal approximation to
// the binomial) so that this is at least 95%. It returns false when n is
// too small for such a k: then no bound within the sample exists, and a
// step cannot show that it met the limit.
func UpperBound(h *histogram.Histogram, q float64) (time.Duration, bool) {
	n := float64(h.Count())
	if n == 0 {
		return 0, false
	}
	k := boundRank(n, q)
	if k > n {
		return 0, false
	}
	return h.Percentile(100 * k / n), true
}

// MinEvents is the fewest events a step needs for an upper bound of every
// percentile of slo (see UpperBound).
func MinEvents(slo SLO) int64 {
	var n int64
	for _, l := range slo.Latency {
		q := l.Percentile / 100
		k := int64(1)
		for ; k < 1<<40; k *= 2 {
			if boundRank(float64(k), q) <= float64(k) {
				break
			}
		}
		// The smallest n in (k/2, k] that has a bound.
		lo, hi := k/2, k
		for lo+1 < hi {
			mid := (lo + hi) / 2
			if boundRank(float64(mid), q) <= float64(mid) {
				hi = mid
			} else {
				lo = mid
			}
		}
		n = max(n, hi)
	}
	return n
}

// boundRank is the rank of the upper 95% bound of the q quantile among n
// values.
func boundRank(n, q float64) float64 {
	return math.Ceil(n*q+oneSidedZ95*math.Sqrt(n*q*(1-q))) + 1
}

// Seen is a latency objective as one step saw it.
type Seen struct {
	Limit
	// Value is the percentile's value in the step; Upper its upper 95%
	// bound, Bounded false when the step had too few events for one.
	Value   time.Duration `json:"value_ns"`
	Upper   time.Duration `json:"upper_ns"`
	Bounded bool          `json:"bounded"`
}

// Verdict is whether a step held, and why not.
type Verdict struct {
	Held bool
	// Why lists every rule the step broke, in words.
	Why  []string
	Seen []Seen
	// ErrorPct is errors over events and errors, in percent.
	ErrorPct float64
	// Growth is how much the backlog grew from the first interval to the
	// last.
	Growth int64
	// Narrow says a step that did not hold missed only within its own
	// noise (see Judge): it is measured again before it counts.
	Narrow bool
}

// achievedShare is how close to the offered rate the achieved one must be.
const achievedShare = 0.98

// Judge says whether m holds under slo. The backlog may grow by a few
// events (a twentieth of a second of arrivals, and never fewer than 2)
// between the first reading and the last: Poisson arrivals bunch, and a
// queue that only breathes is not one that grows. For the same reason the
// events still queued at the step's end are not a shortfall of the
// achieved rate: whether the queue grew is the backlog rule's to judge,
// and a step that ends while a burst waits would otherwise fail on the
// burst alone.
//
// A step that did not hold is Narrow when it missed only within its noise:
// every percentile itself within its limit and only its upper bound above,
// the achieved rate short by at most twice what the rule allows, and
// nothing else broken (no growing backlog, no errors over their limit, not
// ended early, not client-bound).
func Judge(m Measure, slo SLO) Verdict {
	v := Verdict{Held: true, Narrow: true}
	fail := func(narrow bool, format string, a ...any) {
		v.Held = false
		v.Narrow = v.Narrow && narrow
		v.Why = append(v.Why, fmt.Sprintf(format, a...))
	}
	if m.ClientBound {
		fail(false, "client-bound")
	}
	if m.Events == 0 {
		fail(false, "no events completed")
	}
	short := func(want float64) bool { return m.Achieved+m.queued() < achievedShare*want }
	narrow := func(want float64) bool { return m.Achieved+m.queued() >= (2*achievedShare-1)*want }
	switch {
	case m.Offered > 0 && m.Due > 0:
		if short(m.Due) {
			fail(narrow(m.Due), "achieved %.1f/s of the %.1f/s that fell due%s", m.Achieved, m.Due, queuedText(m))
		}
	case m.Offered > 0 && short(m.Offered):
		fail(narrow(m.Offered), "achieved %.1f/s of %.1f/s offered%s", m.Achieved, m.Offered, queuedText(m))
	}
	if n := len(m.Backlog); n > 0 {
		// With one reading, the step is measured from an empty backlog.
		v.Growth = m.Backlog[n-1]
		if n > 1 {
			v.Growth -= m.Backlog[0]
		}
		if tol := max(2, int64(m.Offered/20)); v.Growth > tol {
			fail(false, "backlog grew by %d events", v.Growth)
		}
	}
	if m.EndedEarly {
		fail(false, "overloaded: ended early")
	}
	for _, l := range slo.Latency {
		s := Seen{Limit: l}
		if m.Latency != nil {
			s.Value = m.Latency.Percentile(l.Percentile)
			s.Upper, s.Bounded = UpperBound(m.Latency, l.Percentile/100)
		}
		v.Seen = append(v.Seen, s)
		switch {
		case !s.Bounded:
			fail(false, "too few events (%d) to bound p%g", m.Events, l.Percentile)
		case s.Upper > l.Max:
			fail(s.Value <= l.Max, "p%g upper bound %s above %s", l.Percentile, roundDur(s.Upper), l.Max)
		}
	}
	if total := m.Events + m.Errors; total > 0 {
		v.ErrorPct = 100 * float64(m.Errors) / float64(total)
	}
	if limit := slo.ErrorLimit(); v.ErrorPct > limit {
		dflt := ""
		if !slo.ErrorSet {
			dflt = " (the default error limit)"
		}
		fail(false, "errors %.3g%% (%d of %d) above %g%%%s", v.ErrorPct, m.Errors, m.Events+m.Errors, limit, dflt)
	}
	v.Narrow = v.Narrow && !v.Held
	return v
}

func queuedText(m Measure) string {
	if n := len(m.Backlog); n > 0 && m.queued() > 0 {
		return fmt.Sprintf(", %d events still queued", m.Backlog[n-1])
	}
	return ""
}

// Pool is two steps at the same rate judged as one longer step: their
// events, errors and latencies together, their rates over both spans, and
// the backlog of the later (each step starts from an empty queue, and a
// step that is pooled did not grow its own). As in one step, the events
// still queued at each step's end are no shortfall: the earlier step's
// are taken out of what fell due.
func Pool(a, b Measure) Measure {
	p := b
	p.Events, p.Errors = a.Events+b.Events, a.Errors+b.Errors
	p.ClientBound = a.ClientBound || b.ClientBound
	p.EndedEarly = a.EndedEarly || b.EndedEarly
	p.Elapsed = a.Elapsed + b.Elapsed
	p.Span = a.Span + b.Span
	if sa, sb := a.Span.Seconds(), b.Span.Seconds(); sa+sb > 0 {
		p.Achieved = (a.Achieved*sa + b.Achieved*sb) / (sa + sb)
		p.Due = (a.Due*sa - a.queued()*sa + b.Due*sb) / (sa + sb)
	}
	if a.Latency != nil || b.Latency != nil {
		p.Latency = histogram.New()
		for _, h := range []*histogram.Histogram{a.Latency, b.Latency} {
			if h != nil {
				p.Latency.Merge(h)
			}
		}
	}
	return p
}

// Overloaded reports whether a step whose backlog reads backlog at the
// ends of its intervals so far has clearly grown past what the SLO could
// bear: the last reading grew from the one before and is more than the
// arrivals of ten times the SLO's largest limit (and of a tenth of a
// second) at rate. Such a step cannot hold, and running it to its end
// would only lengthen the search and the next step's drain.
func Overloaded(backlog []int64, rate float64, slo SLO) bool {
	n := len(backlog)
	if rate <= 0 || n < 2 || backlog[n-1] <= backlog[n-2] {
		return false
	}
	var worst time.Duration
	for _, l := range slo.Latency {
		worst = max(worst, l.Max)
	}
	wait := max(10*worst, 100*time.Millisecond)
	return float64(backlog[n-1]) > rate*wait.Seconds()
}

func roundDur(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

// aboveOffered is how far above the rate offered (or, where higher, the
// rate that fell due) the achieved rate may be before a step says why.
const aboveOffered = 1.02

// achievedNote explains an achieved rate above the offered one; "" when
// it is not. The achieved rate counts the events completed in the step's
// span, the offered one the arrivals due in it: the difference is events
// that fell due before the span began and were still queued when it did
// (a stall of the target or the host in the warm-up, or the backlog of
// the step before): the schedule caught up on them in the step. Poisson
// arrivals alone may also offer more than the nominal rate in a short
// step, which the rate that fell due shows.
func achievedNote(m Measure) string {
	if m.Offered <= 0 || m.Achieved <= aboveOffered*m.Offered {
		return ""
	}
	due := m.Due
	if due <= 0 {
		due = m.Offered
	}
	if m.Achieved <= aboveOffered*due {
		return fmt.Sprintf("achieved %.1f/s of offered %.1f/s: the Poisson arrivals drawn offered %.1f/s", m.Achieved, m.Offered, due)
	}
	carried := ""
	if secs := m.Span.Seconds(); secs > 0 {
		end := int64(0)
		if n := len(m.Backlog); n > 0 {
			end = m.Backlog[n-1]
		}
		if n := m.Events - int64(math.Round(due*secs)) + end; n > 0 {
			carried = fmt.Sprintf(", about %d events", n)
		}
	}
	return fmt.Sprintf("achieved %.1f/s of offered %.1f/s: the schedule caught up after a stall%s that fell due before the step began (in its warm-up) completed in it",
		m.Achieved, m.Offered, carried)
}
