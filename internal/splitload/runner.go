// Package splitload is one runner's side of a load split over many
// processes (run --segment): registering in the store the runners share,
// keeping the steps the store did not take, and saying how it ended.
package splitload

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/segment"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/usage"
)

// Runner is this process as one runner of a load split over many,
// registered in the store they share. The store is its only link with
// the others: no runner waits for or talks to another.
type Runner struct {
	st    *store.Store
	load  *store.Split
	me    store.Runner
	sp    segment.Split
	where string // the store, without password, for messages
	keep  *Keeper
	// stderr hears of a store that was lost.
	stderr io.Writer
}

// Key identifies a load: what its runners run and when they start.
// Every runner computes the same key from the same command (or plan) and
// --start-at, whatever its segment.
func Key(kind string, parts []string, startAt time.Time) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", kind, startAt.UTC().Format(time.RFC3339Nano))
	for _, p := range parts {
		fmt.Fprintf(h, "%s\x00", p)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// presentational are options that may differ between the runners of one
// load without changing the load.
var presentational = map[string]bool{"metrics-addr": true, "verbosity": true, "histogram": true, "monitor": true}

// LoadParts is a run's options as the key of its load: sorted, without
// those that only change what a runner shows.
func LoadParts(workload, target string, opts map[string]string) []string {
	parts := []string{workload, target}
	keys := make([]string, 0, len(opts))
	for k := range opts {
		if !presentational[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, k+"="+opts[k])
	}
	return parts
}

// Join registers this runner: it finds or records the load (with
// sweep as the sweep the runners share, when not nil) and registers its
// segment, refusing one that another runner has. It measures its clock
// against the store's, for the report's skew check.
func Join(ctx context.Context, stderr io.Writer, unsavedDir string, st *store.Store, sp segment.Split, kind, description string, parts []string,
	sweep *store.Sweep, targets []store.Target) (*Runner, error) {
	load := &store.Split{Key: Key(kind, parts, sp.StartAt), Kind: kind, Sequence: sp.Sequence.String(), Runners: sp.Sequence.Len(),
		StartAt: sp.StartAt, Description: description}
	host, _ := os.Hostname()
	me := store.Runner{Host: host, RegisteredAt: time.Now()}
	if err := Register(ctx, st, load, sweep, targets, sp, &me); err != nil {
		return nil, err
	}
	r := &Runner{st: st, load: load, me: me, sp: sp, where: st.Path(), stderr: stderr}
	r.keep = NewKeeper(st, load, &r.me, store.UnsavedPath(unsavedDir, load.Key, me.Index))
	if offset := me.ClockOffset; offset > result.MaxSkew || -offset > result.MaxSkew {
		fmt.Fprintf(stderr, "shakedown: this host's clock is %s off the store's: the runners may not start together; synchronise the clocks (NTP)\n", offset.Round(time.Millisecond))
	}
	return r, nil
}

// Register records load in the store its runners share, or finds it when
// another runner recorded it first (with sweep and its targets, for a
// split sweep), and registers me, this runner, as segment sp of it,
// refusing a segment another runner has. It sets me's place in the load
// and its clock's offset from the store's; the caller sets its host and
// when it registered. Run and sweep runners alike join this way.
func Register(ctx context.Context, st *store.Store, load *store.Split, sweep *store.Sweep, targets []store.Target, sp segment.Split, me *store.Runner) error {
	what := "load"
	if load.Kind == store.SplitSweep {
		what = "sweep"
	}
	if err := st.JoinSplit(ctx, load, sweep, targets); err != nil {
		if errors.Is(err, store.ErrOtherSequence) {
			return usage.Errorf("--segment %s: %v: every runner of a %s must be given the same --segment-sequence (or the same N)", sp.Label(), err, what)
		}
		return err
	}
	offset, err := st.ClockOffset(ctx)
	if err != nil {
		return err
	}
	me.SplitID, me.Index, me.Segment, me.Label, me.ClockOffset = load.ID, sp.Index(), sp.Segment.String(), sp.Label(), offset
	if err := st.Register(ctx, me); err != nil {
		if errors.Is(err, store.ErrSegmentTaken) {
			return usage.Errorf("--segment %s: %v: each segment of a %s runs once; give this runner another segment, or give the %s another --start-at", sp.Label(), err, what, what)
		}
		return err
	}
	return nil
}

// Save records one step this runner measured. Once the store is lost, it
// keeps the step, and every later one, in a file of its own and says so
// (Keeper): the measurement goes on, and report --import adds it later.
// The error then says where the steps are.
func (r *Runner) Save(ctx context.Context, run *store.Run) error {
	if r.keep.Lost() == nil {
		if res := run.Result; res != nil && res.Segment != nil {
			_ = r.st.RunnerStarted(ctx, r.load.ID, r.me.Index, res.Segment.Started)
		}
	}
	say := func(line string) { fmt.Fprintf(r.stderr, "shakedown: %s\n", line) }
	if err := r.keep.Keep(ctx, run, say); err != nil {
		return err
	}
	return r.keep.Lost()
}

// Finish records how the runner ended, if the store is still there.
func (r *Runner) Finish(ctx context.Context, status string) {
	if r.keep.Lost() == nil {
		_ = r.st.RunnerFinished(ctx, r.load.ID, r.me.Index, status, time.Now())
	}
}

// Describe is the one line a runner prints about its part.
func (r *Runner) Describe() string {
	return fmt.Sprintf("runner %s of %d (load %s in %s)", r.me.Label, r.load.Runners, r.load.Key[:12], r.where)
}

// Host is the host this runner registered as.
func (r *Runner) Host() string { return r.me.Host }

// Part is where a step this runner measured belongs in the split load.
func (r *Runner) Part(ivs []result.IntervalHDR) *store.Part {
	return &store.Part{SplitID: r.load.ID, Index: r.me.Index, Intervals: ivs}
}

// Label is this runner's segment, as the user gave it.
func (r *Runner) Label() string { return r.me.Label }
