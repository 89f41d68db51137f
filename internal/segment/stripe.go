package segment

import (
	"math/big"

	"github.com/shakedown/shakedown/internal/usage"
)

// Stripe spreads the ticks of a global schedule (the intended start times
// of an arrival rate) over the segments of a sequence. The ticks repeat in
// periods of Period ticks, the least common denominator of the sequence's
// boundaries; in every period segment k owns exactly Period*(To-From) ticks,
// spread as evenly as whole ticks allow. Every runner ticks on the global
// period and fires only the ticks it owns, so together they fire each tick
// of the one-process schedule exactly once.
type Stripe struct {
	owner []int32 // owner[t] is the segment that owns tick t of a period
}

// Stripe builds q's striping. It is the same in every runner given q.
func (q Sequence) Stripe() (*Stripe, error) {
	d := big.NewInt(1)
	for _, f := range q {
		den := big.NewInt(f.Den)
		g := new(big.Int).GCD(nil, nil, d, den)
		d.Mul(d, den.Quo(den, g))
		if d.Cmp(big.NewInt(maxDen)) > 0 {
			return nil, usage.Errorf("--segment-sequence %s: its boundaries' common denominator is above %d; use simpler fractions", q, maxDen)
		}
	}
	period := d.Int64()
	slots := make([]int64, q.Len())
	for k, s := range q.Segments() {
		// period*(To-From) is whole: period is a multiple of both denominators.
		slots[k] = period*s.To.Num/s.To.Den - period*s.From.Num/s.From.Den
	}
	// Each tick goes to the segment furthest behind its even pace: after
	// t+1 ticks segment k should have (t+1)*slots[k]/period. Ties go to
	// the lowest index, so every runner builds the same table.
	owner := make([]int32, period)
	given := make([]int64, q.Len())
	for t := int64(0); t < period; t++ {
		best, bestLag := -1, int64(0)
		for k := range slots {
			if given[k] == slots[k] {
				continue
			}
			// lag*period, to stay in integers.
			lag := (t+1)*slots[k] - given[k]*period
			if best < 0 || lag > bestLag {
				best, bestLag = k, lag
			}
		}
		owner[t] = int32(best)
		given[best]++
	}
	return &Stripe{owner: owner}, nil
}

// Period is the number of ticks after which the pattern repeats.
func (st *Stripe) Period() int64 { return int64(len(st.owner)) }

// Owner is the index (from 0) of the segment that fires tick t (t >= 0).
func (st *Stripe) Owner(t int64) int { return int(st.owner[t%int64(len(st.owner))]) }
