package store

import (
	"context"
	"fmt"
	"time"

	"github.com/shakedown/shakedown/internal/target"
)

// notesSchema is the table of what a sweep did to the data besides its
// steps: each prepare, table dropped, data kept or made again on resume,
// and each thread level restarted. The report states them, and a resumed
// sweep reads them to know what data the interrupted one left.
const notesSchema = `
CREATE TABLE IF NOT EXISTS sweep_notes (
	id        INTEGER PRIMARY KEY AUTOINCREMENT,
	sweep_id  INTEGER NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,
	at        TEXT NOT NULL,
	step      INTEGER NOT NULL DEFAULT 0,
	kind      TEXT NOT NULL,
	target    TEXT NOT NULL DEFAULT '',
	workload  TEXT NOT NULL DEFAULT '',
	text      TEXT NOT NULL
);
`

// mysqlNotesSchema is notesSchema for a store on a server.
const mysqlNotesSchema = `
CREATE TABLE IF NOT EXISTS sweep_notes (
	id        BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	sweep_id  BIGINT NOT NULL,
	at        VARCHAR(40) NOT NULL,
	step      BIGINT NOT NULL DEFAULT 0,
	kind      VARCHAR(32) NOT NULL,
	target    VARCHAR(255) NOT NULL DEFAULT '',
	workload  VARCHAR(255) NOT NULL DEFAULT '',
	text      TEXT NOT NULL,
	INDEX sweep_notes_by_sweep (sweep_id, id)
) DEFAULT CHARSET=utf8mb4;
`

// Kinds of note.
const (
	// NotePrepared: a workload's data was made on a target.
	NotePrepared = "prepared"
	// NoteDropped: tables were dropped (cleanup, or in the way of a
	// prepare); Workload is whose data they held.
	NoteDropped = "dropped"
	// NoteKept: on resume, the data the interrupted sweep left was kept.
	NoteKept = "kept"
	// NoteRestarted: on resume, a thread level begun before was started
	// again from its first repeat, on data made again.
	NoteRestarted = "restarted"
	// NoteResumed: the sweep was resumed.
	NoteResumed = "resumed"
	// NoteSkipped: a target did not answer and its steps were skipped.
	NoteSkipped = "skipped"
)

// Note is one thing a sweep did besides its steps.
type Note struct {
	At time.Time
	// Step is the step it came before (0: at the end).
	Step     int
	Kind     string
	Target   string
	Workload string // the label
	Text     string // in plain words, for the report
}

// AddNote records a note of a sweep.
func (s *Store) AddNote(ctx context.Context, sweepID int64, n Note) error {
	if _, err := s.db.ExecContext(ctx, `INSERT INTO sweep_notes(sweep_id, at, step, kind, target, workload, text) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		sweepID, timeText(n.At), n.Step, n.Kind, n.Target, n.Workload, n.Text); err != nil {
		return fmt.Errorf("record note of sweep %d: %w", sweepID, err)
	}
	return nil
}

// Notes returns a sweep's notes in the order they were made.
func (s *Store) Notes(ctx context.Context, sweepID int64) ([]Note, error) {
	out, err := target.QueryAll(ctx, s.db, func(row target.Scanner) (Note, error) {
		var n Note
		var at string
		err := row.Scan(&at, &n.Step, &n.Kind, &n.Target, &n.Workload, &n.Text)
		n.At = parseTime(at)
		return n, err
	}, `SELECT at, step, kind, target, workload, text FROM sweep_notes WHERE sweep_id = ? ORDER BY id`, sweepID)
	if err != nil {
		return nil, fmt.Errorf("read notes of sweep %d: %w", sweepID, err)
	}
	return out, nil
}

// FailedSteps counts the steps of a sweep whose last run failed: what a
// resume runs again.
func (s *Store) FailedSteps(ctx context.Context, sweepID int64) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM runs r WHERE r.sweep_id = ? AND r.status = ? AND r.split_id IS NULL
		AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.sweep_id = r.sweep_id AND o.target = r.target AND o.workload = r.workload
			AND o.threads = r.threads AND o.repeat_no = r.repeat_no AND o.id > r.id)`, sweepID, RunFailed).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count the failed steps of sweep %d: %w", sweepID, err)
	}
	return n, nil
}
