// When the runners of one split sweep start, without a coordinator: a
// common start time (--start-at), a bounded wait for it, and the timetable
// of the sweep that every runner computes alike from the plan, so that each
// starts step k at the same wall time.
//
// A timetable is made of blocks. A block begins at an anchor and lists its
// steps as offsets from it. The first block's anchor is the start time. A
// step whose data must be made first (the plan's prepare) begins a new
// block: runner 1 (the first segment) prepares, then publishes a "data
// ready" mark carrying the next anchor (see resumeAt); the other runners
// wait for that mark and take its anchor. Prepare takes as long as it
// takes, and the runners still start every step together.

package sweep

import (
	"context"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/usage"
)

// margins are the safety margins of a timetable. Every runner of one load
// must use the same.
type margins struct {
	// Connect is the time before a step's load starts in which the runners
	// open their connections, so that a runner slower to connect does not
	// start late.
	Connect time.Duration
	// Settle is the least time between a step's end and the next step's
	// connections: time to finish in-flight statements, store the result
	// and close. The plan's cooldown counts towards it.
	Settle time.Duration
	// Ready is the time between runner 1 publishing a data-ready mark and
	// the anchor it announces: long enough for every runner to see the
	// mark (they look once a second).
	Ready time.Duration
}

// defaultMargins are the margins unless told otherwise.
var defaultMargins = margins{Connect: 5 * time.Second, Settle: 2 * time.Second, Ready: 5 * time.Second}

// marginsOf is p's margins: those its split: names, the defaults for the
// rest.
func marginsOf(p *plan.Plan) margins {
	m := defaultMargins
	for _, o := range []struct {
		s  int
		to *time.Duration
	}{{p.Split.ConnectS, &m.Connect}, {p.Split.SettleS, &m.Settle}, {p.Split.ReadyS, &m.Ready}} {
		if o.s > 0 {
			*o.to = time.Duration(o.s) * time.Second
		}
	}
	return m
}

// slot is when one step runs, as offsets from its block's anchor.
type slot struct {
	Step    plan.Step
	Connect time.Duration // open the connections
	Load    time.Duration // the load starts (warm-up, if any, first)
	Measure time.Duration // measuring starts
	End     time.Duration // measuring ends
}

// block is a run of steps timed from one anchor.
type block struct {
	// Prepare, when set, is the step whose data runner 1 makes before the
	// block; the block's anchor is then the one its data-ready mark
	// announces. Only the first block can have none: its anchor is the
	// start time.
	Prepare *plan.Step
	Slots   []slot
	// Done is when the block's last step has ended and settled: runner 1
	// may prepare the next data, or clean up, from then on.
	Done time.Duration
}

// timetable is a sweep's schedule.
type timetable struct {
	Blocks []block
	// Cleanup says runner 1 drops the data after the last block's Done.
	Cleanup bool
}

// dataKeyFunc says which data a workload needs: steps whose workloads have
// the same key on the same target share their data.
type dataKeyFunc func(*plan.Workload) string

// nameKey is the simplest dataKeyFunc: the workload's name and prepare
// options.
func nameKey(p *plan.Plan) dataKeyFunc {
	return func(w *plan.Workload) string {
		return strings.Join(p.PrepareArgs(w), " ")
	}
}

// timetableOf computes p's timetable. key must say which steps share data
// the way the sweep itself decides when to prepare, so that the blocks
// begin where runner 1 prepares. A plan whose steps have no fixed length (events
// without time) has no timetable.
func timetableOf(p *plan.Plan, key dataKeyFunc, m margins) (*timetable, error) {
	if p.TimeS <= 0 {
		return nil, usage.Errorf("%s: a sweep split over runners needs a time per step (time: N), so every runner can start each step at the same moment; events alone leave a step's end unknown", p.Path)
	}
	if m.Connect < 0 || m.Settle < 0 || m.Ready < 0 {
		return nil, usage.Errorf("schedule margins must not be negative (got connect %s, settle %s, ready %s)", m.Connect, m.Settle, m.Ready)
	}
	gap := max(time.Duration(p.CooldownS)*time.Second, m.Settle)
	warm := time.Duration(p.WarmupS) * time.Second
	length := time.Duration(p.TimeS) * time.Second

	tt := &timetable{Cleanup: p.Prepare && p.Cleanup}
	data := map[string]string{} // target name -> data key on it
	var cur *block
	var at time.Duration
	for _, st := range p.Steps() {
		if p.Prepare {
			k := key(st.Workload)
			if data[st.Target.Name] != k {
				data[st.Target.Name] = k
				step := st
				tt.Blocks = append(tt.Blocks, block{Prepare: &step})
				cur, at = &tt.Blocks[len(tt.Blocks)-1], 0
			}
		}
		if cur == nil {
			tt.Blocks = append(tt.Blocks, block{})
			cur, at = &tt.Blocks[0], 0
		}
		s := slot{Step: st, Connect: at, Load: at + m.Connect}
		s.Measure = s.Load + warm
		s.End = s.Measure + length
		cur.Slots = append(cur.Slots, s)
		cur.Done = s.End + m.Settle
		at = s.End + gap
	}
	return tt, nil
}

// CheckTimetable says whether p has a timetable, which a split sweep
// needs: steps of a fixed length, so that every runner can start each step
// at the same moment.
func CheckTimetable(p *plan.Plan) error {
	_, err := timetableOf(p, func(*plan.Workload) string { return "" }, marginsOf(p))
	return err
}

// slotTimes are a slot's wall times from its block's anchor.
type slotTimes struct {
	Connect, Load, Measure, End time.Time
}

// At is s at anchor.
func (s slot) At(anchor time.Time) slotTimes {
	return slotTimes{Connect: anchor.Add(s.Connect), Load: anchor.Add(s.Load), Measure: anchor.Add(s.Measure), End: anchor.Add(s.End)}
}

// resumeAt is the anchor runner 1 announces in a data-ready mark written at
// ready, the end of a prepare: ready plus the Ready margin, up to the next
// whole second so that it reads the same in every log.
func resumeAt(ready time.Time, m margins) time.Time {
	t := ready.Add(m.Ready)
	if r := t.Truncate(time.Second); !r.Equal(t) {
		t = r.Add(time.Second)
	}
	return t
}

// waitClock is the time source of a wait; tests give a fake one.
type waitClock interface {
	Now() time.Time
	// After sends once d has passed.
	After(d time.Duration) <-chan time.Time
}

// systemClock is the system clock.
type systemClock struct{}

// Now is time.Now.
func (systemClock) Now() time.Time { return time.Now() }

// After is time.After.
func (systemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// waitUntil returns at t, or at once when t has passed, or with ctx's
// error when ctx ends first. A clock that wakes early (a stepped system
// clock) is waited on again.
func waitUntil(ctx context.Context, clk waitClock, t time.Time) error {
	for {
		d := t.Sub(clk.Now())
		if d <= 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-clk.After(d):
		}
	}
}

// lateBy is how far past t now is, beyond tolerance (0 when not late). A
// runner that reaches a start time late by more than a margin does not
// start that step: its load would not overlap the others'.
func lateBy(now, t time.Time, tolerance time.Duration) time.Duration {
	if d := now.Sub(t); d > tolerance {
		return d
	}
	return 0
}
