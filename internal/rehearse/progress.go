package rehearse

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/progress"
	"github.com/shakedown/shakedown/internal/sweep"
)

// plainEvery is how often the progress line is written where it cannot be
// redrawn (a log, a pipe).
const plainEvery = 10 * time.Second

// defaultStepEstimate is what a step whose length nothing foretells is
// taken to need, until steps of this run say better.
const defaultStepEstimate = 5 * time.Second

// chainLine is the rehearsal's one progress line: the step running, the
// time so far and an estimate of the time left. Its methods are safe for
// concurrent use.
type chainLine struct {
	l     *progress.Line
	names []string
	now   func() time.Time
	start time.Time

	mu       sync.Mutex
	est      []time.Duration // foretold per step; 0: not foretold
	most     []time.Duration // the most a foretold step may take
	per      time.Duration   // a load step of the sweep, for the steps it adds
	took     []time.Duration // measured, once done
	finished []bool
	cur      int
	curStart time.Time
}

func newLine(opts Options, steps []Step, p *plan.Rehearsal, started time.Time) *chainLine {
	cl := &chainLine{now: opts.Now, start: started, est: make([]time.Duration, len(steps)), most: make([]time.Duration, len(steps)),
		took: make([]time.Duration, len(steps)), finished: make([]bool, len(steps)), cur: -1}
	for i, s := range steps {
		cl.names = append(cl.names, s.Name())
		if s.Name() == plan.StepSweep && p.Sweep != nil {
			// The one step whose length the plan foretells: its load
			// steps as the sweep counts them, at first and at most
			// (repeats: auto adds steps while levels are inconclusive).
			cl.per = sweep.StepTime(p.Sweep)
			cl.est[i] = cl.per * time.Duration(len(p.Sweep.Steps()))
			cl.most[i] = cl.per * time.Duration(sweep.MostSteps(p.Sweep))
		}
	}
	if opts.Progress != nil {
		cl.l = progress.New(opts.Progress, opts.Live, plainEvery, opts.Now)
	}
	return cl
}

// running shows step i as running and redraws the line every second
// until the returned stop is called; stop returns once the redrawing has
// ended.
func (cl *chainLine) running(i int) (stop func()) {
	cl.mu.Lock()
	cl.cur, cl.curStart = i, cl.now()
	cl.mu.Unlock()
	cl.l.Set(cl.text())
	return progress.Every(context.Background(), time.Second, func() { cl.l.Set(cl.text()) })
}

// done records that step i finished (or was finished before a resume,
// with no time of its own in this run).
func (cl *chainLine) done(i int, wallS float64) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	cl.finished[i] = true
	cl.took[i] = time.Duration(wallS * float64(time.Second))
	cl.cur = -1
}

func (cl *chainLine) clear() { cl.l.Clear() }

// moreSweepSteps counts n steps that repeats: auto added to the sweep
// into its estimate.
func (cl *chainLine) moreSweepSteps(n int) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	for i, name := range cl.names {
		if name == plan.StepSweep {
			cl.est[i] = min(cl.est[i]+time.Duration(n)*cl.per, max(cl.most[i], cl.est[i]))
		}
	}
}

// text is the line: "step 3 of 9: verify · 0:12 so far · about 0:40 left",
// and while a sweep with repeats: auto may still add steps, the most it
// may take: "about 0:40 left (up to 1:40 with repeats: auto)".
func (cl *chainLine) text() string {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	now := cl.now()
	guess := cl.guess()
	var left, most time.Duration
	for i := range cl.names {
		if cl.finished[i] {
			continue
		}
		e := cl.est[i]
		if e == 0 {
			e = guess
		}
		m := max(cl.most[i], e)
		if i == cl.cur {
			e = max(e-now.Sub(cl.curStart), 0)
			m = max(m-now.Sub(cl.curStart), 0)
		}
		left += e
		most += m
	}
	name := "starting"
	if cl.cur >= 0 {
		name = cl.names[cl.cur]
	}
	upTo := ""
	if progress.Clock(most) != progress.Clock(left) {
		upTo = " (up to " + progress.Clock(most) + " with repeats: auto)"
	}
	return fmt.Sprintf("rehearse: step %d of %d: %s · %s so far · about %s left%s",
		cl.cur+1, len(cl.names), name, progress.Clock(now.Sub(cl.start)), progress.Clock(left), upTo)
}

// guess is the time a step nothing foretells is taken to need: the mean
// of such steps finished in this run, else defaultStepEstimate.
func (cl *chainLine) guess() time.Duration {
	var sum time.Duration
	n := 0
	for i := range cl.names {
		if cl.finished[i] && cl.est[i] == 0 && cl.took[i] > 0 {
			sum += cl.took[i]
			n++
		}
	}
	if n == 0 {
		return defaultStepEstimate
	}
	return sum / time.Duration(n)
}
