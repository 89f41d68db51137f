package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/target"
)

// Sweeps lists every sweep, newest first.
func (s *Store) Sweeps(ctx context.Context) ([]Sweep, error) {
	out, err := target.QueryAll(ctx, s.db, scanSweep, sweepSelect+` ORDER BY id DESC`)
	if err != nil {
		return nil, fmt.Errorf("list sweeps: %w", err)
	}
	return out, nil
}

// Latest returns the ID of the newest sweep, or ErrNoSweeps.
func (s *Store) Latest(ctx context.Context) (int64, error) {
	var id int64
	err := s.db.QueryRowContext(ctx, `SELECT id FROM sweeps ORDER BY id DESC LIMIT 1`).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrNoSweeps
	}
	if err != nil {
		return 0, fmt.Errorf("find latest sweep: %w", err)
	}
	return id, nil
}

const sweepSelect = `SELECT id, name, plan_path, plan, started_at, finished_at, status, steps, client_host, tool, settings FROM sweeps`

func scanSweep(row target.Scanner) (Sweep, error) {
	var sw Sweep
	var started, finished, settings string
	if err := row.Scan(&sw.ID, &sw.Name, &sw.PlanPath, &sw.Plan, &started, &finished, &sw.Status, &sw.Steps, &sw.ClientHost, &sw.Tool, &settings); err != nil {
		return Sweep{}, err
	}
	sw.StartedAt, sw.FinishedAt = parseTime(started), parseTime(finished)
	if err := json.Unmarshal([]byte(settings), &sw.Settings); err != nil {
		return Sweep{}, fmt.Errorf("sweep %d settings: %w", sw.ID, err)
	}
	return sw, nil
}

// Sweep returns one sweep, or an error wrapping ErrNotFound.
func (s *Store) Sweep(ctx context.Context, id int64) (*Sweep, error) {
	return queryOne(ctx, s.db, fmt.Sprintf("sweep %d", id), scanSweep, sweepSelect+` WHERE id = ?`, id)
}

// Targets returns a sweep's targets in plan order.
func (s *Store) Targets(ctx context.Context, sweepID int64) ([]Target, error) {
	out, err := target.QueryAll(ctx, s.db, scanTarget, `SELECT name, role, url, server_version, flavour, variables FROM targets WHERE sweep_id = ? ORDER BY position`, sweepID)
	if err != nil {
		return nil, fmt.Errorf("read targets of sweep %d: %w", sweepID, err)
	}
	return out, nil
}

func scanTarget(row target.Scanner) (Target, error) {
	var t Target
	var vars string
	if err := row.Scan(&t.Name, &t.Role, &t.URL, &t.Version, &t.Flavour, &vars); err != nil {
		return Target{}, err
	}
	if err := json.Unmarshal([]byte(vars), &t.Variables); err != nil {
		return Target{}, fmt.Errorf("read variables of %s: %w", t.Name, err)
	}
	return t, nil
}

// Runs returns a sweep's runs in step order, with their result documents.
// The runners of a step of a split sweep come back as one merged run.
func (s *Store) Runs(ctx context.Context, sweepID int64) ([]Run, error) {
	runs, err := s.queryRuns(ctx, `sweep_id = ? ORDER BY step, id`, sweepID)
	if err != nil {
		return nil, fmt.Errorf("read runs of sweep %d: %w", sweepID, err)
	}
	if runs, err = s.mergeSplits(ctx, runs, true); err != nil {
		return nil, err
	}
	for i := range runs {
		runs[i].SweepID = sweepID
	}
	return runs, nil
}

// LooseRuns returns the runs made outside sweeps ("shakedown run --store"),
// oldest first: those with the given IDs, or all of them when ids is empty.
// An ID that is not such a run is ErrNotFound. The runners of a split run
// come back as one merged run, with the ID of the first runner's part.
func (s *Store) LooseRuns(ctx context.Context, ids []int64) ([]Run, error) {
	runs, err := s.queryRuns(ctx, `sweep_id IS NULL ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	if runs, err = s.mergeSplits(ctx, runs, true); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return runs, nil
	}
	byID := map[int64]Run{}
	for _, r := range runs {
		byID[r.ID] = r
	}
	var out []Run
	for _, id := range ids {
		r, ok := byID[id]
		if !ok {
			return nil, fmt.Errorf("run %d (outside sweeps): %w", id, ErrNotFound)
		}
		out = append(out, r)
	}
	return out, nil
}

func (s *Store) queryRuns(ctx context.Context, where string, args ...any) ([]Run, error) {
	return target.QueryAll(ctx, s.db, scanRun, `SELECT id, step, target, role, workload, threads, repeat_no, command, status, error,
		started_at, wall_s, result, degraded, split_id, seg_index FROM runs WHERE `+where, args...)
}

func scanRun(row target.Scanner) (Run, error) {
	var r Run
	var started string
	var doc sql.NullString
	var split sql.NullInt64
	var seg int
	if err := row.Scan(&r.ID, &r.Step, &r.Target, &r.Role, &r.Workload, &r.Threads, &r.Repeat, &r.Command, &r.Status, &r.Error,
		&started, &r.WallS, &doc, &r.Degraded, &split, &seg); err != nil {
		return Run{}, err
	}
	if split.Valid {
		r.Part = &Part{SplitID: split.Int64, Index: seg}
	}
	r.StartedAt = parseTime(started)
	if doc.Valid {
		r.Result = &result.Result{}
		if err := json.Unmarshal([]byte(doc.String), r.Result); err != nil {
			return Run{}, fmt.Errorf("result of run %d: %w", r.ID, err)
		}
	}
	return r, nil
}

// Intervals returns a run's per-interval series from its own table.
func (s *Store) Intervals(ctx context.Context, runID int64) ([]result.Interval, error) {
	out, err := target.QueryAll(ctx, s.db, func(row target.Scanner) (result.Interval, error) {
		var iv result.Interval
		err := row.Scan(&iv.AtS, &iv.Threads, &iv.TPS, &iv.QPS, &iv.ReadQPS, &iv.WriteQPS, &iv.OtherQPS, &iv.LatencyPct, &iv.LatencyAvg,
			&iv.LatencyMax, &iv.ErrorsPS, &iv.ReconnPS)
		return iv, err
	}, `SELECT t_s, threads, tps, qps, read_qps, write_qps, other_qps, latency_pct_ms, latency_avg_ms,
		latency_max_ms, err_ps, reconn_ps FROM intervals WHERE run_id = ? ORDER BY t_s`, runID)
	if err != nil {
		return nil, fmt.Errorf("read intervals of run %d: %w", runID, err)
	}
	return out, nil
}

// queryOne reads the one row query returns with scan. No row is an error
// wrapping ErrNotFound that names what; any other failure is reading what.
func queryOne[T any](ctx context.Context, db *sql.DB, what string, scan func(target.Scanner) (T, error), query string, args ...any) (*T, error) {
	v, err := scan(db.QueryRowContext(ctx, query, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	return &v, nil
}

// SweepData is a sweep with everything recorded about it.
type SweepData struct {
	Sweep   Sweep
	Targets []Target
	Runs    []Run
	// Notes are what the sweep did to the data besides its steps.
	Notes []Note
}

// Load reads a sweep, its targets and its runs.
func (s *Store) Load(ctx context.Context, id int64) (*SweepData, error) {
	sw, err := s.Sweep(ctx, id)
	if err != nil {
		return nil, err
	}
	targets, err := s.Targets(ctx, id)
	if err != nil {
		return nil, err
	}
	runs, err := s.Runs(ctx, id)
	if err != nil {
		return nil, err
	}
	notes, err := s.Notes(ctx, id)
	if err != nil {
		return nil, err
	}
	return &SweepData{Sweep: *sw, Targets: targets, Runs: runs, Notes: notes}, nil
}
