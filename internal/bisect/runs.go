package bisect

import (
	"context"
	"time"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/stats"
)

// roundRuns are the runs of one round.
type roundRuns struct {
	s                 *session
	all, on           []int
	allNames, onNames []string
	more              time.Duration // what one more step of runs takes
	// fresh makes the next run restart the control first, even with the
	// same settings in place.
	fresh            bool
	samples, control []float64
	vs               result.Effect
}

// base measures the control as the set's runs are compared with: as it
// is, or with on applied.
func (m *roundRuns) base(ctx context.Context) error {
	q, err := m.measure(ctx, m.on, m.onNames)
	if err != nil {
		return err
	}
	if len(m.on) == 0 {
		m.s.base = append(m.s.base, q)
		m.s.lastBase = true
	}
	m.control = append(m.control, q)
	return nil
}

// set measures the control with the round's variables applied.
func (m *roundRuns) set(ctx context.Context) error {
	q, err := m.measure(ctx, m.all, m.allNames)
	if err != nil {
		return err
	}
	m.samples = append(m.samples, q)
	return nil
}

// measure applies set (whose names are names) to the control, restarting
// it if the round asked for a fresh start, and runs the workload on it once.
func (m *roundRuns) measure(ctx context.Context, set []int, names []string) (float64, error) {
	if err := m.s.apply(ctx, set, m.fresh); err != nil {
		return 0, err
	}
	m.fresh = false
	return m.s.run(ctx, "control", names)
}

// done judges the pairs so far and says whether the round is over.
func (m *roundRuns) done() bool {
	s := m.s
	m.vs = comparePaired(m.control, m.samples, s.threshold)
	if m.vs.State != stats.Inconclusive || len(m.samples) >= s.maxPairs() {
		return true
	}
	return !s.deadline.IsZero() && time.Now().Add(m.more).After(s.deadline)
}

// alternate makes pairs of runs, the set's and the control's, one right
// after the other, the order inside a pair alternating (B S, S B, B S...):
// a load that grows or falls steadily favours neither side over the round.
// The control's last run opens the first pair when it is the last run
// made and the control's as it is.
func (m *roundRuns) alternate(ctx context.Context) error {
	reuse := len(m.on) == 0 && m.s.lastBase && len(m.s.base) > 0
	for {
		if len(m.samples)%2 == 0 {
			if reuse {
				m.control = append(m.control, m.s.base[len(m.s.base)-1])
				reuse = false
			} else if err := m.base(ctx); err != nil {
				return err
			}
			if err := m.set(ctx); err != nil {
				return err
			}
		} else {
			if err := m.set(ctx); err != nil {
				return err
			}
			if err := m.base(ctx); err != nil {
				return err
			}
		}
		if len(m.samples) >= m.s.pairs() && m.done() {
			return nil
		}
	}
}

// blocks makes the pairs of a round whose set needs a restart: a few of
// the set's runs in a row, then as many of the control's (alternating run
// by run would cost two restarts a pair), the i-th run of one block paired
// with the i-th of the other. Every block starts with a restart, also when
// its side's settings are in place already, and one run to warm up: the
// two runs of a pair are then as far from a restart, so that a control
// still cold from it slows both alike. Pairing a block just restarted with
// one that ran on from the block before left restart rounds open on a busy
// machine. The blocks' order alternates (S B, B S, ...), so that a steady
// drift favours neither side; an open answer gets more such blocks, up to
// the most pairs a round makes.
func (m *roundRuns) blocks(ctx context.Context) error {
	setFirst := !m.s.restarting(m.all)
	for {
		n := min(blockRuns, m.s.maxPairs()-len(m.samples))
		first, second := m.base, m.set
		if setFirst {
			first, second = m.set, m.base
		}
		for _, side := range []func(context.Context) error{first, second} {
			m.fresh = true
			for i := 0; i < n; i++ {
				if err := side(ctx); err != nil {
					return err
				}
			}
		}
		setFirst = !setFirst
		if len(m.samples) >= m.s.pairs() && m.done() {
			return nil
		}
	}
}

// blockRuns is how many runs of a side a restart round makes in a row:
// shorter blocks follow a drifting machine more closely, and each costs a
// restart and a run to warm up.
const blockRuns = 3
