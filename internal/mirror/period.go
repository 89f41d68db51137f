package mirror

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/shakedown/shakedown/internal/stats"
)

// A canary runs for weeks, so its figures are cut into snapshot periods
// (every Options.Snapshot, at Rotate, and at the end): each period's
// figures are its own, counters as the difference from the period before
// and latency from samples taken in the period alone, so that a history
// shows when a class began to differ or to slow down.

// Period is one snapshot period's figures. Figures are the period's own;
// Total are the counters since the mirror started (their classes left
// out), for what a canary has seen so far.
type Period struct {
	N       int       `json:"period"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	Why     string    `json:"why"` // "every 10m0s", "rotate", "end"
	Figures *Summary  `json:"figures"`
	Total   *Summary  `json:"total"`
	// ClassesLeftOut counts the classes of the period not in Figures
	// (past maxPeriodClasses, the fewest statements first).
	ClassesLeftOut int `json:"classes_left_out,omitempty"`
}

// maxPeriodClasses bounds the classes a period keeps: those that differ
// first, then the most statements.
const maxPeriodClasses = 500

// maxRecentPeriods bounds the periods the live page shows.
const maxRecentPeriods = 48

// periods cuts the mirror's figures into snapshot periods. Its methods
// are safe for concurrent use.
type periods struct {
	mu     sync.Mutex
	n      int
	start  time.Time
	prev   *Summary // the cumulative figures at the last period's end
	recent []Period // the last maxRecentPeriods, their classes left out

	// asks carries requests to end the period under way (RotateNow) to
	// rotateEvery, which answers each with the period that ended.
	asks chan chan Period
}

// requests is p's channel of requests, made on first use.
func (p *periods) requests() chan chan Period {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.asks == nil {
		p.asks = make(chan chan Period)
	}
	return p.asks
}

// Rotate ends the snapshot period under way and starts the next one,
// returning the period that ended. Connections are untouched.
func (m *Mirror) Rotate(why string) Period {
	p := &m.periods
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	cur := m.Summary()
	lat := m.tally.takePeriod()
	fig := diffSummary(cur, p.prev)
	fig.Seconds = stats.Round(now.Sub(p.start).Seconds(), 3)
	kept := fig.Classes[:0]
	for _, cl := range fig.Classes {
		for i := range cl.Candidates {
			var ps periodSamples
			if s := lat[cl.Digest]; i < len(s) {
				ps = s[i]
			}
			cl.Candidates[i].setLatency(ps.ctl, ps.cand)
		}
		if cl.Through > 0 || cl.differing() {
			kept = append(kept, cl)
		}
	}
	fig.Classes = kept
	left := 0
	if len(fig.Classes) > maxPeriodClasses {
		// Differing classes first, then by statements (already sorted).
		slices.SortStableFunc(fig.Classes, func(a, b ClassSummary) int {
			switch da, db := a.differing(), b.differing(); {
			case da && !db:
				return -1
			case db && !da:
				return 1
			}
			return 0
		})
		left = len(fig.Classes) - maxPeriodClasses
		fig.Classes = fig.Classes[:maxPeriodClasses]
	}
	p.n++
	total := *cur
	total.Classes = nil
	per := Period{N: p.n, Start: p.start, End: now, Why: why, Figures: fig, Total: &total, ClassesLeftOut: left}
	p.prev, p.start = cur, now
	short := per
	f := *fig
	f.Classes = nil
	short.Figures = &f
	p.recent = append(p.recent, short)
	if len(p.recent) > maxRecentPeriods {
		p.recent = p.recent[1:]
	}
	return per
}

// Recent returns the last periods that ended (their classes left out),
// oldest first, and when the one under way began.
func (m *Mirror) Recent() ([]Period, time.Time) {
	p := &m.periods
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.recent), p.start
}

// rotateEvery ends a period every d (none when d is 0), at each value
// of rotate and at each request of RotateNow, calling onPeriod with each; it returns when ctx ends,
// without ending the period under way (the caller ends it with the
// run).
func (m *Mirror) rotateEvery(ctx context.Context, d time.Duration, rotate <-chan os.Signal, onPeriod func(Period)) {
	asks := m.periods.requests()
	var tick <-chan time.Time
	if d > 0 {
		t := time.NewTicker(d)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
			onPeriod(m.Rotate("every " + d.String()))
		case <-rotate:
			onPeriod(m.Rotate("rotate"))
		case reply := <-asks:
			p := m.Rotate("rotate")
			onPeriod(p)
			reply <- p
		}
	}
}

// ErrNotCutting says that no period can be ended on request: the mirror
// is not cutting periods (it is ending, or it runs without Run).
var ErrNotCutting = errors.New("the mirror is not cutting snapshot periods now (is it ending?)")

// RotateNow ends the period under way as SIGHUP does, through the
// goroutine that ends periods (so that OnPeriod stores it), and returns
// it; ErrNotCutting when that goroutine does not take the request within
// timeout.
func (m *Mirror) RotateNow(ctx context.Context, timeout time.Duration) (Period, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	reply := make(chan Period, 1)
	select {
	case m.periods.requests() <- reply:
	case <-ctx.Done():
		return Period{}, ErrNotCutting
	}
	return <-reply, nil
}

func (cl *ClassSummary) differing() bool {
	for _, c := range cl.Candidates {
		if c.Differing > 0 {
			return true
		}
	}
	return false
}

// diffSummary is cur's counters less prev's (nil: none), class by class,
// the most statements first; the samples of differences are cur's (a
// class's first difference), kept where the class differed since prev.
func diffSummary(cur, prev *Summary) *Summary {
	out := *cur
	out.Classes = make([]ClassSummary, len(cur.Classes))
	out.Candidates = slices.Clone(cur.Candidates)
	for i := range cur.Classes {
		out.Classes[i] = cur.Classes[i]
		out.Classes[i].Candidates = slices.Clone(cur.Classes[i].Candidates)
	}
	if prev == nil {
		prev = &Summary{}
	}
	out.Sessions -= prev.Sessions
	out.Through -= prev.Through
	out.Mirrored -= prev.Mirrored
	out.Compared -= prev.Compared
	out.Differing -= prev.Differing
	out.Dropped -= prev.Dropped
	out.RefusedPlain -= prev.RefusedPlain
	out.Other = nil
	for k, v := range cur.Other {
		if d := v - prev.Other[k]; d != 0 {
			if out.Other == nil {
				out.Other = map[string]int64{}
			}
			out.Other[k] = d
		}
	}
	for i := range out.Candidates {
		c := &out.Candidates[i]
		if i >= len(prev.Candidates) {
			c.setRatio()
			continue
		}
		p := prev.Candidates[i]
		c.Mirrored -= p.Mirrored
		c.Compared -= p.Compared
		c.Differing -= p.Differing
		c.Dropped -= p.Dropped
		c.Lost -= p.Lost
		c.Back -= p.Back
		c.ControlSeconds -= p.ControlSeconds
		c.CandidateSeconds -= p.CandidateSeconds
		c.setRatio()
	}
	before := make(map[string]*ClassSummary, len(prev.Classes))
	for i := range prev.Classes {
		before[prev.Classes[i].Digest] = &prev.Classes[i]
	}
	for i := range out.Classes {
		cl := &out.Classes[i]
		p := before[cl.Digest]
		if p == nil {
			continue
		}
		cl.Through -= p.Through
		var nm map[string]int64
		for k, v := range cl.NotMirrored {
			if d := v - p.NotMirrored[k]; d != 0 {
				if nm == nil {
					nm = map[string]int64{}
				}
				nm[k] = d
			}
		}
		cl.NotMirrored = nm
		for j := range cl.Candidates {
			if j >= len(p.Candidates) {
				break
			}
			c, q := &cl.Candidates[j], p.Candidates[j]
			c.Mirrored -= q.Mirrored
			c.Compared -= q.Compared
			c.Differing -= q.Differing
			c.NonDeterministic -= q.NonDeterministic
			c.NotComparable -= q.NotComparable
			c.Dropped -= q.Dropped
			c.Down -= q.Down
			c.Lost -= q.Lost
			c.SessionErrors -= q.SessionErrors
			if c.Differing == 0 {
				c.Sample = nil
			}
		}
	}
	if len(out.Classes) > 0 {
		for i := range out.Candidates {
			out.Candidates[i].ClassesDiffering = 0
		}
		for _, cl := range out.Classes {
			for j, c := range cl.Candidates {
				if c.Differing > 0 && j < len(out.Candidates) {
					out.Candidates[j].ClassesDiffering++
				}
			}
		}
	}
	slices.SortStableFunc(out.Classes, func(a, b ClassSummary) int {
		switch {
		case a.Through > b.Through:
			return -1
		case a.Through < b.Through:
			return 1
		}
		return 0
	})
	return &out
}
