package verify

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math/big"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shakedown/shakedown/internal/schema"
)

// Options control a verify run. The zero value of each field means its
// default.
type Options struct {
	// Databases to compare, by the same name on both sides. Empty: the
	// source URL's database against the target URL's.
	Databases []string
	// Tables limits the check to these tables ("db.t", or "t" in any
	// compared database); shell patterns (*, ?) are allowed.
	Tables []string
	// Exclude skips these tables; same forms as Tables.
	Exclude []string
	// Where limits the check to rows matching this SQL condition, applied
	// the same on both sides.
	Where string
	// Threads is how many chunks are checked at once (default 4).
	Threads int
	// ChunkTime is the time one chunk's checksum should take (default 100ms).
	ChunkTime time.Duration
	// MaxLoad pauses the check while the source's Threads_running exceeds
	// it (0: never).
	MaxLoad int
	// Recheck is how many times differing rows are read again, after
	// RecheckWait, before they are reported: a live source's in-flight
	// changes are not differences. 0 disables it.
	Recheck     int
	RecheckWait time.Duration
	// Rechecks is how many times a chunk that differs is compared again, each time after
	// Settle returns (0: none, the default). It needs Settle.
	Rechecks int
	// Settle, when set, returns once the changes made on the source up to the moment it is
	// called have reached the target (a follower's applied position has passed the source's
	// position read at the call), or an error (its context ended, the follower stopped).
	// It is called from several goroutines at once, once before each recheck; an error
	// ends the run.
	Settle func(ctx context.Context) error
	// Align, when set, makes those rechecks exact while the source keeps
	// changing: it opens the source's snapshot at a known position of its
	// binary log and returns once the target holds exactly that position
	// (the follower applied the source up to it and waits there); verify
	// opens the target's snapshot and then calls release, which lets the
	// follower go on. ErrNotAligned: the recheck falls back to Settle.
	Align func(ctx context.Context) (src Snapshot, release func(), err error)
	// MaxRows is how many differing rows per table the report lists (all
	// are counted and in the repair SQL). Default 1000.
	MaxRows int
	// Fix receives repair SQL when not nil.
	Fix io.Writer
	// FixTriggers says what the repair SQL does with a target table that
	// has triggers; "" is FixTriggersSkip.
	FixTriggers FixTriggers
	// Checkpoint, when not nil, records finished chunks and lets a run
	// skip the chunks an earlier one finished.
	Checkpoint *Checkpoint
	// Progress receives a progress line per table every ProgressInterval
	// (default 2s) and when it finishes; nil for none.
	Progress         io.Writer
	ProgressInterval time.Duration
	// OnChunk, when set, is called after each chunk is finished or skipped
	// (from several goroutines at once).
	OnChunk func(ChunkEvent)

	// For tests: a fixed chunk size in rows (0: adaptive), a hook run
	// when a chunk's first reading finds differences, before any re-read,
	// and a checksum form whatever the servers offer.
	chunkRows     int
	onDiffs       func()
	forceChecksum *checksum
}

// ChunkEvent tells OnChunk about one chunk.
type ChunkEvent struct {
	Table         string
	Seq           int
	Resumed       bool // skipped: an earlier run finished it
	RowsSource    int64
	DifferingRows int64
}

func (o *Options) defaults() {
	if o.Threads <= 0 {
		o.Threads = 4
	}
	if o.ChunkTime <= 0 {
		o.ChunkTime = 100 * time.Millisecond
	}
	if o.MaxRows <= 0 {
		o.MaxRows = 1000
	}
	if o.RecheckWait <= 0 {
		o.RecheckWait = 500 * time.Millisecond
	}
	if o.ProgressInterval <= 0 {
		o.ProgressInterval = 2 * time.Second
	}
}

// Snapshot is one side's read-only transaction: what Options.Align opens
// on the source (an *sql.Tx is one).
type Snapshot interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	Rollback() error
}

// ErrNotAligned is Options.Align saying it cannot line the two sides up
// this time (the source keeps no position with its snapshots, the follower
// passed the position): the recheck falls back to Settle.
var ErrNotAligned = errors.New("the two sides cannot be read at one position")

// ErrInterrupted means the run was stopped before it finished.
var ErrInterrupted = errors.New("verify interrupted")

// runner is one verify run.
type runner struct {
	src, dst *schema.Side
	opts     Options
	checksum checksum
	fix      *fixWriter
	prog     *progress
	load     *throttle
	srcProbe *writeProbe // both nil when Recheck is 0
	dstProbe *writeProbe
	jobs     chan *job
	pending  sync.WaitGroup
	stop     context.CancelFunc // ends the run's work early: Settle failed
	stopped  runStop
	aligned  atomic.Int64 // rechecks read at one position through Align
}

// tableJob is one table compared on both sides.
type tableJob struct {
	r                *runner
	opts             *Options
	name             string     // db.table on the source
	srcName, dstName string     // quoted db.table on each side
	dstDB, dstTable  string     // the target's database and table, for repair SQL
	triggers         []*trigger // the target table's, when repair SQL is written
	specs            []*colSpec
	key              *keyInfo
	scheme           scheme
	checksumSQL      string
	hashSQL          string
	sizer            *sizer
	estRows          int64
	minKey, maxKey   *big.Int // schemeInt: the source's key range when planned
	rep              *TableReport

	mu       sync.Mutex
	inFlight int  // chunks dispatched and not finished
	planned  bool // every chunk has been dispatched or skipped
	finished bool
	started  time.Time
	rowsDone int64
	failed   error
}

// job is a chunk to check, or differing rows to read again.
type job struct {
	t       *tableJob
	c       *chunk
	recheck *chunkOutcome // rows to read again; nil for a whole-chunk check
	round   int
	settled int // whole-chunk comparisons done again after Settle
}

// Run compares the source's tables with the target's and returns the
// report. The error is non-nil when the check itself failed (for some
// tables, or was interrupted); the report then holds what was found.
// Differences are not an error: see Report.Equal.
func Run(ctx context.Context, src, dst *schema.Side, opts Options) (*Report, error) {
	opts.defaults()
	started := time.Now()
	rep := &Report{
		Version:      ReportVersion,
		Source:       src.Target.Redacted(),
		Target:       dst.Target.Redacted(),
		SourceServer: src.Server,
		TargetServer: dst.Server,
		Started:      started.UTC().Truncate(time.Second),
	}
	r := &runner{src: src, dst: dst, opts: opts, jobs: make(chan *job)}
	// The workers' context, ended early when Settle fails; ctx alone says
	// whether the run was interrupted.
	workCtx, stop := context.WithCancel(ctx)
	defer stop()
	r.stop = stop
	switch {
	case opts.forceChecksum != nil:
		r.checksum = *opts.forceChecksum
	case !exactSum(ctx, src.DB) || !exactSum(ctx, dst.DB):
		r.checksum = checksumQuarters
	case probeChecksum(ctx, src.DB) && probeChecksum(ctx, dst.DB):
		r.checksum = checksumCRCs
	}
	rep.Rules = rules(r.checksum)
	if opts.Fix != nil {
		r.fix = newFixWriter(opts.Fix, rep.Source, rep.Target, opts.FixTriggers)
	}
	tables, err := r.plan(ctx, rep)
	if err != nil {
		return nil, err
	}
	if err := r.startFix(ctx, tables); err != nil {
		return nil, err
	}
	if opts.Recheck > 0 {
		r.srcProbe, r.dstProbe = newWriteProbe(ctx, src.DB), newWriteProbe(ctx, dst.DB)
	}
	r.prog = newProgress(opts.Progress)
	r.load = &throttle{db: src.DB, max: opts.MaxLoad, prog: r.prog}

	progCtx, stopProg := context.WithCancel(ctx)
	progDone := make(chan struct{})
	go func() { defer close(progDone); r.prog.loop(progCtx, opts.ProgressInterval, tables) }()

	var workers sync.WaitGroup
	for range opts.Threads {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for j := range r.jobs {
				r.process(workCtx, j)
				r.pending.Done()
			}
		}()
	}
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		r.produce(workCtx, tables)
	}()
	go func() {
		<-produced
		r.pending.Wait()
		close(r.jobs)
	}()
	workers.Wait()
	stopProg()
	<-progDone

	var failures []error
	for _, t := range tables {
		t.mu.Lock()
		if !t.finished {
			t.finishLocked()
		}
		if t.failed != nil {
			t.rep.Error = t.failed.Error()
			failures = append(failures, fmt.Errorf("%s: %w", t.name, t.failed))
		}
		t.mu.Unlock()
	}
	rep.Seconds = time.Since(started).Seconds()
	rep.Equal = true
	for _, t := range rep.Tables {
		t.Equal = len(t.SchemaDifferences) == 0 && t.DifferingRows == 0 && t.Error == ""
		rep.Equal = rep.Equal && t.Equal
		rep.DifferingRows += t.DifferingRows
		rep.SchemaDifferences += len(t.SchemaDifferences)
		rep.ChunksResumed += t.ChunksResumed
		rep.ChunksRechecked += t.ChunksRechecked
		rep.AlignedRechecks = int(r.aligned.Load())
		rep.Rechecks += t.Rechecks
		rep.ChunksStillDiffering += t.ChunksStillDiffering
		if t.Error != "" {
			rep.Failed++
		}
	}
	if err := r.fix.close(); err != nil {
		failures = append(failures, err)
	}
	if ctx.Err() != nil {
		rep.Interrupted = true
		rep.Equal = false
		return rep, fmt.Errorf("%w: %w", ErrInterrupted, ctx.Err())
	}
	if err := r.stopped.err(); err != nil {
		rep.Interrupted = true
		rep.Equal = false
		return rep, fmt.Errorf("verify: wait for the follower: %w", err)
	}
	if len(failures) > 0 {
		rep.Equal = false
		return rep, fmt.Errorf("check %s: %w", plural(len(failures), "table"), errors.Join(failures...))
	}
	return rep, nil
}

// produce plans every table's chunks in turn and hands them to the
// workers; chunks an earlier run finished are taken from the checkpoint.
func (r *runner) produce(ctx context.Context, tables []*tableJob) {
	for _, t := range tables {
		if ctx.Err() != nil {
			return
		}
		r.produceTable(ctx, t)
	}
}

func (r *runner) produceTable(ctx context.Context, t *tableJob) {
	defer func() {
		t.mu.Lock()
		t.planned = true
		t.maybeFinishLocked()
		t.mu.Unlock()
	}()
	t.mu.Lock()
	t.started = time.Now()
	t.mu.Unlock()
	ck := r.opts.Checkpoint
	replay, done, err := ck.table(t.name, t.scheme, t.key.Names())
	if err != nil {
		t.fail(err)
		return
	}
	p, err := newPlanner(ctx, t, replay)
	if err != nil {
		t.fail(err)
		return
	}
	t.minKey, t.maxKey = p.min, p.max
	for {
		c, replayed, err := p.nextChunk(ctx)
		if err != nil {
			t.fail(err)
			return
		}
		if c == nil || t.hasFailed() {
			return
		}
		if replayed {
			if d := done[c.Seq]; d != nil {
				t.finishChunk(c, d.outcome(), true)
				continue
			}
		} else if err := ck.plan(t.name, c); err != nil {
			t.fail(err)
			return
		}
		t.mu.Lock()
		t.inFlight++
		t.mu.Unlock()
		r.pending.Add(1)
		select {
		case r.jobs <- &job{t: t, c: c}:
		case <-ctx.Done():
			r.pending.Done()
			return
		}
	}
}

// process checks one chunk, or re-reads a chunk's differing rows.
func (r *runner) process(ctx context.Context, j *job) {
	t := j.t
	if ctx.Err() != nil || t.hasFailed() {
		t.chunkAbandoned()
		return
	}
	if err := r.load.wait(ctx); err != nil {
		t.chunkAbandoned()
		return
	}
	var out *chunkOutcome
	var err error
	if j.recheck != nil {
		out, err = t.recheck(ctx, j.recheck)
	} else {
		start := time.Now()
		out, err = t.checkChunk(ctx, j.c, j.settled > 0)
		if err == nil {
			var span *big.Int
			if j.c.ILo != nil && j.c.IHi != nil {
				span = new(big.Int).Sub(j.c.IHi, j.c.ILo)
				span.Add(span, big.NewInt(1))
			}
			t.sizer.observe(max(out.rowsSource, out.rowsTarget), span, time.Since(start))
		}
	}
	if err != nil {
		if ctx.Err() == nil {
			t.fail(err)
		}
		t.chunkAbandoned()
		return
	}
	if len(out.diffs) > 0 && j.recheck == nil && j.settled == 0 && r.opts.onDiffs != nil {
		r.opts.onDiffs()
	}
	if len(out.diffs) > 0 && j.recheck == nil && j.settled < r.opts.Rechecks && r.opts.Settle != nil {
		r.scheduleSettle(ctx, &job{t: t, c: j.c, settled: j.settled + 1})
		return
	}
	out.settled = j.settled
	if len(out.diffs) > 0 && j.round < r.opts.Recheck && !(j.recheck != nil && sameDiffs(j.recheck.diffs, out.diffs)) &&
		!(r.srcProbe.quiet(ctx) && r.dstProbe.quiet(ctx)) {
		r.scheduleRecheck(ctx, &job{t: t, c: j.c, recheck: out, round: j.round + 1, settled: j.settled})
		return
	}
	t.finishChunk(j.c, out, false)
}

// finishChunk records a checked (or resumed) chunk.
func (t *tableJob) finishChunk(c *chunk, out *chunkOutcome, resumed bool) {
	var ckErr error
	if !resumed {
		ckErr = t.r.opts.Checkpoint.done(t.name, c.Seq, out)
	}
	t.r.fix.write(t, out.diffs)
	var differing int64
	for _, d := range out.diffs {
		differing += d.Count
	}
	t.mu.Lock()
	t.rep.RowsSource += out.rowsSource
	t.rep.RowsTarget += out.rowsTarget
	t.rep.Chunks++
	if resumed {
		t.rep.ChunksResumed++
	} else {
		t.inFlight--
	}
	t.rowsDone += out.rowsSource
	t.rep.DifferingRows += differing
	if out.settled > 0 {
		t.rep.ChunksRechecked++
		t.rep.Rechecks += out.settled
		if len(out.diffs) > 0 {
			t.rep.ChunksStillDiffering++
		}
	}
	for _, d := range out.diffs {
		if len(t.rep.Rows) < t.opts.MaxRows {
			t.rep.Rows = append(t.rep.Rows, d)
		} else {
			t.rep.RowsNotListed += d.Count
		}
	}
	if ckErr != nil && t.failed == nil {
		t.failed = ckErr
	}
	t.maybeFinishLocked()
	t.mu.Unlock()
	if t.opts.OnChunk != nil {
		t.opts.OnChunk(ChunkEvent{Table: t.name, Seq: c.Seq, Resumed: resumed, RowsSource: out.rowsSource, DifferingRows: differing})
	}
}

// chunkAbandoned accounts for a chunk that will not finish (failure or
// interruption).
func (t *tableJob) chunkAbandoned() {
	t.mu.Lock()
	t.inFlight--
	t.maybeFinishLocked()
	t.mu.Unlock()
}

func (t *tableJob) fail(err error) {
	t.mu.Lock()
	if t.failed == nil {
		t.failed = err
	}
	t.mu.Unlock()
}

func (t *tableJob) hasFailed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed != nil
}

func (t *tableJob) maybeFinishLocked() {
	if t.planned && t.inFlight == 0 && !t.finished {
		t.finishLocked()
	}
}

// finishLocked closes the table's report: rows in key order, time taken.
func (t *tableJob) finishLocked() {
	t.finished = true
	if t.r.fix != nil && len(t.triggers) > 0 && t.rep.DifferingRows > 0 {
		names := make([]string, len(t.triggers))
		for i, tr := range t.triggers {
			names[i] = tr.name
		}
		if t.opts.FixTriggers == FixTriggersDrop {
			t.rep.Notes = append(t.rep.Notes, "the target's table has triggers ("+strings.Join(names, ", ")+
				"): the repair SQL drops them around its statements, the table locked, and recreates them")
		} else {
			t.rep.Notes = append(t.rep.Notes, "the target's table has triggers ("+strings.Join(names, ", ")+
				"), which its repair would fire: the repair SQL holds its statements as comments only; --fix-sql-triggers=drop repairs it with the triggers dropped meanwhile")
		}
	}
	if !t.started.IsZero() {
		t.rep.Seconds = time.Since(t.started).Seconds()
	}
	sort.SliceStable(t.rep.Rows, func(i, j int) bool {
		a, b := t.rep.Rows[i], t.rep.Rows[j]
		if a.native != nil && b.native != nil {
			return t.key.compareKeys(a.native, b.native) < 0
		}
		return a.KeyString() < b.KeyString()
	})
	t.r.prog.tableDone(t)
}
