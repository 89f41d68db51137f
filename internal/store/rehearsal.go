package store

import (
	"context"
	"fmt"
	"time"

	"github.com/shakedown/shakedown/internal/target"
)

// rehearsalSchema holds rehearsals (shakedown rehearse) and their steps.
// A step's row is written as the step finishes, so that a rehearsal that
// was killed is resumed after its last finished step; what each step
// proved is stored where its command stores it (evidence, sweeps), and the
// row points there.
const rehearsalSchema = `
CREATE TABLE IF NOT EXISTS rehearsals (` + planRunColumns + `
	verdict      TEXT NOT NULL DEFAULT '',
	tool         TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS rehearsal_steps (
	id            INTEGER PRIMARY KEY AUTOINCREMENT,
	rehearsal_id  INTEGER NOT NULL REFERENCES rehearsals(id) ON DELETE CASCADE,
	position      INTEGER NOT NULL,
	name          TEXT NOT NULL,
	status        TEXT NOT NULL,
	outcome       TEXT NOT NULL DEFAULT '',
	ref           TEXT NOT NULL DEFAULT '',
	summary       TEXT NOT NULL DEFAULT '',
	error         TEXT NOT NULL DEFAULT '',
	started_at    TEXT NOT NULL,
	wall_s        REAL NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS rehearsal_steps_by_rehearsal ON rehearsal_steps(rehearsal_id, id);
`

// mysqlRehearsalSchema is rehearsalSchema for a store on a server.
const mysqlRehearsalSchema = `
CREATE TABLE IF NOT EXISTS rehearsals (` + mysqlPlanRunColumns + `
	verdict      VARCHAR(64) NOT NULL DEFAULT '',
	tool         VARCHAR(255) NOT NULL DEFAULT ''
) DEFAULT CHARSET=utf8mb4;
CREATE TABLE IF NOT EXISTS rehearsal_steps (
	id            BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	rehearsal_id  BIGINT NOT NULL,
	position      BIGINT NOT NULL,
	name          VARCHAR(64) NOT NULL,
	status        VARCHAR(32) NOT NULL,
	outcome       VARCHAR(32) NOT NULL DEFAULT '',
	ref           VARCHAR(255) NOT NULL DEFAULT '',
	summary       TEXT NOT NULL,
	error         TEXT NOT NULL,
	started_at    VARCHAR(40) NOT NULL,
	wall_s        DOUBLE NOT NULL DEFAULT 0,
	INDEX rehearsal_steps_by_rehearsal (rehearsal_id, id)
) DEFAULT CHARSET=utf8mb4;
`

// Rehearsal statuses.
const (
	RehearsalRunning     = "running"
	RehearsalDone        = "done"        // every step ran, the page was made
	RehearsalStopped     = "stopped"     // a step failed and the plan did not go on
	RehearsalInterrupted = "interrupted" // killed or cancelled: resume it
)

// Rehearsal step statuses. A step is finished when it is StepDone or
// StepSkipped; a resumed rehearsal runs the others again.
const (
	StepDone        = "done"        // ran to its end; Outcome says what it found
	StepSkipped     = "skipped"     // the plan leaves it out, or has nothing for it
	StepFailed      = "failed"      // it stopped the chain: an error, or a failing outcome
	StepInterrupted = "interrupted" // cancelled while it ran
)

// Rehearsal is one run of a rehearsal plan.
type Rehearsal struct {
	ID         int64
	Name       string
	PlanPath   string
	Plan       string // the plan text; plans hold no passwords
	StartedAt  time.Time
	FinishedAt time.Time
	Status     string
	Verdict    string // the readiness verdict, once the page is made
	Tool       string
}

// RehearsalStep is one finished (or failed) step of a rehearsal. Ref says
// where its result is: "evidence 12", "sweep 3", a page's path.
type RehearsalStep struct {
	ID          int64     `json:"id"`
	RehearsalID int64     `json:"rehearsal"`
	Position    int       `json:"position"`
	Name        string    `json:"name"`
	Status      string    `json:"status"`
	Outcome     string    `json:"outcome,omitempty"` // an evidence outcome (OutcomePass...), or empty
	Ref         string    `json:"ref,omitempty"`
	Summary     string    `json:"summary,omitempty"`
	Error       string    `json:"error,omitempty"`
	StartedAt   time.Time `json:"started"`
	WallS       float64   `json:"wall_s"`
}

// AddRehearsal records a new rehearsal and sets r.ID.
func (s *Store) AddRehearsal(ctx context.Context, r *Rehearsal) (int64, error) {
	if r.StartedAt.IsZero() {
		r.StartedAt = time.Now()
	}
	if r.Status == "" {
		r.Status = RehearsalRunning
	}
	res, err := s.db.ExecContext(ctx, `INSERT INTO rehearsals(name, plan_path, plan, started_at, finished_at, status, verdict, tool)
		VALUES (?, ?, ?, ?, '', ?, '', ?)`, r.Name, r.PlanPath, r.Plan, timeText(r.StartedAt), r.Status, r.Tool)
	if err != nil {
		return 0, fmt.Errorf("record rehearsal: %w", err)
	}
	if r.ID, err = res.LastInsertId(); err != nil {
		return 0, fmt.Errorf("record rehearsal: %w", err)
	}
	return r.ID, nil
}

// SetRehearsalStatus records where a rehearsal stands; a status other
// than running also sets when it finished. verdict may be empty.
func (s *Store) SetRehearsalStatus(ctx context.Context, id int64, status, verdict string) error {
	finished := ""
	if status != RehearsalRunning {
		finished = timeText(time.Now())
	}
	_, err := s.db.ExecContext(ctx, `UPDATE rehearsals SET status = ?, verdict = ?, finished_at = ? WHERE id = ?`, status, verdict, finished, id)
	if err != nil {
		return fmt.Errorf("record rehearsal %d: %w", id, err)
	}
	return nil
}

// AddRehearsalStep records a step as it finishes and sets st.ID.
func (s *Store) AddRehearsalStep(ctx context.Context, st *RehearsalStep) (int64, error) {
	res, err := s.db.ExecContext(ctx, `INSERT INTO rehearsal_steps(rehearsal_id, position, name, status, outcome, ref, summary, error, started_at, wall_s)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, st.RehearsalID, st.Position, st.Name, st.Status, st.Outcome, st.Ref, st.Summary, st.Error,
		timeText(st.StartedAt), st.WallS)
	if err != nil {
		return 0, fmt.Errorf("record rehearsal step %s: %w", st.Name, err)
	}
	if st.ID, err = res.LastInsertId(); err != nil {
		return 0, fmt.Errorf("record rehearsal step %s: %w", st.Name, err)
	}
	return st.ID, nil
}

const rehearsalColumns = `id, name, plan_path, plan, started_at, finished_at, status, verdict, tool`

func scanRehearsal(row target.Scanner) (Rehearsal, error) {
	var r Rehearsal
	var started, finished string
	if err := row.Scan(&r.ID, &r.Name, &r.PlanPath, &r.Plan, &started, &finished, &r.Status, &r.Verdict, &r.Tool); err != nil {
		return Rehearsal{}, err
	}
	r.StartedAt, r.FinishedAt = parseTime(started), parseTime(finished)
	return r, nil
}

// GetRehearsal reads one rehearsal, or an error wrapping ErrNotFound.
func (s *Store) GetRehearsal(ctx context.Context, id int64) (*Rehearsal, error) {
	return queryOne(ctx, s.db, fmt.Sprintf("rehearsal %d", id), scanRehearsal, `SELECT `+rehearsalColumns+` FROM rehearsals WHERE id = ?`, id)
}

// Rehearsals lists the stored rehearsals, newest first.
func (s *Store) Rehearsals(ctx context.Context) ([]Rehearsal, error) {
	out, err := target.QueryAll(ctx, s.db, scanRehearsal, `SELECT `+rehearsalColumns+` FROM rehearsals ORDER BY id DESC`)
	if err != nil {
		return nil, fmt.Errorf("read rehearsals: %w", err)
	}
	return out, nil
}

// RehearsalSteps lists a rehearsal's step rows in the order they were
// written: a step run again after a resume has a row per run.
func (s *Store) RehearsalSteps(ctx context.Context, id int64) ([]RehearsalStep, error) {
	out, err := target.QueryAll(ctx, s.db, func(row target.Scanner) (RehearsalStep, error) {
		var st RehearsalStep
		var started string
		err := row.Scan(&st.ID, &st.RehearsalID, &st.Position, &st.Name, &st.Status, &st.Outcome, &st.Ref, &st.Summary,
			&st.Error, &started, &st.WallS)
		st.StartedAt = parseTime(started)
		return st, err
	}, `SELECT id, rehearsal_id, position, name, status, outcome, ref, summary, error, started_at, wall_s
		FROM rehearsal_steps WHERE rehearsal_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, fmt.Errorf("read rehearsal %d steps: %w", id, err)
	}
	return out, nil
}
