package monitor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/stall"
	"github.com/shakedown/shakedown/internal/target"
)

// WatchStallOptions are watch's --stall options.
type WatchStallOptions struct {
	// Spec is --stall as given.
	Spec     string
	Cooldown time.Duration
	Max      int
	// Stacks is --stall-stacks; PID the local server process (0: none).
	Stacks bool
	PID    int
	// JSON prints each capture as one JSON object instead of text.
	JSON bool
}

// ParseWatchStall checks watch's --stall: a latency trigger (pNN) is
// refused, since watch runs no load and so sees no client latency.
func ParseWatchStall(spec string) ([]stall.Trigger, error) {
	ts, err := stall.Parse(spec)
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		if t.Percentile() > 0 {
			return nil, fmt.Errorf("--stall: %q: watch runs no load and sees no client latency; use threads_running or qps", t.Text)
		}
	}
	return ts, nil
}

// WatchStall is watch's stall capture: a stall.Watcher on a connection of
// its own, fed with watch's samples, each capture printed in full as soon
// as it is taken (watch stores nothing to read it from later).
type WatchStall struct {
	w     *stall.Watcher
	close func() error
	out   io.Writer
	json  bool
	start time.Time
	n     int
}

// StartWatchStall opens the captures' connection now (a stalled server may
// not take new ones) and prints what it will do. Stacks are read only of
// a server process found on this machine.
func StartWatchStall(ctx context.Context, tgt *target.Target, ep target.Endpoint, interval time.Duration, o WatchStallOptions, out io.Writer) (*WatchStall, error) {
	triggers, err := ParseWatchStall(o.Spec)
	if err != nil {
		return nil, err
	}
	db, err := tgt.OpenNoDB(ep, 1)
	if err != nil {
		return nil, fmt.Errorf("open stall capture connection: %w", err)
	}
	db.SetMaxOpenConns(1)
	pctx, cancel := context.WithTimeout(ctx, readTimeout(interval))
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open stall capture connection: %w", err)
	}
	cfg := stall.Config{Triggers: triggers, Interval: interval, Cooldown: o.Cooldown, Max: o.Max}
	texts := make([]string, len(triggers))
	for i, t := range triggers {
		texts[i] = t.Text
	}
	note := fmt.Sprintf("stall capture: when %s (at most %d, %s apart), on a connection of its own; reads only", strings.Join(texts, " or "), max(o.Max, 1), o.Cooldown)
	switch {
	case !o.Stacks:
	case o.PID > 0:
		cfg.StacksPID = o.PID
		note += fmt.Sprintf("; each capture reads process %d's thread stacks with gdb, which STOPS the server while it reads them", o.PID)
	default:
		note += "; stacks not read: the server is not a process found on this machine"
	}
	if !o.JSON {
		fmt.Fprintln(out, note)
	}
	return &WatchStall{w: stall.NewWatcher(cfg, db), close: db.Close, out: out, json: o.JSON, start: time.Now()}, nil
}

// Observe hands a sample to the triggers, then prints the captures taken
// since the last sample. Call it from the goroutine that prints the
// samples, so that a capture never cuts a line.
func (s *WatchStall) Observe(ctx context.Context, smp result.Sample) error {
	s.w.Observe(ctx, smp)
	return s.print(s.w.Drain())
}

// Close waits for a capture under way, prints it and closes the
// connection.
func (s *WatchStall) Close() error {
	s.w.Finish()
	err := s.print(s.w.Drain())
	s.close()
	return err
}

func (s *WatchStall) print(stalls []result.Stall) error {
	shiftStalls(stalls, s.start.Truncate(time.Millisecond))
	for _, st := range stalls {
		s.n++
		if s.json {
			if err := json.NewEncoder(s.out).Encode(map[string]any{"stall": st}); err != nil {
				return fmt.Errorf("write stall capture: %w", err)
			}
			continue
		}
		fmt.Fprintln(s.out)
		st.WriteFull(s.out, s.n)
		fmt.Fprintln(s.out)
	}
	return nil
}
