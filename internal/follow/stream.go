package follow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/shakedown/shakedown/internal/target"
)

// reader is the state of one stream: the file it is in, the transaction
// being read, and the batch of complete ones.
type reader struct {
	file string
	cur  *txn
	b    *batch
	end  Position // after the last complete transaction or event outside one
}

// stream reads one stream from the saved position and applies it. done:
// the follow is over (ctx ended, caught up, Duration passed); otherwise err
// says why the stream broke, and a new one may go on.
func (f *follower) stream(ctx context.Context) (done bool, err error) {
	// A batch still being applied is waited for on every way out: the
	// next stream starts from the position it saves, or from before it.
	defer func() {
		if werr := f.wait(); werr != nil && err == nil {
			err = werr
		}
	}()
	syncer, err := f.syncer()
	if err != nil {
		return false, err
	}
	defer closeSyncer(syncer)
	st, err := f.start(syncer)
	if err != nil {
		if gone(err) {
			return false, &stopError{fmt.Errorf("%w: %v: copy again", ErrPositionGone, err)}
		}
		return false, fmt.Errorf("source: start reading the binary log at %s: %w", f.saved.Position, err)
	}
	r := &reader{file: f.saved.Position.File, b: newBatch(f.opts.Workers), end: f.saved.Position}
	for {
		if f.over() {
			return true, f.flush(ctx, r)
		}
		wait := f.opts.Interval
		if !r.b.empty() {
			wait = max(time.Millisecond, f.opts.BatchWait-time.Since(r.b.started))
		}
		ectx, cancel := context.WithTimeout(ctx, wait)
		ev, err := st.GetEvent(ectx)
		cancel()
		switch {
		case ctx.Err() != nil:
			// The changes read whole are applied with a context of their
			// own, so that a Ctrl-C saves where it stopped.
			fctx, fcancel := context.WithTimeout(context.Background(), queryBound)
			defer fcancel()
			return true, f.flush(fctx, r)
		case errors.Is(err, context.DeadlineExceeded):
			if err := f.flush(ctx, r); err != nil {
				return false, err
			}
			continue
		case err != nil:
			ferr := f.flush(ctx, r)
			if gone(err) {
				return false, &stopError{fmt.Errorf("%w: %v: copy again", ErrPositionGone, err)}
			}
			return false, errors.Join(fmt.Errorf("source: reading the binary log after %s: %w", r.end, err), ferr)
		}
		if err := f.event(ctx, r, ev); err != nil {
			return false, err
		}
		switch {
		case !f.holdAt.IsZero() && r.end.Reached(f.holdAt):
			if err := f.flush(ctx, r); err != nil {
				return false, err
			}
		case r.b.rows >= f.opts.BatchRows || (!r.b.empty() && time.Since(r.b.started) >= f.opts.BatchWait):
			// Applied while the next batch is read.
			if err := f.flushAsync(ctx, r); err != nil {
				return false, err
			}
		}
	}
}

// applyRetry applies b, again after a lost connection or a lock the
// workers took from each other (idempotent: the batch is applied whole
// again), for up to RetryFor.
func (f *follower) applyRetry(ctx context.Context, b *batch) error {
	started := time.Now()
	serial := false
	for attempt := 0; ; attempt++ {
		// A Ctrl-C gives the attempt a moment to end (stopGrace) before
		// it is cut short: the workers of a batch then commit all of it,
		// and a stopped follower leaves the target at a batch's end,
		// unless a lock holds it longer.
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), applyBound)
		stopCut := context.AfterFunc(ctx, func() { time.AfterFunc(stopGrace, cancel) })
		var err error
		if serial {
			err = f.applySerial(actx, b)
		} else {
			err = f.apply(actx, b)
		}
		stopCut()
		cancel()
		if err == nil {
			break
		}
		code := target.Code(err)
		if !target.IsConnLost(err) && !target.Transient(code) && !target.NotReady(err) {
			return &stopError{fmt.Errorf("%w; the position before these changes (%s) is saved", err, f.saved.Position)}
		}
		if time.Since(started) > f.opts.RetryFor || ctx.Err() != nil {
			return fmt.Errorf("%w (tried %d times)", err, attempt+1)
		}
		how := "again"
		if target.Transient(code) {
			// The workers' transactions locked each other out (gap
			// locks of neighbouring keys): on one connection they cannot.
			serial, how = true, "again on one connection"
		}
		f.logf("follow: %v; applying the batch %s", err, how)
		f.mu.Lock()
		f.stats.Reconnects++
		f.mu.Unlock()
		wait := min(time.Duration(attempt+1)*500*time.Millisecond, 5*time.Second)
		if serial {
			wait = 0
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
	return nil
}

// applyBound bounds one attempt at applying a batch; stopGrace is how
// long a stopped follower lets one finish.
const (
	applyBound = time.Minute
	stopGrace  = 3 * time.Second
)

// bigTxnRows is the most row changes of one transaction held in memory:
// a larger one is applied in parts as it is read. The position moves
// only at its end, so a follower stopped within it applies it whole
// again, idempotently; meanwhile the target shows part of it.
const bigTxnRows = 20_000

// applyPart applies the changes read so far of the transaction being read,
// after the complete ones before it.
func (f *follower) applyPart(ctx context.Context, r *reader) error {
	if err := f.wait(); err != nil {
		return err
	}
	if err := f.flushBatch(ctx, r); err != nil {
		return err
	}
	part := newBatch(f.opts.Workers)
	part.add(&txn{changes: r.cur.changes}, f.opts.Workers)
	if err := f.applyRetry(ctx, part); err != nil {
		return err
	}
	f.mu.Lock()
	f.stats.Rows += int64(part.rows)
	f.mu.Unlock()
	r.cur.changes, r.cur.parted = nil, true
	return nil
}

// over says the follow has reached its end: the caught-up point or its
// duration.
func (f *follower) over() bool {
	if f.opts.Duration > 0 && time.Since(f.started) >= f.opts.Duration {
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.opts.UntilCaughtUp && f.saved.Position.Reached(f.stop)
}

// event takes one binary log event.
func (f *follower) event(ctx context.Context, r *reader, ev *replication.BinlogEvent) error {
	f.mu.Lock()
	f.stats.Events++
	f.mu.Unlock()
	h := ev.Header
	ended := false
	switch e := ev.Event.(type) {
	case *replication.RotateEvent:
		r.file = string(e.NextLogName)
		if r.cur == nil {
			r.advance(Position{File: r.file, Pos: uint32(e.Position), GTID: r.end.GTID})
		}
		return nil
	case *replication.GTIDEvent, *replication.MariadbGTIDEvent, *replication.GtidTaggedLogEvent:
		r.cur = &txn{ts: h.Timestamp}
		return nil
	case *replication.RowsEvent:
		if r.cur == nil {
			r.cur = &txn{ts: h.Timestamp}
		}
		if err := f.rows(ctx, r.cur, h.EventType, e); err != nil {
			return err
		}
		if len(r.cur.changes) >= bigTxnRows {
			return f.applyPart(ctx, r)
		}
		return nil
	case *replication.XIDEvent:
		ended = true
		r.endTxn(f, Position{File: r.file, Pos: h.LogPos, GTID: gsetText(e.GSet, r.end.GTID)})
	case *replication.QueryEvent:
		return f.query(ctx, r, ev, e)
	}
	if !ended && r.cur == nil && h.LogPos > 0 {
		r.advance(Position{File: r.file, Pos: h.LogPos, GTID: r.end.GTID})
	}
	return nil
}

// advance moves the reader's end forward, never back (the description
// event a new stream starts with carries an earlier offset).
func (r *reader) advance(p Position) {
	if p.Reached(r.end) && p != r.end {
		r.end = p
		r.b.end, r.b.moved = p, true
		if r.b.started.IsZero() {
			r.b.started = time.Now()
		}
	}
}

// endTxn puts the transaction read into the batch.
func (r *reader) endTxn(f *follower, p Position) {
	if r.cur != nil {
		r.b.add(r.cur, f.opts.Workers)
	}
	r.cur = nil
	r.advance(p)
}

func gsetText(g mysql.GTIDSet, before string) string {
	if g == nil {
		return before
	}
	return g.String()
}

// query takes a statement event: a transaction's BEGIN or COMMIT, or a
// statement of its own (DDL, account changes).
func (f *follower) query(ctx context.Context, r *reader, ev *replication.BinlogEvent, e *replication.QueryEvent) error {
	q := strings.TrimSpace(string(e.Query))
	upper := strings.ToUpper(q)
	p := Position{File: r.file, Pos: ev.Header.LogPos, GTID: gsetText(e.GSet, r.end.GTID)}
	switch {
	case upper == "BEGIN" || strings.HasPrefix(upper, "XA START") || strings.HasPrefix(upper, "SAVEPOINT"):
		if r.cur == nil {
			r.cur = &txn{ts: ev.Header.Timestamp}
		}
		return nil
	case upper == "COMMIT" || strings.HasPrefix(upper, "XA COMMIT") || strings.HasPrefix(upper, "XA END") || strings.HasPrefix(upper, "XA PREPARE"):
		r.endTxn(f, p)
		return nil
	case upper == "ROLLBACK":
		r.cur = nil
		r.advance(p)
		return nil
	}
	d := classify(q, string(e.Schema), f.dbmap)
	if !d.followed {
		r.cur = nil
		r.advance(p)
		f.mu.Lock()
		f.stats.Skipped++
		f.mu.Unlock()
		return nil
	}
	// What came before it is applied first, so the statement meets the
	// tables as the source had them.
	if err := f.flush(ctx, r); err != nil {
		return err
	}
	r.cur = nil
	if err := f.ddl(ctx, d, p); err != nil {
		return err
	}
	r.advance(p)
	return f.flush(ctx, r)
}

// rows takes a row event of the transaction being read.
func (f *follower) rows(ctx context.Context, t *txn, et replication.EventType, e *replication.RowsEvent) error {
	db, name := string(e.Table.Schema), string(e.Table.Table)
	if _, ok := f.dbmap[db]; !ok {
		f.mu.Lock()
		f.stats.Skipped++
		f.mu.Unlock()
		return nil
	}
	tb, err := f.table(ctx, db, name)
	if err != nil {
		if target.IsConnLost(err) || target.Transient(target.Code(err)) || target.NotReady(err) {
			// The target is away: a new stream reads the table again.
			return err
		}
		return &stopError{err}
	}
	conv := func(row []any) ([]any, error) {
		out := make([]any, len(row))
		for i, v := range row {
			x, err := tb.value(i, v)
			if err != nil {
				return nil, &stopError{err}
			}
			out[i] = x
		}
		if len(row) != len(tb.cols) {
			return nil, &stopError{fmt.Errorf("table %s: the binary log has %d columns, the target's table %d: was it changed on one side only? compare them with verify", tb.name, len(row), len(tb.cols))}
		}
		return out, nil
	}
	switch e.Type() {
	case replication.EnumRowsEventTypeInsert:
		for _, row := range e.Rows {
			v, err := conv(row)
			if err != nil {
				return err
			}
			t.changes = append(t.changes, change{t: tb, row: v})
		}
	case replication.EnumRowsEventTypeDelete:
		for _, row := range e.Rows {
			v, err := conv(row)
			if err != nil {
				return err
			}
			t.changes = append(t.changes, change{t: tb, row: v, delete: true})
		}
	case replication.EnumRowsEventTypeUpdate:
		for i := 0; i+1 < len(e.Rows); i += 2 {
			before, err := conv(e.Rows[i])
			if err != nil {
				return err
			}
			after, err := conv(e.Rows[i+1])
			if err != nil {
				return err
			}
			if !tb.sameKey(before, after) {
				t.changes = append(t.changes, change{t: tb, row: before, delete: true})
			}
			t.changes = append(t.changes, change{t: tb, row: after})
		}
	default:
		return &stopError{fmt.Errorf("table %s: a row event of kind %v the follower does not know", tb.name, et)}
	}
	return nil
}

// table is the definition of a followed table, read from the target on
// first use (and again after DDL).
func (f *follower) table(ctx context.Context, db, name string) (*table, error) {
	if t, ok := f.tables[db+"."+name]; ok {
		return t, nil
	}
	qctx, cancel := context.WithTimeout(ctx, queryBound)
	defer cancel()
	if err := f.loadTables(qctx, db, f.dbmap[db]); err != nil {
		return nil, err
	}
	if t, ok := f.tables[db+"."+name]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("table %s.%s has changes in the binary log but the target has no table %s.%s: copy it, or apply its CREATE TABLE by hand", db, name, f.dbmap[db], name)
}

// flush applies the batch and saves the position after it. A batch that
// fails for want of a connection or a lock is applied again, whole, after
// a pause: applying is idempotent.
func (f *follower) flush(ctx context.Context, r *reader) error {
	if err := f.wait(); err != nil {
		return err
	}
	if err := f.flushBatch(ctx, r); err != nil {
		return err
	}
	return f.checkHold(ctx)
}

// applied is what applying a batch in the background came to: its error,
// and whether a hold was asked for when its position was saved.
type applied struct {
	err    error
	holdOK bool
}

// flushAsync starts applying the batch while the reader goes on with the
// next one; the batch before it is waited for first, so batches are
// applied one after the other in order, and a batch after one that failed
// is never applied.
func (f *follower) flushAsync(ctx context.Context, r *reader) error {
	if r.b.empty() {
		return nil
	}
	if err := f.wait(); err != nil {
		return err
	}
	b := r.b
	r.b = newBatch(f.opts.Workers)
	f.inflight = make(chan applied, 1)
	go func(done chan<- applied) {
		err := f.applyBatch(ctx, b)
		a := applied{err: err}
		if err == nil {
			qctx, cancel := context.WithTimeout(ctx, queryBound)
			_, a.holdOK, a.err = f.holdRequest(qctx)
			cancel()
		}
		done <- a
	}(f.inflight)
	return nil
}

// wait waits for the batch being applied in the background, if any, and
// takes the hold request it read: a hold here, or a position to stop at.
func (f *follower) wait() error {
	if f.inflight == nil {
		return nil
	}
	a := <-f.inflight
	f.inflight = nil
	if a.err != nil {
		return a.err
	}
	if !a.holdOK {
		f.holdAt = Position{}
		return nil
	}
	// The same rule as checkHold's, on the row read after the batch.
	ctx, cancel := context.WithTimeout(context.Background(), holdFor+queryBound)
	defer cancel()
	return f.checkHold(ctx)
}

// flushBatch applies the batch and saves the position after it, in the
// reader's goroutine; with nothing to apply it keeps the saved row's
// heartbeat fresh.
func (f *follower) flushBatch(ctx context.Context, r *reader) error {
	b := r.b
	if b.empty() {
		if time.Since(f.saved.Heartbeat) < time.Second {
			return nil
		}
		// Nothing to apply: the heartbeat alone, so that a reader of the
		// row sees the follower at work.
		f.fillSaved()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), queryBound)
		defer cancel()
		return save(sctx, f.dst.DB, f.saved)
	}
	r.b = newBatch(f.opts.Workers)
	return f.applyBatch(ctx, b)
}

// applyBatch applies b and saves the position after it.
func (f *follower) applyBatch(ctx context.Context, b *batch) error {
	if err := f.applyRetry(ctx, b); err != nil {
		return err
	}
	f.mu.Lock()
	f.saved.Position = b.end
	f.stats.Rows += int64(b.rows)
	f.stats.Txns += int64(b.txns)
	f.stats.Position = b.end
	if b.lastTS != 0 {
		f.saved.EventTime = time.Unix(int64(b.lastTS), 0)
		f.stats.Lag = max(0, time.Since(f.saved.EventTime).Seconds())
	}
	f.fillSavedLocked()
	f.mu.Unlock()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), queryBound)
	defer cancel()
	return save(sctx, f.dst.DB, f.saved)
}

func (f *follower) fillSaved() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fillSavedLocked()
}

func (f *follower) fillSavedLocked() {
	f.saved.Events, f.saved.Rows, f.saved.LagSeconds = f.stats.Events, f.stats.Rows, f.stats.Lag
}

// ticker reports progress every interval, reads the source's position for
// the lag in bytes, and keeps the saved row's heartbeat fresh while
// nothing is applied.
func (f *follower) ticker(ctx context.Context, stop <-chan struct{}) {
	t := time.NewTicker(f.opts.Interval)
	defer t.Stop()
	f.lastTick = time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-stop:
			return
		case now := <-t.C:
			qctx, cancel := context.WithTimeout(ctx, f.opts.Interval)
			srcAt, err := SourcePosition(qctx, f.src)
			cancel()
			f.mu.Lock()
			if err == nil {
				f.sourceAt = srcAt
			}
			s := &f.stats
			s.Elapsed = now.Sub(f.started)
			s.Seconds = s.Elapsed.Seconds()
			s.LagBytes = s.Position.behind(f.sourceAt)
			if s.LagBytes == 0 {
				s.Lag = 0
			} else if !f.saved.EventTime.IsZero() {
				s.Lag = max(s.Lag, now.Sub(f.saved.EventTime).Seconds())
			}
			dt := now.Sub(f.lastTick).Seconds()
			s.EventsPerSec, s.RowsPerSec = float64(s.Events-f.lastEvents)/dt, float64(s.Rows-f.lastRows)/dt
			f.lastTick, f.lastEvents, f.lastRows = now, s.Events, s.Rows
			f.lags = append(f.lags, s.Lag)
			snap := *s
			f.mu.Unlock()
			if f.opts.OnProgress != nil {
				f.opts.OnProgress(snap)
			}
		}
	}
}
