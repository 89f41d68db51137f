package bench

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/shakedown/shakedown/internal/segment"
	"github.com/shakedown/shakedown/internal/splitload"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/usage"
)

// ResolveSplit resolves the split options (--segment, --segment-index-env,
// --start-at...) with getenv and applies them (see SetSplit).
func (j *Job) ResolveSplit(getenv func(string) string, now time.Time) (segment.Split, error) {
	sp, err := j.spec.Split.Resolve(getenv, now)
	if err != nil {
		return segment.Split{}, err
	}
	if err := j.SetSplit(sp); err != nil {
		return segment.Split{}, err
	}
	return sp, nil
}

// SetSplit makes the job one runner of a split load: it drives its
// segment's share of the threads (numbered as the whole's threads, so
// that workloads which share key ranges among threads keep doing so), of
// --events and of --rate (its own Poisson arrivals; the runners' add up
// to the whole rate), and its load starts at sp.StartAt, after every
// thread has connected. Only the first segment samples the server. A
// share of nothing is bad usage.
func (j *Job) SetSplit(sp segment.Split) error {
	rc := j.rc
	threads, err := sp.Share("--threads", int64(j.spec.Threads))
	if err != nil {
		return err
	}
	lo, _ := sp.Segment.Range(int64(j.spec.Threads))
	rc.Threads, rc.ThreadBase, rc.TotalThreads = int(threads), int(lo), j.spec.Threads
	rc.Events = 0
	if j.spec.Events > 0 {
		if rc.Events, err = sp.Share("--events", j.spec.Events); err != nil {
			return err
		}
	}
	rc.Rate = sp.Segment.Rate(j.spec.Rate)
	rc.StartAt = sp.StartAt
	rc.Stream = uint64(sp.Index())
	j.rc = rc
	j.split = sp
	return nil
}

// SplitGiven reports whether the command line names a segment.
func (j *Job) SplitGiven() bool { return j.spec.Split.Given() }

// Split is the job's part of the load: segment.Alone unless SetSplit
// made it one runner of many.
func (j *Job) Split() segment.Split { return j.split }

// samples says whether this process samples the server: with --monitor,
// and in a split load only the first runner, so that the server is
// counted once.
func (j *Job) samples() bool {
	return j.spec.Monitor && (!j.split.On || j.split.First())
}

// splitHeader says which part of the load this runner drives.
func (j *Job) splitHeader(w io.Writer) {
	sp := j.split
	if !sp.On {
		return
	}
	rc := j.rc
	fmt.Fprintf(w, "Segment: %s of %d runners (%s), threads %d-%d of %d", sp.Label(), sp.Sequence.Len(), sp.Sequence, rc.ThreadBase+1, rc.ThreadBase+rc.Threads, j.spec.Threads)
	if j.spec.Events > 0 {
		fmt.Fprintf(w, ", %d of %d events", rc.Events, j.spec.Events)
	}
	if j.spec.Rate > 0 {
		fmt.Fprintf(w, ", %g of %g events/sec", rc.Rate, j.spec.Rate)
	}
	fmt.Fprintln(w)
	if !sp.First() && j.spec.Monitor {
		fmt.Fprintln(w, "Server sampling: left to the runner of the first segment")
	}
	if !sp.StartAt.IsZero() {
		fmt.Fprintf(w, "Start: %s, once every thread has connected\n", sp.StartAt.UTC().Format(time.RFC3339Nano))
	}
}

// SplitRunner registers this process as a runner of a split load in st
// when sp and a store ask for one: nil when not. Without a store the
// runner runs alone, as stderr is told; a split with a store needs
// --start-at. args is the command line after "run", kept without what may
// carry a password; the runners' unsaved results go to unsavedDir.
func (j *Job) SplitRunner(ctx context.Context, out, stderr io.Writer, st *store.Store, sp segment.Split, unsavedDir string, args []string) (*splitload.Runner, error) {
	switch {
	case !sp.On:
		return nil, nil
	case st == nil:
		fmt.Fprintln(stderr, "shakedown: --segment without --store: this runner's result will not be merged with the others'; give every runner the same --store (mysql://... or a shared file)")
		return nil, nil
	case sp.StartAt.IsZero():
		return nil, usage.Errorf("run: --segment with --store needs --start-at, the same for every runner, e.g. --start-at %s", time.Now().UTC().Add(time.Minute).Truncate(time.Minute).Format(time.RFC3339))
	}
	parts := splitload.LoadParts(j.Workload(), j.Target.Redacted(), j.Options())
	sr, err := splitload.Join(ctx, stderr, unsavedDir, st, sp, store.SplitRun, PublicCommand(append([]string{"run"}, args...)), parts, nil, nil)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "shakedown: %s\n", sr.Describe())
	return sr, nil
}
