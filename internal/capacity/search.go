package capacity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// Stepper runs one step: the load at rate events per second with Poisson
// arrivals (0: closed loop, as fast as the threads go) for the step's
// time, seconds. It calls watch with the backlog after each interval and ends the
// step early, with Measure.EndedEarly set, when watch returns true. What
// was measured before ctx ended is returned with ctx's error.
type Stepper interface {
	Step(ctx context.Context, rate float64, seconds int, watch func(backlog []int64) bool) (Measure, error)
}

// Options say how to search.
type Options struct {
	SLO SLO
	// Bracket is the relative width at which bisection stops: 0.02 stops
	// when the failing rate is within 2% of the holding one.
	Bracket float64
	// Repeats is how many more times the answer is run to confirm it.
	Repeats int
	// StepTime is how long a step measures; Warmup how long it runs
	// before.
	StepTime, Warmup time.Duration
	// Budget caps the search's time; 0 is no cap.
	Budget time.Duration
	// MinShare is the lowest rate tried, as a share of the probe's peak.
	MinShare float64
	// Now is the clock; Progress, when set, is told where the search is.
	Now      func() time.Time
	Progress func(Progress)
}

// Progress is where a search stands, for a progress line.
type Progress struct {
	Step     int
	Phase    string
	Rate     float64
	Low      float64
	High     float64
	Left     time.Duration // estimated
	LeftKnow bool
}

// Outcomes of a search.
const (
	Found       = "found"
	ClientBound = "client-bound"
	NotMet      = "slo-not-met"
	Budget      = "budget"
	Interrupted = "interrupted"
	Unconfirmed = "unconfirmed"
	// Inconclusive is a search whose steps at one rate disagreed by far
	// more than the bracket: the host's latency, not the target's
	// capacity, decided them (see Noisy).
	Inconclusive = "inconclusive"
)

// maxRounds caps the bisections restarted after a failed confirmation.
const maxRounds = 3

// ErrClientBound ends a search whose client was the limit.
var ErrClientBound = errors.New("client-bound")

// Step is one step of a search as reported.
type Step struct {
	N           int      `json:"n"`
	Phase       string   `json:"phase"` // probe, search, confirm, or again (pooled with the narrow miss before it)
	Offered     float64  `json:"offered"`
	Achieved    float64  `json:"achieved"`
	P50MS       float64  `json:"p50_ms"`
	P95MS       float64  `json:"p95_ms"`
	P99MS       float64  `json:"p99_ms"`
	Seen        []Seen   `json:"slo"`
	Events      int64    `json:"events"`
	Errors      int64    `json:"errors"`
	ErrorPct    float64  `json:"error_pct"`
	Growth      int64    `json:"backlog_growth"`
	ClientBound bool     `json:"client_bound"`
	EndedEarly  bool     `json:"ended_early"`
	Held        bool     `json:"held"`
	Why         []string `json:"why,omitempty"`
	// Note explains a figure that would otherwise mislead (an achieved
	// rate above the offered one); "" when none does.
	Note     string  `json:"note,omitempty"`
	ElapsedS float64 `json:"elapsed_s"`
}

// Result is a search's answer for one target.
type Result struct {
	Target string `json:"target"`
	// URL is the target's, without its password; empty where a search
	// was not given one.
	URL string `json:"url,omitempty"`
	// Search numbers the target's searches from 1 (--searches).
	Search int    `json:"search"`
	SLO    string `json:"slo"`
	// Peak is the closed-loop probe's achieved rate.
	Peak float64 `json:"peak"`
	// Capacity is the highest rate that held and was confirmed (or, when
	// the search ended early, held once); 0 when none held. Low and High
	// bracket it: Low held, High failed (0 when no step above failed).
	Capacity  float64 `json:"capacity"`
	Low       float64 `json:"low"`
	High      float64 `json:"high"`
	Confirmed int     `json:"confirmed"` // repeats at Capacity that held
	Repeats   int     `json:"repeats"`   // repeats run at Capacity
	Outcome   string  `json:"outcome"`
	Message   string  `json:"message"`
	Steps     []Step  `json:"steps"`
}

// search is one target's search in progress.
type search struct {
	st      Stepper
	o       Options
	res     *Result
	started time.Time
	failed  bool // some step failed
}

// Search finds target's capacity under o.SLO with st. It returns the
// result in every case; err is set only when the tool failed (a step's
// error, not a step that did not hold).
func Search(ctx context.Context, target string, st Stepper, o Options) (*Result, error) {
	if o.Bracket <= 0 {
		o.Bracket = 0.02
	}
	if o.MinShare <= 0 {
		o.MinShare = 1.0 / 64
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &search{st: st, o: o, res: &Result{Target: target, SLO: o.SLO.String()}, started: o.Now()}
	err := s.run(ctx)
	r := s.res
	switch {
	case errors.Is(err, ErrClientBound):
		r.Outcome = ClientBound
		r.Message = fmt.Sprintf("client-bound at step %d: the client, not the server, set the pace; no capacity is reported (give the client more CPU or fewer threads, or run it on another host)", len(r.Steps))
		r.Capacity = 0
		return r, nil
	case errors.Is(err, errBudget):
		r.Outcome = Budget
		r.Message = fmt.Sprintf("--budget spent after %d steps: the capacity is the last rate that held, unconfirmed", len(r.Steps))
		r.Capacity = r.Low
		return r, nil
	case ctx.Err() != nil:
		r.Outcome, r.Message, r.Capacity = Interrupted, "interrupted: the steps above are what ran", r.Low
		return r, nil
	case err != nil:
		return r, err
	}
	if why, ok := Noisy(r.Steps, o.SLO, o.Bracket); ok {
		r.Outcome, r.Capacity = Inconclusive, 0
		r.Message = "inconclusive: " + why + ": the host's latency at one rate varied too much to place a capacity; no capacity is reported (search on a quieter host, or with a longer --step-time)"
	}
	return r, nil
}

// Noisy steps: at least noisyRepeats steps at one rate, some of which
// held and some not, whose measured percentile ranged over at least
// noisySpread times its lowest.
const (
	noisyRepeats = 3
	noisySpread  = 4.0
)

// Noisy says whether steps ran one rate at least noisyRepeats times with
// verdicts that disagreed and a percentile of the SLO that ranged over a
// factor of noisySpread or more, and how: "p99 at 490.0/s ranged
// 2.65-47.9 ms over 5 steps (2 held)". Such a rate is not near a
// capacity that the bisection could place: a target's latency at its
// ceiling rises with the rate, steadily, while isolated stalls of the host
// (another tenant, a hypervisor) turn steps at one rate into failures or
// not by chance, and the bisection would then answer a precise-looking
// rate made of that noise. Steps are at one rate when within a quarter of
// the bracket of each other, so that the two rates the bisection ends
// between are not; a step measured again (phase again) pools the one
// before it and is left out; the probe has no rate.
func Noisy(steps []Step, slo SLO, bracket float64) (string, bool) {
	tol := bracket / 4
	for i, a := range steps {
		if a.Offered <= 0 || a.Phase == "again" {
			continue
		}
		var group []Step
		for _, b := range steps[i:] {
			if b.Offered > 0 && b.Phase != "again" && math.Abs(b.Offered/a.Offered-1) <= tol {
				group = append(group, b)
			}
		}
		held := 0
		for _, b := range group {
			if b.Held {
				held++
			}
		}
		if len(group) < noisyRepeats || held == 0 || held == len(group) {
			continue
		}
		for k, l := range slo.Latency {
			lo, hi := time.Duration(math.MaxInt64), time.Duration(0)
			for _, b := range group {
				if k < len(b.Seen) {
					lo, hi = min(lo, b.Seen[k].Value), max(hi, b.Seen[k].Value)
				}
			}
			if hi > 0 && lo > 0 && float64(hi) >= noisySpread*float64(lo) {
				return fmt.Sprintf("p%g at %.1f/s ranged %.3g-%.3g ms over %d steps (%d held)",
					l.Percentile, a.Offered, ms(lo), ms(hi), len(group), held), true
			}
		}
	}
	return "", false
}

var errBudget = errors.New("budget spent")

// run probes, brackets, bisects and confirms.
func (s *search) run(ctx context.Context) error {
	probe, err := s.step(ctx, "probe", 0)
	if err != nil {
		return err
	}
	s.res.Peak = probe.Achieved
	if probe.Achieved <= 0 {
		return fmt.Errorf("probe: no events completed in closed loop")
	}
	lo, hi, err := s.bracket(ctx, probe.Achieved)
	if err != nil || lo == 0 {
		return err
	}
	for round := 1; ; round++ {
		for hi > 0 && (hi-lo)/lo > s.o.Bracket {
			mid := math.Sqrt(lo * hi)
			held, err := s.try(ctx, "search", mid)
			if err != nil {
				return err
			}
			if held {
				lo = mid
			} else {
				hi = mid
			}
			s.res.Low, s.res.High = lo, hi
		}
		ok, err := s.confirm(ctx, lo)
		if err != nil || ok {
			return err
		}
		if round == maxRounds {
			s.res.Capacity = 0 // none was confirmed
			s.res.Outcome = Unconfirmed
			s.res.Message = fmt.Sprintf("no rate held on every repeat after %d rounds: the last, %.1f/s, held %d of %d repeats; the target's capacity moves more than the bracket",
				round, lo, s.res.Confirmed, s.res.Repeats)
			if lo, hi, ok := heldRange(s.res.Steps); ok {
				s.res.Message += fmt.Sprintf(" (the SLO held at %s in single steps but not on every repeat)", rangeText(lo, hi))
			}
			return nil
		}
		// lo did not hold again: the answer lies below it.
		hi, lo = lo, lo*(1-2*s.o.Bracket)
		s.res.Low, s.res.High = lo, hi
	}
}

// bracket finds a rate that holds and, where there is one, a rate above
// it that fails, starting from the probe's peak: up by a quarter while
// steps hold (an open loop may pass the closed loop's peak a little), down
// by halves while they fail. When even the lowest rate fails it returns
// lo 0 and sets the outcome.
func (s *search) bracket(ctx context.Context, peak float64) (lo, hi float64, err error) {
	held, err := s.try(ctx, "search", peak)
	if err != nil {
		return 0, 0, err
	}
	if held {
		lo = peak
		for range 4 {
			r := lo * 1.25
			if held, err = s.try(ctx, "search", r); err != nil {
				return 0, 0, err
			}
			if !held {
				hi = r
				break
			}
			lo = r
		}
		s.res.Low, s.res.High = lo, hi
		return lo, hi, nil
	}
	hi = peak
	for r := peak / 2; r >= s.lowest(peak); r /= 2 {
		if held, err = s.try(ctx, "search", r); err != nil {
			return 0, 0, err
		}
		if held {
			s.res.Low, s.res.High = r, hi
			return r, hi, nil
		}
		hi = r
	}
	last := s.res.Steps[len(s.res.Steps)-1]
	s.res.Outcome = NotMet
	s.res.High = hi
	s.res.Message = fmt.Sprintf("the SLO %s is not met even at %.1f/s, the lowest rate tried: %s", s.res.SLO, last.Offered, seenText(last))
	return 0, 0, nil
}

// confirm runs rate o.Repeats more times; it holds only if every repeat
// does.
func (s *search) confirm(ctx context.Context, rate float64) (bool, error) {
	s.res.Capacity, s.res.Repeats, s.res.Confirmed = rate, 0, 0
	for range s.o.Repeats {
		held, err := s.try(ctx, "confirm", rate)
		if err != nil {
			return false, err
		}
		s.res.Repeats++
		if !held {
			return false, nil
		}
		s.res.Confirmed++
	}
	s.res.Outcome = Found
	s.res.Message = fmt.Sprintf("capacity %.1f/s under %s, between %.1f/s (held) and %s, confirmed by %d of %d repeats",
		rate, s.res.SLO, s.res.Low, highText(s.res.High), s.res.Confirmed, s.res.Repeats)
	return true, nil
}

// try runs a step at rate and says whether it held.
func (s *search) try(ctx context.Context, phase string, rate float64) (bool, error) {
	st, err := s.step(ctx, phase, rate)
	if err != nil {
		return false, err
	}
	if !st.Held {
		s.failed = true
	}
	return st.Held, nil
}

// step runs one step, records it and reports progress. A client-bound
// step ends the search. A step that missed narrowly (Verdict.Narrow) is
// not yet a verdict on its rate: near the ceiling one short step is a
// coin toss, where a burst of a few events decides the percentile's bound
// and the queue at the step's end. It is recorded, run
// again, and the rate is judged on both together (Pool), with twice the
// events: the same care the answer gets from its repeats, given to a
// rate before the bracket's top moves down on it. The scan of the tests
// judges its steps by this same rule.
func (s *search) step(ctx context.Context, phase string, rate float64) (Step, error) {
	m, err := s.measure(ctx, phase, rate)
	if err != nil {
		return Step{}, err
	}
	v := Judge(m, s.o.SLO)
	if v.Narrow && rate > 0 {
		first := s.record(phase, rate, m, v)
		s.res.Steps[len(s.res.Steps)-1].Why = append(first.Why, "a narrow miss: measured again and judged with the next step")
		again, err := s.measure(ctx, "again", rate)
		if err != nil {
			return Step{}, err
		}
		m = Pool(m, again)
		v = Judge(m, s.o.SLO)
		phase = "again"
	}
	st := s.record(phase, rate, m, v)
	if m.ClientBound {
		return st, ErrClientBound
	}
	return st, nil
}

// measure runs one step at rate, within the budget.
func (s *search) measure(ctx context.Context, phase string, rate float64) (Measure, error) {
	secs := s.seconds(rate)
	if s.o.Budget > 0 && s.o.Now().Sub(s.started)+s.o.Warmup+time.Duration(secs)*time.Second > s.o.Budget {
		return Measure{}, errBudget
	}
	s.progress(phase, rate)
	watch := func(b []int64) bool { return Overloaded(b, rate, s.o.SLO) }
	return s.st.Step(ctx, rate, secs, watch)
}

// record adds a step judged v to the result.
func (s *search) record(phase string, rate float64, m Measure, v Verdict) Step {
	st := Step{N: len(s.res.Steps) + 1, Phase: phase, Offered: rate, Achieved: m.Achieved, Events: m.Events, Errors: m.Errors,
		ErrorPct: v.ErrorPct, Growth: v.Growth, ClientBound: m.ClientBound, EndedEarly: m.EndedEarly,
		Held: v.Held && rate > 0, Why: v.Why, Seen: v.Seen, Note: achievedNote(m), ElapsedS: m.Elapsed.Seconds()}
	if m.Latency != nil {
		st.P50MS, st.P95MS, st.P99MS = ms(m.Latency.Percentile(50)), ms(m.Latency.Percentile(95)), ms(m.Latency.Percentile(99))
	}
	if rate == 0 && !m.ClientBound {
		st.Why = nil // the probe measures the peak; it is not judged
	}
	s.res.Steps = append(s.res.Steps, st)
	return st
}

// progress reports the step about to run and an estimate of the time
// left: the bisection steps the bracket still needs and the repeats.
func (s *search) progress(phase string, rate float64) {
	if s.o.Progress == nil {
		return
	}
	p := Progress{Step: len(s.res.Steps) + 1, Phase: phase, Rate: rate, Low: s.res.Low, High: s.res.High}
	if p.Low > 0 && p.High > 0 {
		left := math.Max(0, math.Ceil(math.Log2(math.Log(p.High/p.Low)/math.Log(1+s.o.Bracket))))
		p.Left, p.LeftKnow = time.Duration(left+float64(s.o.Repeats))*(s.o.StepTime+s.o.Warmup), true
	}
	s.o.Progress(p)
}

// maxStretch caps how many times its time a step at a low rate may run
// to gather the events its percentiles need; rates lower than those it
// allows are not tried (see lowest).
const maxStretch = 8

// seconds is how long a step at rate measures: the step time, or longer at
// a low rate, so that the step has the events an upper bound of its
// highest percentile needs (MinEvents), up to maxStretch step times.
func (s *search) seconds(rate float64) int {
	secs := max(1, int(math.Round(s.o.StepTime.Seconds())))
	if rate <= 0 {
		return secs
	}
	need := int(math.Ceil(1.2 * float64(MinEvents(s.o.SLO)) / rate))
	return min(max(secs, need), maxStretch*secs)
}

// lowest is the lowest rate tried: MinShare of the peak, and no lower than
// a step stretched maxStretch times can gather its percentiles' events at.
func (s *search) lowest(peak float64) float64 {
	secs := max(1, math.Round(s.o.StepTime.Seconds()))
	return max(peak*s.o.MinShare, 1.2*float64(MinEvents(s.o.SLO))/(maxStretch*secs))
}

func seenText(st Step) string {
	out := ""
	for i, v := range st.Seen {
		if i > 0 {
			out += ", "
		}
		bound := "too few events for an upper bound"
		if v.Bounded {
			bound = "upper bound " + roundDur(v.Upper).String()
		}
		out += fmt.Sprintf("p%g %s (%s, limit %s)", v.Percentile, roundDur(v.Value), bound, v.Max)
	}
	if out == "" {
		out = "no latency"
	}
	return out
}

func highText(h float64) string {
	if h == 0 {
		return "no failing rate found above it"
	}
	return fmt.Sprintf("%.1f/s (failed)", h)
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

// heldRange is the lowest and highest offered rate of the steps that
// held; false when none did.
func heldRange(steps []Step) (lo, hi float64, ok bool) {
	for _, st := range steps {
		if !st.Held || st.Offered <= 0 {
			continue
		}
		if !ok || st.Offered < lo {
			lo = st.Offered
		}
		hi, ok = max(hi, st.Offered), true
	}
	return lo, hi, ok
}

// rangeText is a range of rates: 1947.0-3356.0/s, or one rate.
func rangeText(lo, hi float64) string {
	if lo == hi {
		return fmt.Sprintf("%.1f/s", lo)
	}
	return fmt.Sprintf("%.1f-%.1f/s", lo, hi)
}
