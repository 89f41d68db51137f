package stall

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// minHistory is how many samples a relative trigger waits for before the
// median it compares with means anything; maxHistory bounds the samples
// the median is taken over (the latest hour at one a second), so that a
// long run costs no more per sample than an hour does.
const (
	minHistory = 5
	maxHistory = 3600
)

// Detector decides, sample by sample, which triggers hold. It is not safe
// for concurrent use.
type Detector struct {
	triggers []Trigger
	interval time.Duration
	streak   []int
	qps      []float64 // the latest qps seen, sorted, for the median
	order    []float64 // the same, oldest first
}

// NewDetector returns a detector over samples taken every interval.
func NewDetector(triggers []Trigger, interval time.Duration) *Detector {
	if interval <= 0 {
		interval = time.Second
	}
	return &Detector{triggers: triggers, interval: interval, streak: make([]int, len(triggers))}
}

// need is how many consecutive samples trigger i must hold for.
func (d *Detector) need(i int) int {
	n := int(math.Ceil(float64(d.triggers[i].For) / float64(d.interval)))
	return max(n, 1)
}

// Observe takes one sample's figures (keys "threads_running", "qps" and
// "pNN" in milliseconds; a missing key breaks that trigger's streak) and
// returns why each trigger that now holds fires, or nil.
func (d *Detector) Observe(v map[string]float64) []string {
	var fired []string
	median := d.median()
	for i, t := range d.triggers {
		x, ok := v[t.Metric]
		limit := t.Limit
		if t.Relative {
			ok = ok && len(d.qps) >= minHistory && median > 0
			limit = t.Limit * median
		}
		hold := ok && ((t.Less && x < limit) || (!t.Less && x > limit))
		if !hold {
			d.streak[i] = 0
			continue
		}
		d.streak[i]++
		if d.streak[i] < d.need(i) {
			continue
		}
		why := fmt.Sprintf("%s: %s %.4g", t.Text, t.Metric, x)
		if t.Relative {
			why += fmt.Sprintf(" against a median of %.4g so far", median)
		}
		if n := d.streak[i]; n > 1 {
			why += fmt.Sprintf(", %d samples in a row", n)
		}
		fired = append(fired, why)
	}
	if q, ok := v["qps"]; ok {
		d.remember(q)
	}
	return fired
}

// Reset starts every streak again (after a capture, so that a stall that
// lasts is not captured on each sample).
func (d *Detector) Reset() {
	for i := range d.streak {
		d.streak[i] = 0
	}
}

// remember adds q to the history, dropping the oldest past maxHistory.
func (d *Detector) remember(q float64) {
	if len(d.order) == maxHistory {
		old := d.order[0]
		d.order = append(d.order[:0], d.order[1:]...)
		at := sort.SearchFloat64s(d.qps, old)
		d.qps = append(d.qps[:at], d.qps[at+1:]...)
	}
	d.order = append(d.order, q)
	at := sort.SearchFloat64s(d.qps, q)
	d.qps = append(d.qps, 0)
	copy(d.qps[at+1:], d.qps[at:])
	d.qps[at] = q
}

func (d *Detector) median() float64 {
	n := len(d.qps)
	switch {
	case n == 0:
		return 0
	case n%2 == 1:
		return d.qps[n/2]
	}
	return (d.qps[n/2-1] + d.qps[n/2]) / 2
}
