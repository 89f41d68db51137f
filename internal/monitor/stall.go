package monitor

import (
	"context"
	"fmt"
	"github.com/shakedown/shakedown/internal/stats"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/stall"
	"github.com/shakedown/shakedown/internal/target"
)

// startStall opens the stall captures' connection, apart from the
// sampler's so that a capture never delays a sample, and connects it now:
// a stalled server may not take new connections.
func (r *Run) startStall(ctx context.Context, ep target.Endpoint) error {
	db, err := r.cfg.Target.OpenNoDB(ep, 1)
	if err != nil {
		return fmt.Errorf("open stall capture connection: %w", err)
	}
	db.SetMaxOpenConns(1)
	r.stallDB = db
	pctx, cancel := context.WithTimeout(ctx, readTimeout(r.cfg.Interval))
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		return fmt.Errorf("open stall capture connection: %w", err)
	}
	sc := *r.cfg.Stall
	sc.Interval = r.cfg.Interval
	texts := make([]string, len(sc.Triggers))
	for i, t := range sc.Triggers {
		texts[i] = t.Text
	}
	r.notes = append(r.notes, fmt.Sprintf("Stall capture: when %s (at most %d, %s apart), on a connection of its own; reads only",
		strings.Join(texts, " or "), max(sc.Max, 1), sc.Cooldown))
	// Stacks only of a server process on this machine: gdb stops it.
	switch {
	case !sc.Stacks:
	case r.local && r.pid > 0:
		sc.StacksPID = r.pid
		r.notes = append(r.notes, fmt.Sprintf("Stall stacks: each capture reads process %d's thread stacks with gdb, which STOPS the server while it reads them (the pause is shown)", r.pid))
	default:
		r.notes = append(r.notes, "Stall stacks: not read: the server is not a process found on this machine")
	}
	r.stall = stall.NewWatcher(sc, db)
	return nil
}

// shiftStalls dates the captures and the samples before them from the
// start of measurement, as the series is.
func shiftStalls(stalls []result.Stall, start time.Time) {
	for i := range stalls {
		st := &stalls[i]
		st.AtS = stats.Round(st.At.Sub(start).Seconds(), 3)
		for j := range st.Before {
			if w := st.Before[j].Wall; !w.IsZero() {
				st.Before[j].AtS = stats.Round(w.Sub(start).Seconds(), 3)
			}
		}
	}
}
