package mirror

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/shakedown/shakedown/internal/progress"
)

// Output is where Run reports: the progress line and its notes go to
// Stderr, live when StderrLive (a terminal).
type Output struct {
	Stderr     io.Writer
	StderrLive bool
	// Every is the progress line's period (default 1s).
	Every time.Duration
	// Rotate ends a snapshot period at each value (SIGHUP); nil: none.
	Rotate <-chan os.Signal
	// OnPeriod is called with each snapshot period that ends, the last at
	// the end of the run (nil: none); it runs on the goroutine that ends
	// periods, so a slow one delays the next period, never a client.
	OnPeriod func(Period)
}

// Run listens, says where, serves until ctx ends (Ctrl-C, SIGTERM), and
// returns the figures. The progress line shows, over its last period,
// the statements per second through, and, in all, those mirrored,
// compared, differing and dropped, with the candidates' latency over the
// control's.
func Run(ctx context.Context, opts Options, out Output) (*Summary, error) {
	m, err := Listen(ctx, opts)
	if err != nil {
		return nil, err
	}
	every := out.Every
	if every <= 0 {
		every = time.Second
	}
	line := progress.New(out.Stderr, out.StderrLive, every, time.Now)
	line.Println(fmt.Sprintf("mirror: listening on %s; control %s; %d candidate(s)", m.Addr(), opts.Control.Redacted(), len(opts.Candidates)))
	if a := m.HTTPAddr(); a != "" {
		line.Println(fmt.Sprintf("mirror: live page on http://%s/, metrics on http://%s/metrics", a, a))
	}
	onPeriod := out.OnPeriod
	if onPeriod == nil {
		onPeriod = func(Period) {}
	}
	p := m.newProgress()
	stop := progress.Every(ctx, every, func() { line.Set(p.line(m)) })
	periodsDone := make(chan struct{})
	go func() {
		defer close(periodsDone)
		m.rotateEvery(ctx, opts.Snapshot, out.Rotate, onPeriod)
	}()
	err = m.Serve(ctx)
	<-periodsDone
	onPeriod(m.Rotate("end"))
	stop()
	line.Clear()
	return m.Summary(), err
}

// progressState is what the progress line compares with: the counters at
// its last drawing.
type progressState struct {
	at                     time.Time
	through, ctlNS, candNS int64
}

func (m *Mirror) newProgress() *progressState {
	return &progressState{at: time.Now()}
}

func (p *progressState) line(m *Mirror) string {
	t := m.tally
	now := time.Now()
	through, ctl, cand := t.through.Load(), t.ctlNS.Load(), t.candNS.Load()
	rate := float64(through-p.through) / now.Sub(p.at).Seconds()
	ratio := "-"
	if d := ctl - p.ctlNS; d > 0 {
		ratio = fmt.Sprintf("%.2fx", float64(cand-p.candNS)/float64(d))
	}
	p.at, p.through, p.ctlNS, p.candNS = now, through, ctl, cand
	s := fmt.Sprintf("[%s] %.0f stmt/s through; %d mirrored, %d compared, %d differing, %d dropped; candidate latency %s",
		progress.Clock(time.Since(m.start)), rate, t.mirrored.Load(), t.compared.Load(), t.differing.Load(), t.dropped.Load(), ratio)
	for _, c := range m.cands {
		if c.isDown() {
			s += "; " + c.name + " down"
		}
	}
	return s
}
