package follow

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/verify"
)

// VerifyRun is one verify made while following (--verify-every).
type VerifyRun struct {
	At              time.Time `json:"at"`
	Equal           bool      `json:"equal"`
	Tables          int       `json:"tables"`
	Rows            int64     `json:"rows"`
	DifferingRows   int64     `json:"differing_rows"`
	ChunksRechecked int       `json:"chunks_rechecked"`
	StillDiffering  int       `json:"chunks_still_differing"`
	Seconds         float64   `json:"seconds"`
	Error           string    `json:"error,omitempty"`
}

// String is the line the follower prints for it.
func (v VerifyRun) String() string {
	if v.Error != "" {
		return fmt.Sprintf("follow: verify while following failed: %s", v.Error)
	}
	verdict := "equal"
	if !v.Equal {
		verdict = fmt.Sprintf("DIFFERENCES: %d rows differ after rechecks", v.DifferingRows)
	}
	return fmt.Sprintf("follow: verify while following: %s (%d tables, %d rows, %d chunks compared again after the follower passed them, %.1f s)",
		verdict, v.Tables, v.Rows, v.ChunksRechecked, v.Seconds)
}

// verifier runs verify every so often while a follower runs: first once
// the follower has caught up, then every Every. A chunk that differs is
// compared again after the follower has passed the source's position.
type verifier struct {
	every    time.Duration
	src, dst *target.Target
	pairs    []Pair
	print    func(string)

	mu       sync.Mutex
	caught   bool
	runs     []VerifyRun
	lastDone time.Time
}

// progress takes the follower's figures: the first time it has nothing
// left to apply, or is within a second of the source, the first verify
// may start.
func (v *verifier) progress(s Stats) {
	if s.LagBytes == 0 || (s.LagBytes > 0 && s.Lag <= 1) {
		v.mu.Lock()
		v.caught = true
		v.mu.Unlock()
	}
}

// loop runs verifies until ctx ends.
func (v *verifier) loop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
		v.mu.Lock()
		due := v.caught && (v.lastDone.IsZero() || time.Since(v.lastDone) >= v.every)
		v.mu.Unlock()
		if !due {
			continue
		}
		run := v.once(ctx)
		if ctx.Err() != nil {
			return
		}
		v.mu.Lock()
		v.runs = append(v.runs, run)
		v.lastDone = time.Now()
		v.mu.Unlock()
		v.print(run.String())
	}
}

func (v *verifier) once(ctx context.Context) VerifyRun {
	run := VerifyRun{At: time.Now(), Equal: true}
	for _, p := range v.pairs {
		s, d := *v.src, *v.dst
		s.DB, d.DB = p.Source, p.Target
		ss, ds, err := verify.Sides(ctx, &s, &d, 6)
		if err != nil {
			run.Error = err.Error()
			break
		}
		w := NewWatcher(ss.DB, ds.DB, targetNames(v.pairs))
		rep, err := verify.Run(ctx, ss, ds, verify.Options{Threads: 2, Rechecks: 3, Settle: w.Settle, Align: w.Align})
		ss.DB.Close()
		ds.DB.Close()
		if err != nil {
			run.Error = err.Error()
			break
		}
		run.Equal = run.Equal && rep.Equal
		run.Tables += len(rep.Tables)
		run.DifferingRows += rep.DifferingRows
		run.ChunksRechecked += rep.ChunksRechecked
		run.StillDiffering += rep.ChunksStillDiffering
		for _, t := range rep.Tables {
			run.Rows += t.RowsSource
		}
	}
	if run.Error != "" {
		run.Equal = false
	}
	run.Seconds = time.Since(run.At).Seconds()
	return run
}
