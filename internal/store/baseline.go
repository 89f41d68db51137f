package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/shakedown/shakedown/internal/target"
)

// baselineSchema is the table of baselines, added beside the others.
const baselineSchema = `
CREATE TABLE IF NOT EXISTS baselines (
	name       TEXT PRIMARY KEY,
	created_at TEXT NOT NULL,
	target     TEXT NOT NULL,
	source     TEXT NOT NULL,
	run_ids    TEXT NOT NULL DEFAULT '[]',
	witness_run_ids TEXT
);
`

// ErrExists means a name is taken.
var ErrExists = errors.New("already exists")

// Baseline is a named set of stored runs of one target: what good looked
// like, for later results to be compared with.
type Baseline struct {
	Name      string
	CreatedAt time.Time
	// Target is the target the runs are of.
	Target string
	// Source says where the runs came from ("sweep 3", "runs 4,5,6").
	Source string
	RunIDs []int64
	// WitnessRunIDs are the runs of the other targets measured beside
	// RunIDs (the rest of the same sweep): a later comparison runs them
	// again beside the target's to tell a machine that moved from a
	// server that did. Empty in baselines saved before they were kept.
	WitnessRunIDs []int64
}

// SaveBaseline records a baseline; a name in use is ErrExists.
func (s *Store) SaveBaseline(ctx context.Context, b *Baseline) error {
	ids, err := json.Marshal(b.RunIDs)
	if err != nil {
		return fmt.Errorf("save baseline %s: %w", b.Name, err)
	}
	witnesses, err := json.Marshal(b.WitnessRunIDs)
	if err != nil {
		return fmt.Errorf("save baseline %s: %w", b.Name, err)
	}
	var one int
	err = s.db.QueryRowContext(ctx, `SELECT 1 FROM baselines WHERE name = ?`, b.Name).Scan(&one)
	switch {
	case err == nil:
		return fmt.Errorf("baseline %s: %w", b.Name, ErrExists)
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("save baseline %s: %w", b.Name, err)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO baselines(name, created_at, target, source, run_ids, witness_run_ids) VALUES (?, ?, ?, ?, ?, ?)`,
		b.Name, timeText(b.CreatedAt), b.Target, b.Source, string(ids), string(witnesses)); err != nil {
		return fmt.Errorf("save baseline %s: %w", b.Name, err)
	}
	return nil
}

// Baselines lists the baselines by name.
func (s *Store) Baselines(ctx context.Context) ([]Baseline, error) {
	out, err := target.QueryAll(ctx, s.db, scanBaseline, `SELECT name, created_at, target, source, run_ids, witness_run_ids FROM baselines ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list baselines: %w", err)
	}
	return out, nil
}

func scanBaseline(row target.Scanner) (Baseline, error) {
	var b Baseline
	var created, ids string
	var witnesses sql.NullString
	if err := row.Scan(&b.Name, &created, &b.Target, &b.Source, &ids, &witnesses); err != nil {
		return Baseline{}, err
	}
	b.CreatedAt = parseTime(created)
	if err := json.Unmarshal([]byte(ids), &b.RunIDs); err != nil {
		return Baseline{}, fmt.Errorf("baseline %s: %w", b.Name, err)
	}
	if witnesses.Valid && witnesses.String != "" {
		if err := json.Unmarshal([]byte(witnesses.String), &b.WitnessRunIDs); err != nil {
			return Baseline{}, fmt.Errorf("baseline %s: %w", b.Name, err)
		}
	}
	return b, nil
}

// DeleteBaseline removes a baseline (not its runs); a name not there is
// ErrNotFound.
func (s *Store) DeleteBaseline(ctx context.Context, name string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM baselines WHERE name = ?`, name)
	if err != nil {
		return fmt.Errorf("delete baseline %s: %w", name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("baseline %s: %w", name, ErrNotFound)
	}
	return nil
}

// RunsByID returns stored runs, in or outside sweeps, in the order asked;
// an ID not there is ErrNotFound.
func (s *Store) RunsByID(ctx context.Context, ids []int64) ([]Run, error) {
	var out []Run
	for _, id := range ids {
		runs, err := s.queryRuns(ctx, `id = ?`, id)
		if err != nil {
			return nil, fmt.Errorf("read run %d: %w", id, err)
		}
		if len(runs) == 0 {
			return nil, fmt.Errorf("run %d: %w", id, ErrNotFound)
		}
		out = append(out, runs[0])
	}
	return s.mergeSplits(ctx, out, false)
}
