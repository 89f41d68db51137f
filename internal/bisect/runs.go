package bisect

import (
	"context"
	"time"
)

// roundRuns are the runs of one round.
type roundRuns struct {
	s                 *session
	all, on           []int
	allNames, onNames []string
	more              time.Duration // what one more step of runs takes
	samples, control  []float64
	vs                Comparison
}

// base measures the control as the set's runs are compared with: as it
// is, or with on applied.
func (m *roundRuns) base(ctx context.Context) error {
	if err := m.s.apply(ctx, m.on); err != nil {
		return err
	}
	q, err := m.s.run(ctx, "control", m.onNames)
	if err != nil {
		return err
	}
	if len(m.on) == 0 {
		m.s.base = append(m.s.base, q)
	}
	m.control = append(m.control, q)
	return nil
}

// set measures the control with the round's variables applied.
func (m *roundRuns) set(ctx context.Context) error {
	if err := m.s.apply(ctx, m.all); err != nil {
		return err
	}
	q, err := m.s.run(ctx, "control", m.allNames)
	if err != nil {
		return err
	}
	m.samples = append(m.samples, q)
	return nil
}

// done judges the runs so far and says whether the round is over.
func (m *roundRuns) done() bool {
	s := m.s
	m.vs = s.judge(m.control, m.samples)
	if m.vs.State != Inconclusive || len(m.samples) >= s.cfg.MaxRepeats {
		return true
	}
	return !s.deadline.IsZero() && time.Now().Add(m.more).After(s.deadline)
}

// alternate runs S B S B S: the control's runs between the set's, and the
// control's last run before the round (or one more with on applied).
func (m *roundRuns) alternate(ctx context.Context) error {
	if len(m.on) == 0 {
		m.control = m.s.recentBase(1)
	} else if err := m.base(ctx); err != nil {
		return err
	}
	for {
		if len(m.samples) > 0 {
			if err := m.base(ctx); err != nil {
				return err
			}
		}
		if err := m.set(ctx); err != nil {
			return err
		}
		if len(m.samples) >= m.s.cfg.Repeats && m.done() {
			return nil
		}
	}
}

// blocks runs some of the set's runs, then as many of the control's after
// restarting back, and again: alternating run by run would cost two
// restarts a run. Blocks of half the repeats keep a machine that gets
// busier or quieter part way from deciding the round alone: it moves both
// sides of a pair of blocks alike. One run of the control before the first
// block brackets the set's runs for the same reason. An open answer gets
// more such blocks, up to MaxRepeats runs.
func (m *roundRuns) blocks(ctx context.Context) error {
	if !m.s.restarting(m.on) {
		if err := m.base(ctx); err != nil {
			return err
		}
	}
	for {
		n := min(blockRuns(m.s.cfg.Repeats), m.s.cfg.MaxRepeats-len(m.samples))
		for i := 0; i < n; i++ {
			if err := m.set(ctx); err != nil {
				return err
			}
		}
		for i := 0; i < n; i++ {
			if err := m.base(ctx); err != nil {
				return err
			}
		}
		if len(m.samples) >= m.s.cfg.Repeats && m.done() {
			return nil
		}
	}
}

// blockRuns is how many runs of a side a restart round makes in a row.
func blockRuns(repeats int) int { return max(2, repeats/2) }
