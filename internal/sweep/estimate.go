package sweep

import (
	"fmt"
	"strconv"
	"time"

	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/segment"
)

// Estimate is the sweep's nominal duration; with repeats: auto, of its
// first round and at most.
func Estimate(p *plan.Plan, sp segment.Split) string {
	per := p.TimeS + p.WarmupS + p.CooldownS
	if p.TimeS == 0 {
		return "an unknown time (steps are limited by events)"
	}
	mmss := func(s int) string { return fmt.Sprintf("%dm%02ds", s/60, s%60) }
	if sp.On {
		// The runners keep to a timetable, margins included; preparing
		// data comes on top, and so does waiting for --start-at.
		m := marginsOf(p)
		tt, err := timetableOf(p, nameKey(p), m)
		if err == nil {
			var d time.Duration
			for _, b := range tt.Blocks {
				d += b.Done
				if b.Prepare != nil {
					d += m.Ready
				}
			}
			s := mmss(int(d.Round(time.Second).Seconds())) + " from --start-at"
			if p.Prepare {
				s += " plus preparing the data"
			}
			return s
		}
	}
	total := per * len(p.Steps())
	if p.AutoRepeats {
		return mmss(total) + " for the first round, " + mmss(per*MostSteps(p)) + " at most"
	}
	return mmss(total)
}

// StepTime is how long a load step is taken to need before any has
// finished: its warm-up, run and cool-down, and a second to connect.
// Both the sweep's time left and a rehearsal's count their steps by it.
func StepTime(p *plan.Plan) time.Duration {
	return time.Duration(p.TimeS+p.WarmupS+p.CooldownS)*time.Second + time.Second
}

// MostSteps is how many load steps the sweep may run: its first round's,
// and with repeats: auto as many more as it adds when every workload and
// thread level stays inconclusive up to max_repeats.
func MostSteps(p *plan.Plan) int {
	n := len(p.Steps())
	if p.AutoRepeats && p.Repeats > 0 {
		return n * p.MaxRepeats / p.Repeats
	}
	return n
}

// PlanLine is the line a sweep starts with: what the plan runs, about how
// long it takes, in what order.
func PlanLine(p *plan.Plan, sp segment.Split) string {
	reps := strconv.Itoa(p.Repeats) + " repeats"
	if p.AutoRepeats {
		reps = fmt.Sprintf("%d repeats, auto: more where inconclusive, up to %d", p.Repeats, p.MaxRepeats)
	}
	return fmt.Sprintf("plan %s: %d steps (%d targets x %d workloads x %d thread levels x %s), about %s, order %s",
		p.Path, len(p.Steps()), len(p.Targets), len(p.Workloads), len(p.Threads), reps, Estimate(p, sp), p.Order)
}
