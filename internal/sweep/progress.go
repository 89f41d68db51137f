package sweep

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/shakedown/shakedown/internal/plan"
	prog "github.com/shakedown/shakedown/internal/progress"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/runner"
)

// progress shows where the sweep is. On a terminal (live) it keeps one line
// up to date in place (progress.Line): step i/n, target, workload, threads,
// live QPS, elapsed and estimated time left. Elsewhere it writes one line
// per finished step. Lines that must stay (failures, --verbose intervals)
// are written above the live line. Its methods are safe for concurrent use:
// intervals arrive from the runner's reporting goroutine.
type progress struct {
	mu      sync.Mutex
	l       *prog.Line
	live    bool
	verbose bool
	now     func() time.Time

	total     int
	start     time.Time // of the sweep
	done      int       // steps finished
	base      int       // of them, finished before this process (resume)
	nominal   time.Duration
	step      plan.Step
	stepStart time.Time
	phase     string // "warming up", "running", "preparing ..."
	qps       float64
}

func newProgress(w io.Writer, live, verbose bool, now func() time.Time, total int, nominal time.Duration) *progress {
	if w == nil {
		w = io.Discard
	}
	// Off a terminal the line is never set, only written above: one
	// line per finished step, not one per interval.
	return &progress{l: prog.New(w, live, 0, now), live: live, verbose: verbose, now: now, total: total, nominal: nominal, start: now()}
}

// left estimates the time the sweep still needs: the average wall time of
// the finished steps (prepare and cool-down included), or the nominal step
// time before any finished, times the steps to go, less what the current
// step has already used.
func (p *progress) left(now time.Time) time.Duration {
	per := p.nominal
	if n := p.done - p.base; n > 0 {
		per = now.Sub(p.start) / time.Duration(n)
	}
	rest := time.Duration(p.total-p.done) * per
	if !p.stepStart.IsZero() {
		rest -= min(now.Sub(p.stepStart), per)
	}
	return max(rest, 0)
}

func (p *progress) line(now time.Time) string {
	s := p.step
	var b strings.Builder
	fmt.Fprintf(&b, "step %d/%d  %s  %s  %d thr", s.Index, p.total, s.Target.Name, s.Workload.Label(), s.Threads)
	if s.Repeat > 1 {
		fmt.Fprintf(&b, "  #%d", s.Repeat)
	}
	switch p.phase {
	case "running":
		fmt.Fprintf(&b, "  %.1f qps", p.qps)
	default:
		b.WriteString("  " + p.phase)
	}
	fmt.Fprintf(&b, "  elapsed %s  ~%s left", prog.Clock(now.Sub(p.start)), prog.Clock(p.left(now)))
	return b.String()
}

// redraw rewrites the live line; p.mu is held.
func (p *progress) redraw() {
	if !p.live || p.step.Target == nil || p.stepStart.IsZero() {
		return
	}
	p.l.Set(p.line(p.now()))
}

// above writes a line that stays, above the live line; p.mu is held.
func (p *progress) above(line string) {
	p.l.Println(line)
	p.redraw()
}

// Printf writes a line that stays.
func (p *progress) Printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.above(fmt.Sprintf(format, args...))
}

func (p *progress) startStep(s plan.Step, phase string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.step, p.stepStart, p.phase, p.qps = s, p.now(), phase, 0
	p.redraw()
}

func (p *progress) interval(iv runner.Interval) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.phase, p.qps = "running", iv.QPS
	if p.verbose {
		var b strings.Builder
		result.WriteInterval(&b, iv.Stored(), 95)
		p.above(fmt.Sprintf("  %s %s %d: %s", p.step.Target.Name, p.step.Workload.Label(), p.step.Threads, strings.TrimRight(b.String(), "\n")))
		return
	}
	p.redraw()
}

// tick refreshes the elapsed time on the live line.
func (p *progress) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.redraw()
}

// finishStep counts a step as done and says how it went: always when it
// failed, and per step when not live.
func (p *progress) finishStep(s plan.Step, status, msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	p.stepStart = time.Time{}
	if status != result.StatusOK || !p.live || p.verbose {
		now := p.now()
		p.above(fmt.Sprintf("step %d/%d  %s  %s  %d thr  #%d: %s  (elapsed %s, ~%s left)",
			s.Index, p.total, s.Target.Name, s.Workload.Label(), s.Threads, s.Repeat, msg, prog.Clock(now.Sub(p.start)), prog.Clock(p.left(now))))
		return
	}
	p.redraw()
}

// setTotal sets the steps of the sweep and how many of them are done
// already (a resumed sweep's), so that "step i/n" counts the whole sweep.
func (p *progress) setTotal(total, done int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total, p.done, p.base = total, done, done
}

// skipStep counts a step of a target found down as done, silently: the
// skip was said once for all its steps.
func (p *progress) skipStep() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	p.base++ // took no time: leave it out of the time per step
}

// addSteps counts more steps in (repeats: auto), so that the steps and the
// time left include them.
func (p *progress) addSteps(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total += n
}

// close takes the live line off the screen.
func (p *progress) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.l.Clear()
	p.step = plan.Step{}
}
