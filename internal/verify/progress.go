package verify

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// progress writes a line per table in progress every interval, and one
// when a table finishes. Safe for concurrent use; a nil writer makes it
// silent.
type progress struct {
	mu sync.Mutex
	w  io.Writer
}

func newProgress(w io.Writer) *progress { return &progress{w: w} }

func (p *progress) printf(format string, args ...any) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format, args...)
}

// loop prints until ctx ends.
func (p *progress) loop(ctx context.Context, every time.Duration, tables []*tableJob) {
	if p == nil || p.w == nil {
		return
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for _, t := range tables {
			t.mu.Lock()
			active := !t.started.IsZero() && !t.finished
			done, est, since := t.rowsDone, t.estRows, time.Since(t.started)
			t.mu.Unlock()
			if active {
				p.printf("verify: %s\n", progressLine(t.name, done, est, since))
			}
		}
	}
}

// progressLine is "db.t [#####.....]  52%  520000/1000000 rows  410k rows/s  ETA 1s".
func progressLine(name string, done, est int64, elapsed time.Duration) string {
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(done) / s
	}
	var b strings.Builder
	b.WriteString(name)
	if est > done && est > 0 {
		frac := float64(done) / float64(est)
		n := int(frac * 20)
		fmt.Fprintf(&b, " [%s%s] %3.0f%%  %d/~%d rows  %s rows/s", strings.Repeat("#", n), strings.Repeat(".", 20-n), frac*100, done, est, human(rate))
		if rate > 0 {
			eta := time.Duration(float64(est-done) / rate * float64(time.Second))
			fmt.Fprintf(&b, "  ETA %s", eta.Round(time.Second))
		}
	} else {
		fmt.Fprintf(&b, "  %d rows  %s rows/s", done, human(rate))
	}
	return b.String()
}

// tableDone prints a table's outcome; called with t.mu held.
func (p *progress) tableDone(t *tableJob) {
	state := "equal"
	switch {
	case t.failed != nil:
		state = "failed: " + t.failed.Error()
	case t.rep.DifferingRows > 0:
		state = rowsDiffer(t.rep.DifferingRows)
	}
	resumed := ""
	if t.rep.ChunksResumed > 0 {
		resumed = fmt.Sprintf(" (%d resumed)", t.rep.ChunksResumed)
	}
	p.printf("verify: %s done: %d rows in %s%s, %s, %.1fs\n", t.name, t.rep.RowsSource, plural(t.rep.Chunks, "chunk"), resumed, state, t.rep.Seconds)
}

func human(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 1, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', 0, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// throttle pauses work while the source is busier than --max-load allows.
// Safe for concurrent use.
type throttle struct {
	db   *sql.DB
	max  int
	prog *progress

	mu     sync.Mutex
	last   time.Time
	value  int
	paused bool
}

// pollEvery is how often Threads_running is read.
const pollEvery = time.Second

// wait returns when the source's Threads_running is at most max (at once
// when max is 0), or when ctx ends.
func (th *throttle) wait(ctx context.Context) error {
	if th == nil || th.max <= 0 {
		return nil
	}
	for {
		v, err := th.running(ctx)
		if err != nil {
			return err
		}
		th.mu.Lock()
		if v <= th.max {
			if th.paused {
				th.paused = false
				th.prog.printf("verify: resumed: source Threads_running %d <= --max-load %d\n", v, th.max)
			}
			th.mu.Unlock()
			return nil
		}
		if !th.paused {
			th.paused = true
			th.prog.printf("verify: paused: source Threads_running %d > --max-load %d\n", v, th.max)
		}
		th.mu.Unlock()
		t := time.NewTimer(pollEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// running reads Threads_running, at most once per pollEvery for all
// callers.
func (th *throttle) running(ctx context.Context) (int, error) {
	th.mu.Lock()
	defer th.mu.Unlock()
	if time.Since(th.last) < pollEvery {
		return th.value, nil
	}
	var name string
	var v int
	if err := th.db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Threads_running'").Scan(&name, &v); err != nil {
		return 0, fmt.Errorf("read source Threads_running: %w", err)
	}
	th.last, th.value = time.Now(), v
	return v, nil
}

// writeProbe tells whether a server has written rows since a point in
// time, from its global counters of row and statement writes. Rows that
// differ while neither server writes cannot be in-flight changes, so they
// need no re-reading. Safe for concurrent use.
type writeProbe struct {
	db    *sql.DB
	mu    sync.Mutex
	base  uint64
	known bool // the server has the counters
}

// writeCounters are the global status counters whose sum moves with every
// row write: InnoDB's (which replication appliers move too) and the
// statement counters (which other engines move).
const writeCounters = `SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_rows_inserted', 'Innodb_rows_updated',
	'Innodb_rows_deleted', 'Com_insert', 'Com_insert_select', 'Com_update', 'Com_update_multi', 'Com_delete',
	'Com_delete_multi', 'Com_replace', 'Com_replace_select', 'Com_load')`

func newWriteProbe(ctx context.Context, db *sql.DB) *writeProbe {
	p := &writeProbe{db: db}
	p.base, p.known = p.read(ctx)
	return p
}

func (p *writeProbe) read(ctx context.Context) (uint64, bool) {
	rows, err := p.db.QueryContext(ctx, writeCounters)
	if err != nil {
		return 0, false
	}
	defer rows.Close()
	var sum uint64
	n := 0
	for rows.Next() {
		var name string
		var v uint64
		if rows.Scan(&name, &v) != nil {
			return 0, false
		}
		sum += v
		n++
	}
	return sum, rows.Err() == nil && n >= 3
}

// quiet says no row was written since the probe was made; false when it
// cannot tell.
func (p *writeProbe) quiet(ctx context.Context) bool {
	if p == nil || !p.known {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.read(ctx)
	return ok && v == p.base
}
