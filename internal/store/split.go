package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/target"
)

// splitSchema holds the tables of loads split over many runners, which
// share a store and no coordinator:
//
//   - splits: one load, found by its key (a hash of what the runners run
//     and when they start: every runner of the load computes the same);
//     a split sweep also names the sweep its runners share;
//   - runners: each segment that registered, once (the key refuses a
//     second), with its host and its clock against the store's;
//   - interval_hdr: each runner's intervals, exactly: counts and that
//     interval's latency histogram, so that report adds them second by
//     second;
//   - marks: what the first runner tells the others, such as that a
//     step's data is ready and when they start.
const splitSchema = `
CREATE TABLE IF NOT EXISTS splits (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	run_key      TEXT NOT NULL UNIQUE,
	kind         TEXT NOT NULL,
	sweep_id     INTEGER,
	seg_sequence TEXT NOT NULL,
	runners      INTEGER NOT NULL,
	start_at     TEXT NOT NULL DEFAULT '',
	created_at   TEXT NOT NULL,
	description  TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS runners (
	split_id        INTEGER NOT NULL,
	seg_index       INTEGER NOT NULL,
	segment         TEXT NOT NULL,
	label           TEXT NOT NULL,
	host            TEXT NOT NULL DEFAULT '',
	registered_at   TEXT NOT NULL,
	first_start_at  TEXT NOT NULL DEFAULT '',
	finished_at     TEXT NOT NULL DEFAULT '',
	status          TEXT NOT NULL,
	clock_offset_us INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (split_id, seg_index)
);
CREATE TABLE IF NOT EXISTS interval_hdr (
	run_id       INTEGER NOT NULL,
	seq          INTEGER NOT NULL,
	t_start_us   INTEGER NOT NULL,
	t_end_us     INTEGER NOT NULL,
	n_threads    INTEGER NOT NULL,
	n_events     INTEGER NOT NULL,
	n_reads      INTEGER NOT NULL,
	n_writes     INTEGER NOT NULL,
	n_others     INTEGER NOT NULL,
	n_errors     INTEGER NOT NULL,
	n_reconnects INTEGER NOT NULL,
	lat_count    INTEGER NOT NULL,
	lat_sum_ns   INTEGER NOT NULL,
	lat_min_ns   INTEGER NOT NULL,
	lat_max_ns   INTEGER NOT NULL,
	hdr          TEXT NOT NULL,
	PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS marks (
	split_id  INTEGER NOT NULL,
	name      TEXT NOT NULL,
	resume_at TEXT NOT NULL DEFAULT '',
	error     TEXT NOT NULL DEFAULT '',
	at        TEXT NOT NULL,
	PRIMARY KEY (split_id, name)
);
`

// Outcomes of split loads that callers test with errors.Is.
var (
	// ErrSegmentTaken means another runner registered the same segment
	// of the same load.
	ErrSegmentTaken = errors.New("segment already registered")
	// ErrReported means the segment already reported that step.
	ErrReported = errors.New("already reported")
	// ErrOtherSequence means the load's runners split it another way.
	ErrOtherSequence = errors.New("another segment sequence")
)

// Split kinds.
const (
	SplitRun   = "run"
	SplitSweep = "sweep"
	SplitSlap  = "slap"
)

// Split is one load split over runners.
type Split struct {
	ID int64
	// Key identifies the load: every runner computes the same from what
	// it runs and when it starts.
	Key         string
	Kind        string
	SweepID     int64 // the sweep the runners share (SplitSweep)
	Sequence    string
	Runners     int
	StartAt     time.Time
	CreatedAt   time.Time
	Description string // the command or plan, for people
}

// Runner is one registered segment of a split load.
type Runner struct {
	SplitID      int64
	Index        int    // the segment's place in the sequence, from 0
	Segment      string // FROM:TO
	Label        string // I/N or FROM:TO
	Host         string
	RegisteredAt time.Time
	FirstStartAt time.Time
	FinishedAt   time.Time
	Status       string
	// ClockOffset is the runner's clock minus the store's.
	ClockOffset time.Duration
}

// Runner statuses, beside the run statuses of its last step.
const RunnerRunning = "running"

// Part is one runner's share of a step of a split load, as stored.
type Part struct {
	SplitID   int64
	Index     int
	Intervals []result.IntervalHDR
}

// JoinSplit finds the split load with sp.Key, or records it: the first
// runner to arrive records it (with sweep, when not nil, as the sweep
// every runner's steps go to), the others find it. It sets sp.ID and
// sp.SweepID. A runner that splits the load another way than the first
// one did is refused with ErrOtherSequence.
func (s *Store) JoinSplit(ctx context.Context, sp *Split, sweep *Sweep, targets []Target) error {
	if sp.CreatedAt.IsZero() {
		sp.CreatedAt = time.Now()
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("record split load: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `INSERT INTO splits(run_key, kind, sweep_id, seg_sequence, runners, start_at, created_at, description)
		VALUES (?, ?, NULL, ?, ?, ?, ?, ?)`, sp.Key, sp.Kind, sp.Sequence, sp.Runners, timeText(sp.StartAt), timeText(sp.CreatedAt), sp.Description)
	switch {
	case s.dialect.duplicate(err):
		tx.Rollback()
		return s.joinExisting(ctx, sp)
	case err != nil:
		return fmt.Errorf("record split load: %w", err)
	}
	if sp.ID, err = res.LastInsertId(); err != nil {
		return fmt.Errorf("record split load: %w", err)
	}
	if sweep != nil {
		if sp.SweepID, err = createSweep(ctx, tx, sweep, targets); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE splits SET sweep_id = ? WHERE id = ?`, sp.SweepID, sp.ID); err != nil {
			return fmt.Errorf("record split load: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		// Another runner committed the same key first.
		if s.dialect.duplicate(err) {
			return s.joinExisting(ctx, sp)
		}
		return fmt.Errorf("record split load: %w", err)
	}
	return nil
}

func (s *Store) joinExisting(ctx context.Context, sp *Split) error {
	got, err := s.SplitByKey(ctx, sp.Key)
	if err != nil {
		return err
	}
	if got.Sequence != sp.Sequence {
		return fmt.Errorf("the load's other runners split it as %s, this one as %s: %w", got.Sequence, sp.Sequence, ErrOtherSequence)
	}
	if got.Kind != sp.Kind {
		return fmt.Errorf("the load's other runners ran a %s, this one a %s: %w", got.Kind, sp.Kind, ErrOtherSequence)
	}
	*sp = *got
	return nil
}

const splitSelect = `SELECT id, run_key, kind, sweep_id, seg_sequence, runners, start_at, created_at, description FROM splits`

func scanSplit(row target.Scanner) (Split, error) {
	var sp Split
	var sweep sql.NullInt64
	var start, created string
	if err := row.Scan(&sp.ID, &sp.Key, &sp.Kind, &sweep, &sp.Sequence, &sp.Runners, &start, &created, &sp.Description); err != nil {
		return Split{}, err
	}
	sp.SweepID, sp.StartAt, sp.CreatedAt = sweep.Int64, parseTime(start), parseTime(created)
	return sp, nil
}

// SplitByKey returns the split load with key, or an error wrapping
// ErrNotFound.
func (s *Store) SplitByKey(ctx context.Context, key string) (*Split, error) {
	return queryOne(ctx, s.db, "split load "+key, scanSplit, splitSelect+` WHERE run_key = ?`, key)
}

// SplitByID returns a split load, or an error wrapping ErrNotFound.
func (s *Store) SplitByID(ctx context.Context, id int64) (*Split, error) {
	return queryOne(ctx, s.db, fmt.Sprintf("split load %d", id), scanSplit, splitSelect+` WHERE id = ?`, id)
}

// Register records a runner of a split load. A segment registered before
// is refused with ErrSegmentTaken, naming who has it: each segment of a
// load runs once.
func (s *Store) Register(ctx context.Context, r *Runner) error {
	if r.Status == "" {
		r.Status = RunnerRunning
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO runners(split_id, seg_index, segment, label, host, registered_at, status, clock_offset_us)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, r.SplitID, r.Index, r.Segment, r.Label, r.Host, timeText(r.RegisteredAt), r.Status, r.ClockOffset.Microseconds())
	if s.dialect.duplicate(err) {
		rs, rerr := s.Runners(ctx, r.SplitID)
		if rerr == nil {
			for _, o := range rs {
				if o.Index == r.Index {
					return fmt.Errorf("segment %s was registered by %s at %s: %w", r.Label, o.Host, o.RegisteredAt.UTC().Format(time.RFC3339), ErrSegmentTaken)
				}
			}
		}
		return fmt.Errorf("segment %s: %w", r.Label, ErrSegmentTaken)
	}
	if err != nil {
		return fmt.Errorf("register runner %s: %w", r.Label, err)
	}
	return nil
}

// RunnerStarted records when a runner's load first started.
func (s *Store) RunnerStarted(ctx context.Context, splitID int64, index int, at time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE runners SET first_start_at = ? WHERE split_id = ? AND seg_index = ? AND first_start_at = ''`,
		timeText(at), splitID, index)
	if err != nil {
		return fmt.Errorf("record runner start: %w", err)
	}
	return nil
}

// RunnerFinished records how a runner ended.
func (s *Store) RunnerFinished(ctx context.Context, splitID int64, index int, status string, at time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE runners SET status = ?, finished_at = ? WHERE split_id = ? AND seg_index = ?`,
		status, timeText(at), splitID, index)
	if err != nil {
		return fmt.Errorf("record runner end: %w", err)
	}
	return nil
}

// Runners lists the registered runners of a split load by segment.
func (s *Store) Runners(ctx context.Context, splitID int64) ([]Runner, error) {
	out, err := target.QueryAll(ctx, s.db, func(row target.Scanner) (Runner, error) {
		r := Runner{SplitID: splitID}
		var reg, first, fin string
		var off int64
		err := row.Scan(&r.Index, &r.Segment, &r.Label, &r.Host, &reg, &first, &fin, &r.Status, &off)
		r.RegisteredAt, r.FirstStartAt, r.FinishedAt = parseTime(reg), parseTime(first), parseTime(fin)
		r.ClockOffset = time.Duration(off) * time.Microsecond
		return r, err
	}, `SELECT seg_index, segment, label, host, registered_at, first_start_at, finished_at, status, clock_offset_us
		FROM runners WHERE split_id = ? ORDER BY seg_index`, splitID)
	if err != nil {
		return nil, fmt.Errorf("read runners of split %d: %w", splitID, err)
	}
	return out, nil
}

// Now is the store's clock: the server's for a shared store, this host's
// for a file. Runners measure their clock against it.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	return s.dialect.now(ctx, s.db)
}

// ClockOffset measures this host's clock against the store's: local minus
// store, taking the store's reading as made halfway through the round
// trip.
func (s *Store) ClockOffset(ctx context.Context) (time.Duration, error) {
	before := time.Now()
	at, err := s.Now(ctx)
	if err != nil {
		return 0, err
	}
	after := time.Now()
	mid := before.Add(after.Sub(before) / 2)
	if _, ok := s.dialect.(sqliteDialect); ok {
		return 0, nil
	}
	return mid.Sub(at), nil
}

// Mark is what the first runner of a split load tells the others.
type Mark struct {
	Name string
	// ResumeAt is when the others go on (a data-ready mark's anchor).
	ResumeAt time.Time
	// Error, when set, says the first runner failed at this point, and
	// why: the others give up the steps that needed it.
	Error string
	At    time.Time
}

// SetMark records a mark of a split load, replacing one of the same name.
func (s *Store) SetMark(ctx context.Context, splitID int64, m Mark) error {
	if m.At.IsZero() {
		m.At = time.Now()
	}
	_, err := s.db.ExecContext(ctx, `REPLACE INTO marks(split_id, name, resume_at, error, at) VALUES (?, ?, ?, ?, ?)`,
		splitID, m.Name, timeText(m.ResumeAt), m.Error, timeText(m.At))
	if err != nil {
		return fmt.Errorf("record mark %s: %w", m.Name, err)
	}
	return nil
}

// GetMark reads a mark; ok is false when it is not there yet.
func (s *Store) GetMark(ctx context.Context, splitID int64, name string) (m Mark, ok bool, err error) {
	var resume, at string
	err = s.db.QueryRowContext(ctx, `SELECT resume_at, error, at FROM marks WHERE split_id = ? AND name = ?`, splitID, name).Scan(&resume, &m.Error, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return Mark{}, false, nil
	}
	if err != nil {
		return Mark{}, false, fmt.Errorf("read mark %s: %w", name, err)
	}
	m.Name, m.ResumeAt, m.At = name, parseTime(resume), parseTime(at)
	return m, true, nil
}

// hdrBatch is how many intervals one INSERT carries: few round trips to a
// remote store, well under either server's limit on placeholders.
const hdrBatch = 100

func (s *Store) addIntervalHDR(ctx context.Context, tx *sql.Tx, runID int64, ivs []result.IntervalHDR) error {
	const cols = 16
	for lo := 0; lo < len(ivs); lo += hdrBatch {
		hi := min(lo+hdrBatch, len(ivs))
		var b strings.Builder
		b.WriteString(`INSERT INTO interval_hdr(run_id, seq, t_start_us, t_end_us, n_threads, n_events, n_reads, n_writes, n_others, n_errors,
			n_reconnects, lat_count, lat_sum_ns, lat_min_ns, lat_max_ns, hdr) VALUES `)
		args := make([]any, 0, (hi-lo)*cols)
		for i := lo; i < hi; i++ {
			if i > lo {
				b.WriteString(", ")
			}
			b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
			iv := ivs[i]
			l := iv.Latency
			args = append(args, runID, i, iv.StartUS, iv.EndUS, iv.Threads, iv.Events, iv.Reads, iv.Writes, iv.Others, iv.Errors,
				iv.Reconnects, l.Count, l.SumNS, l.MinNS, l.MaxNS, l.Encoded)
		}
		if _, err := tx.ExecContext(ctx, b.String(), args...); err != nil {
			return fmt.Errorf("record interval histograms: %w", err)
		}
	}
	return nil
}

// intervalHDR reads the intervals of the given runs, by run.
func (s *Store) intervalHDR(ctx context.Context, runIDs []int64) (map[int64][]result.IntervalHDR, error) {
	out := map[int64][]result.IntervalHDR{}
	if len(runIDs) == 0 {
		return out, nil
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(runIDs)), ", ")
	args := make([]any, len(runIDs))
	for i, id := range runIDs {
		args[i] = id
	}
	type runInterval struct {
		run int64
		iv  result.IntervalHDR
	}
	ivs, err := target.QueryAll(ctx, s.db, func(row target.Scanner) (runInterval, error) {
		var r runInterval
		iv, l := &r.iv, &r.iv.Latency
		err := row.Scan(&r.run, &iv.StartUS, &iv.EndUS, &iv.Threads, &iv.Events, &iv.Reads, &iv.Writes, &iv.Others, &iv.Errors,
			&iv.Reconnects, &l.Count, &l.SumNS, &l.MinNS, &l.MaxNS, &l.Encoded)
		return r, err
	}, `SELECT run_id, t_start_us, t_end_us, n_threads, n_events, n_reads, n_writes, n_others, n_errors,
		n_reconnects, lat_count, lat_sum_ns, lat_min_ns, lat_max_ns, hdr FROM interval_hdr WHERE run_id IN (`+marks+`) ORDER BY run_id, seq`, args...)
	if err != nil {
		return nil, fmt.Errorf("read interval histograms: %w", err)
	}
	for _, r := range ivs {
		out[r.run] = append(out[r.run], r.iv)
	}
	return out, nil
}
