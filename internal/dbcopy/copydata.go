package dbcopy

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shakedown/shakedown/internal/escape"
	"github.com/shakedown/shakedown/internal/loaddata"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/verify"
)

// job is one range of a table to copy.
type job struct {
	p     *tablePlan
	sp    *verify.Splitter
	r     *verify.Range
	clean bool // an earlier run may have loaded part of it: empty it first
}

// dataRun is the state the workers share.
type dataRun struct {
	c        *copier
	noLoad   atomic.Bool // the target refused LOAD DATA LOCAL
	fallback sync.Once
	mu       sync.Mutex
	started  time.Time
	rows     int64
	bytes    int64
	chunks   int
	estRows  int64
	spans    map[*tablePlan][2]time.Time
	failOnce sync.Once
	err      error
}

// copyData copies every table's rows, Threads ranges at a time.
func (c *copier) copyData(ctx context.Context) error {
	d := &dataRun{c: c, started: time.Now(), spans: map[*tablePlan][2]time.Time{}}
	for _, p := range c.plans {
		d.estRows += max(p.t.Rows, 0)
	}
	snap, err := openSnapshot(ctx, c.src.DB, c.src.Server.Flavour, c.opts.Consistency, c.opts.Threads, c.res)
	if err != nil {
		return err
	}
	defer snap.close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan job)
	var wg sync.WaitGroup
	for _, sc := range snap.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := d.work(ctx, sc, jobs); err != nil {
				d.fail(err)
				cancel()
			}
		}()
	}
	perr := d.produce(ctx, jobs)
	close(jobs)
	wg.Wait()
	if perr != nil && d.err == nil {
		d.err = perr
	}
	c.res.DataSeconds = time.Since(d.started).Seconds()
	c.res.Rows, c.res.Bytes = d.rows, d.bytes
	c.res.Loader = "load data local"
	if d.noLoad.Load() {
		c.res.Loader = "insert"
	}
	// A small subset's rate is mostly the cost per range, not per row:
	// too little to say what the whole would take.
	if c.res.Subset && (d.rows >= 100_000 || c.res.DataSeconds >= 10) {
		for _, p := range c.plans {
			c.res.FullRowsEst += max(p.t.Rows, 0)
		}
		c.res.FullEstimate = float64(c.res.FullRowsEst) / (float64(d.rows) / c.res.DataSeconds)
	}
	for p, s := range d.spans {
		p.res.Seconds = s[1].Sub(s[0]).Seconds()
	}
	for _, p := range c.plans {
		if p.res.Seconds > 0 {
			p.res.RowsPerS = float64(p.res.Rows) / p.res.Seconds
			p.res.GBPerHour = float64(p.res.Bytes) / 1e9 / (p.res.Seconds / 3600)
		}
	}
	return d.err
}

func (d *dataRun) fail(err error) {
	d.failOnce.Do(func() { d.err = err })
}

// cursor is a table whose ranges are being handed out.
type cursor struct {
	p      *tablePlan
	sp     *verify.Splitter
	replay int            // ranges the checkpoint planned, cut again first
	done   map[int]ckDone // ranges the checkpoint finished
	n      int            // ranges cut so far
}

// produce cuts the tables into ranges and hands them out, one range of
// each of up to Threads tables in turn (largest tables first): loads into
// several tables at once contend less on the target than as many into one
// table, where every page split of an index waits for the others. Ranges
// a checkpoint finished are counted and skipped.
func (d *dataRun) produce(ctx context.Context, jobs chan<- job) error {
	next := 0
	var active []*cursor
	for {
		for len(active) < d.c.opts.Threads && next < len(d.c.plans) {
			p := d.c.plans[next]
			next++
			replay, done := d.c.ck.replay(p.res.Table)
			sp, err := verify.NewSplitter(ctx, d.c.src.DB, p.t, verify.SplitOptions{Where: p.cond, Rows: d.c.opts.ChunkRows, Replay: replay})
			if err != nil {
				return fmt.Errorf("plan ranges of %s: %w", p.res.Table, err)
			}
			active = append(active, &cursor{p: p, sp: sp, replay: len(replay), done: done})
		}
		if len(active) == 0 {
			return nil
		}
		kept := active[:0]
		for _, cur := range active {
			more, err := d.handOut(ctx, cur, jobs)
			if err != nil {
				return err
			}
			if more {
				kept = append(kept, cur)
			}
		}
		active = kept
	}
}

// handOut cuts cur's next range and hands it out (or counts it, when the
// checkpoint says it is done); false after the table's last range.
func (d *dataRun) handOut(ctx context.Context, cur *cursor, jobs chan<- job) (bool, error) {
	p := cur.p
	r, err := cur.sp.Next(ctx)
	if err != nil {
		return false, fmt.Errorf("plan ranges of %s: %w", p.res.Table, err)
	}
	if r == nil {
		return false, nil
	}
	replayed := cur.n < cur.replay
	cur.n++
	if f, ok := cur.done[r.Seq]; ok {
		d.record(p, f.Rows, f.Bytes, time.Time{})
		return true, nil
	}
	if !replayed {
		if err := d.c.ck.plan(p.res.Table, r.Seq, r.Bounds); err != nil {
			return false, err
		}
	}
	select {
	case jobs <- job{p: p, sp: cur.sp, r: r, clean: replayed}:
		return true, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// work copies ranges until jobs closes, reading through sc (the worker's
// snapshot) and writing through its own target connection.
func (d *dataRun) work(ctx context.Context, sc *sql.Conn, jobs <-chan job) error {
	dc, err := d.c.dst.DB.Conn(ctx)
	if err != nil {
		return fmt.Errorf("target: connect: %w", err)
	}
	defer dc.Close()
	for j := range jobs {
		if ctx.Err() != nil {
			continue // drain: the producer stops at the cancel
		}
		started := time.Now()
		rows, n, err := d.copyRange(ctx, sc, dc, j)
		if err != nil {
			return err
		}
		j.sp.Observe(j.r, rows)
		if err := d.c.ck.finished(j.p.res.Table, j.r.Seq, rows, n); err != nil {
			return err
		}
		d.record(j.p, rows, n, started)
	}
	return nil
}

// rangeTries is how many times a range is copied when the target rolls
// the copy back for a deadlock or a lock wait (target.Transient).
const rangeTries = 5

// copyRange copies j's range; when the target rolls the copy back for a
// deadlock or a lock wait, it empties the range (an earlier INSERT of the
// range may have stayed) and copies it again, up to rangeTries times.
// Concurrent loads into one table deadlock now and then.
func (d *dataRun) copyRange(ctx context.Context, sc, dc *sql.Conn, j job) (rows, n int64, err error) {
	for try := 1; ; try++ {
		rows, n, err = d.copyRangeOnce(ctx, sc, dc, j)
		if err == nil || try == rangeTries || !target.Transient(target.Code(err)) {
			return rows, n, err
		}
		d.c.logf("%v: copying the range again (try %d of %d)", err, try+1, rangeTries)
		j.clean = true
		select {
		case <-time.After(time.Duration(try) * 100 * time.Millisecond):
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		}
	}
}

func (d *dataRun) copyRangeOnce(ctx context.Context, sc, dc *sql.Conn, j job) (rows, n int64, err error) {
	if j.clean {
		q := "DELETE FROM " + escape.Qualified(j.p.dstDB, j.p.t.Name)
		if j.r.Where != "" {
			q += " WHERE " + j.r.Where
		}
		if _, err := dc.ExecContext(ctx, q, j.r.Args...); err != nil {
			return 0, 0, fmt.Errorf("target: empty range %s of %s: %w", j.r.Label, j.p.res.Table, err)
		}
	}
	for {
		loadData := !d.noLoad.Load()
		rs, err := sc.QueryContext(ctx, j.p.chunkQuery(j.r.Where), j.r.Args...)
		if err != nil {
			return 0, 0, fmt.Errorf("source: read %s %s: %w", j.p.res.Table, j.r.Label, err)
		}
		s := newRowScanner(rs, len(j.p.literal))
		if loadData {
			rows, n, err = j.p.loadChunk(ctx, dc, s)
		} else {
			rows, n, err = j.p.insertChunk(ctx, dc, s)
		}
		rs.Close()
		if loadData && err != nil && loaddata.Refused(err) {
			d.fallback.Do(func() {
				d.noLoad.Store(true)
				d.c.logf("the target refuses LOAD DATA LOCAL INFILE (%v): copying with multi-row INSERTs", err)
			})
			continue // nothing was loaded: read the range again
		}
		if err != nil {
			return 0, 0, fmt.Errorf("copy %s %s: %w", j.p.res.Table, j.r.Label, err)
		}
		return rows, n, nil
	}
}

// record adds a finished range (started is zero for one an earlier run
// finished) and reports progress.
func (d *dataRun) record(p *tablePlan, rows, n int64, started time.Time) {
	d.mu.Lock()
	p.res.Rows += rows
	p.res.Bytes += n
	p.res.Chunks++
	d.rows += rows
	d.bytes += n
	d.chunks++
	if !started.IsZero() {
		s, ok := d.spans[p]
		if !ok || started.Before(s[0]) {
			s[0] = started
		}
		s[1] = time.Now()
		d.spans[p] = s
	}
	pr := Progress{Table: p.res.Table, TableRows: p.res.Rows, TableEst: p.t.Rows, Rows: d.rows, EstRows: d.estRows,
		Bytes: d.bytes, Elapsed: time.Since(d.started)}
	chunks := d.chunks
	d.mu.Unlock()
	if d.c.opts.OnProgress != nil {
		d.c.opts.OnProgress(pr)
	}
	if d.c.opts.afterChunk != nil && !started.IsZero() {
		d.c.opts.afterChunk(chunks)
	}
}
