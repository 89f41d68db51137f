package stall

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/shakedown/shakedown/internal/result"
)

// Config says when to capture and how much.
type Config struct {
	Triggers []Trigger
	// Interval is the sampling interval; 0 means one second.
	Interval time.Duration
	// Ring is how many samples before a trigger a capture keeps; 0 means 30.
	Ring int
	// Cooldown is the quiet period after a capture in which no other is
	// taken; 0 means 60s.
	Cooldown time.Duration
	// Max bounds the captures of one run; 0 means 5.
	Max int
	// Bounds bound each capture's reads.
	Bounds Bounds
	// Stacks asks for the server's thread stacks after the other reads
	// (--stall-stacks); StacksPID is the local server process they are
	// read from, 0 when the server is not on this machine (then none are).
	Stacks    bool
	StacksPID int
}

// Watcher checks each sample against the triggers and captures on a
// connection of its own when one holds. Its methods are safe for
// concurrent use: the sampler and the runner's reporting goroutine call it.
type Watcher struct {
	cfg Config
	q   Querier

	mu      sync.Mutex
	det     *Detector
	ring    []result.Sample
	latency map[string]float64
	last    time.Time
	busy    bool
	taken   int
	skipped int
	stalls  []result.Stall
	drained int
	wg      sync.WaitGroup
}

// NewWatcher returns a watcher that captures through q, which should not be
// the sampler's connection (a capture would delay its samples).
func NewWatcher(cfg Config, q Querier) *Watcher {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.Ring <= 0 {
		cfg.Ring = 30
	}
	if cfg.Cooldown <= 0 {
		cfg.Cooldown = 60 * time.Second
	}
	if cfg.Max <= 0 {
		cfg.Max = 5
	}
	return &Watcher{cfg: cfg, q: q, det: NewDetector(cfg.Triggers, cfg.Interval), latency: map[string]float64{}}
}

// ObserveLatency notes the client's latency of the latest interval:
// percentile returns the latency at p percent in milliseconds, ok false
// when no event ended in the interval. Call it from the runner's
// OnInterval.
func (w *Watcher) ObserveLatency(percentile func(p float64) (ms float64, ok bool)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, t := range w.cfg.Triggers {
		if p := t.Percentile(); p > 0 {
			if ms, ok := percentile(p); ok {
				w.latency[t.Metric] = ms
			} else {
				delete(w.latency, t.Metric)
			}
		}
	}
}

// Observe checks one sample; when a trigger holds and neither the cooldown
// nor the bound on captures forbids it, it starts a capture in a goroutine
// of its own, which Finish waits for. Each of the capture's reads is
// bounded, and the capture goes on when ctx is cancelled so that an
// interrupted run keeps what it caught.
func (w *Watcher) Observe(ctx context.Context, smp result.Sample) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ring = append(w.ring, smp)
	if n := len(w.ring) - w.cfg.Ring; n > 0 {
		w.ring = append(w.ring[:0], w.ring[n:]...)
	}
	v := map[string]float64{}
	for _, k := range []string{"qps", "threads_running"} {
		if x, ok := smp.Values[k]; ok {
			v[k] = x
		}
	}
	for k, x := range w.latency {
		v[k] = x
	}
	fired := w.det.Observe(v)
	if fired == nil {
		return
	}
	at := smp.Wall
	if w.busy || w.taken >= w.cfg.Max || (!w.last.IsZero() && at.Sub(w.last) < w.cfg.Cooldown) {
		w.skipped++
		return
	}
	w.det.Reset()
	w.busy, w.last = true, at
	w.taken++
	st := result.Stall{At: at, Reasons: fired, Before: append([]result.Sample(nil), w.ring...)}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		start := time.Now()
		st.Sections = Capture(context.WithoutCancel(ctx), w.q, w.cfg.Bounds)
		st.Blockers = Blockers(st.Sections)
		if w.cfg.StacksPID > 0 {
			st.Sections = append(st.Sections, Stacks(context.WithoutCancel(ctx), w.cfg.StacksPID)) // last: it stops the server
		}
		st.CaptureMS = msSince(start)
		w.mu.Lock()
		w.stalls = append(w.stalls, st)
		w.busy = false
		w.mu.Unlock()
	}()
}

// Finish waits for a capture under way and returns the captures in time
// order, and how many times a trigger held but the bounds (cooldown, one
// capture at a time, Max) kept it from capturing.
func (w *Watcher) Finish() ([]result.Stall, int) {
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	sort.Slice(w.stalls, func(i, j int) bool { return w.stalls[i].At.Before(w.stalls[j].At) })
	return w.stalls, w.skipped
}

// Drain returns the captures finished since the last Drain, oldest first,
// for a caller that shows them as they are taken (watch). Captures are
// taken one at a time, so they finish in the order they fired.
func (w *Watcher) Drain() []result.Stall {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := append([]result.Stall(nil), w.stalls[w.drained:]...)
	w.drained = len(w.stalls)
	return out
}
