package report

import (
	"github.com/shakedown/shakedown/internal/stats"
	"github.com/shakedown/shakedown/internal/store"
)

// Wrong is the state of every figure of a comparison in which a run of
// either side lost updates (its data check failed): a server that merges
// concurrent updates of one row instead of serialising them does less
// work per transaction, so its throughput reads as faster than it is.
// No verdict is given; the cell says "wrong: lost updates".
const Wrong stats.State = "wrong"

// ReasonLostUpdates is the reason beside Wrong.
const ReasonLostUpdates = "lost updates"

// lostUpdates reports whether run's data check found lost updates. Such a
// run is failed, and so left out of the figures, but it still decides its
// comparison.
func lostUpdates(run store.Run) bool {
	return run.Result != nil && !run.Result.DataCheck.OK()
}

// wrong makes every figure of c Wrong, without ratio or interval: one side
// did not do the work the other did.
func (c *Comparison) wrong() {
	for _, f := range []*stats.Comparison{&c.QPS, &c.TPS, &c.P95, &c.P99} {
		f.State, f.Reason, f.Needed = Wrong, ReasonLostUpdates, 0
		f.Ratio, f.Interval = 0, false
	}
	c.Ratio, c.Verdict = 0, Wrong
}
