// Package store keeps results in one local SQLite file (pure Go, no cgo):
// sweeps with their plan and settings, the environment of each target
// (server version and flavour, a snapshot of its global variables), runs
// with their result documents and per-interval series, and the evidence a
// readiness page gathers (check, verify and replay results). A run outside
// a sweep has no sweep.
//
// Every write is its own transaction, committed before the call returns, so
// whatever was recorded survives an interrupted or crashed sweep. A Store is
// safe for concurrent use; it holds one connection.
package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/shakedown/shakedown/internal/home"
	"github.com/shakedown/shakedown/internal/result"
)

// SchemaVersion is the layout of the tables; a store written with a newer
// layout is refused.
const SchemaVersion = 1

// Outcomes callers test with errors.Is.
var (
	ErrNotFound = errors.New("not found")
	ErrNoSweeps = errors.New("no sweeps in the store")
)

// Sweep statuses.
const (
	SweepRunning     = "running"
	SweepDone        = "done"
	SweepInterrupted = "interrupted"
	SweepFailed      = "failed"
)

// Run statuses: result.StatusOf decides which of the first three a run
// gets.
const (
	RunOK          = result.StatusOK
	RunFailed      = result.StatusFailed
	RunInterrupted = result.StatusInterrupted
	// RunPartial is a step of a split load merged from fewer runners
	// than it had: a runner never reported or stopped early. Its figures
	// are what the others measured; it counts in no verdict.
	RunPartial = "partial"
)

// Sweep is one execution of a plan.
type Sweep struct {
	ID         int64
	Name       string
	PlanPath   string
	Plan       string // the plan text; plans hold no passwords
	StartedAt  time.Time
	FinishedAt time.Time // zero while running
	Status     string
	Steps      int // how many steps the plan has
	ClientHost string
	Tool       string // shakedown's version
	Settings   Settings
}

// Settings are the plan's per-step settings, kept for the report.
type Settings struct {
	TimeS     int      `json:"time_s"`
	Events    int64    `json:"events,omitempty"`
	WarmupS   int      `json:"warmup_s"`
	Repeats   int      `json:"repeats"`
	CooldownS int      `json:"cooldown_s"`
	Order     string   `json:"order"`
	Threads   []int    `json:"threads"`
	Workloads []string `json:"workloads"`
	// AutoRepeats is repeats: auto (Repeats is then the first round's,
	// MaxRepeats the most any cell got).
	AutoRepeats bool `json:"auto_repeats,omitempty"`
	MaxRepeats  int  `json:"max_repeats,omitempty"`
	// NoiseThreshold is the plan's, a fraction; 0 in sweeps stored before
	// it existed, which means the default.
	NoiseThreshold float64 `json:"noise_threshold,omitempty"`
}

// Target is one target of a sweep and its environment as found when the
// sweep started.
type Target struct {
	Name      string
	Role      string
	URL       string // without password
	Version   string
	Flavour   string
	Variables map[string]string // SHOW GLOBAL VARIABLES
}

// Run is one step of a sweep, or one run outside a sweep (SweepID 0).
type Run struct {
	ID       int64
	SweepID  int64
	Step     int
	Target   string
	Role     string
	Workload string
	Threads  int
	Repeat   int
	Command  string // the engine command line, without target
	Status   string
	Error    string
	// Degraded is set when the server could not be reached for part of
	// the run: its figures are kept but measure no server.
	Degraded  bool
	StartedAt time.Time
	WallS     float64 // wall time of the step, warm-up and connecting included
	// Result is the result document; nil when nothing was measured.
	Result *result.Result
	// Part is set on one runner's part of a split load, to be stored. A
	// split step read back from the store is the merge of its runners:
	// Part is nil and Result.Split says who they were.
	Part *Part
}

// Store is an open results store: a local SQLite file, or a database on
// a MySQL-compatible server that the runners of a split load share. The
// two keep the same tables and answer the same queries.
type Store struct {
	db      *sql.DB
	path    string // the file, or the server's URL without password
	dialect dialect
}

// DefaultPath is shakedown.db in shakedown's home (home.Dir), else
// shakedown.db.
func DefaultPath(getenv func(string) string) string {
	if h := home.Dir(getenv); h != "" {
		return filepath.Join(h, "shakedown.db")
	}
	return "shakedown.db"
}

// Open opens the store at path, creating the file and its directory when
// missing. The caller closes it.
func Open(ctx context.Context, path string) (*Store, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
	}
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)")
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	// One connection: SQLite has one writer anyway, and this keeps the
	// pragmas on the only connection there is.
	db.SetMaxOpenConns(1)
	s := &Store{db: db, path: path, dialect: sqliteDialect{}}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return s, nil
}

// Path is where the store lives: its file, or its server's URL without
// the password.
func (s *Store) Path() string { return s.path }

// Close closes the store.
func (s *Store) Close() error { return s.db.Close() }

// planRunColumns are the first columns of a plan carried out, a sweep's
// and a rehearsal's alike: its name and plan, when it started and ended,
// and how.
const planRunColumns = `
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	name         TEXT NOT NULL,
	plan_path    TEXT NOT NULL DEFAULT '',
	plan         TEXT NOT NULL DEFAULT '',
	started_at   TEXT NOT NULL,
	finished_at  TEXT NOT NULL DEFAULT '',
	status       TEXT NOT NULL,`

const schema = `
CREATE TABLE IF NOT EXISTS meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sweeps (` + planRunColumns + `
	steps        INTEGER NOT NULL,
	client_host  TEXT NOT NULL,
	tool         TEXT NOT NULL,
	settings     TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS targets (
	sweep_id       INTEGER NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,
	position       INTEGER NOT NULL,
	name           TEXT NOT NULL,
	role           TEXT NOT NULL,
	url            TEXT NOT NULL,
	server_version TEXT NOT NULL,
	flavour        TEXT NOT NULL,
	variables      TEXT NOT NULL DEFAULT '{}',
	PRIMARY KEY (sweep_id, name)
);
CREATE TABLE IF NOT EXISTS runs (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	sweep_id    INTEGER REFERENCES sweeps(id) ON DELETE CASCADE,
	step        INTEGER NOT NULL DEFAULT 0,
	target      TEXT NOT NULL,
	role        TEXT NOT NULL DEFAULT '',
	workload    TEXT NOT NULL,
	threads     INTEGER NOT NULL,
	repeat_no   INTEGER NOT NULL DEFAULT 1,
	command     TEXT NOT NULL DEFAULT '',
	status      TEXT NOT NULL,
	error       TEXT NOT NULL DEFAULT '',
	started_at  TEXT NOT NULL,
	wall_s      REAL NOT NULL DEFAULT 0,
	qps         REAL,
	tps         REAL,
	lat_avg_ms  REAL,
	lat_p95_ms  REAL,
	lat_p99_ms  REAL,
	lat_max_ms  REAL,
	errors      INTEGER,
	result      TEXT,
	degraded    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS runs_by_sweep ON runs(sweep_id, step);
CREATE TABLE IF NOT EXISTS intervals (
	run_id         INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	t_s            REAL NOT NULL,
	threads        INTEGER NOT NULL,
	tps            REAL NOT NULL,
	qps            REAL NOT NULL,
	read_qps       REAL NOT NULL,
	write_qps      REAL NOT NULL,
	other_qps      REAL NOT NULL,
	latency_pct_ms REAL NOT NULL,
	latency_avg_ms REAL NOT NULL,
	latency_max_ms REAL NOT NULL,
	err_ps         REAL NOT NULL,
	reconn_ps      REAL NOT NULL,
	PRIMARY KEY (run_id, t_s)
);
`

func (s *Store) migrate(ctx context.Context) error {
	// Tables are only ever added (evidence and baselines came after runs):
	// a store made by an older shakedown gains them here, and older ones
	// ignore them.
	for _, stmt := range s.dialect.schema() {
		if _, err := s.db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("create tables: %w", err)
		}
	}
	if err := s.addColumns(ctx); err != nil {
		return err
	}
	// Indexes on added columns come once the columns are there.
	if _, ok := s.dialect.(sqliteDialect); ok {
		for _, stmt := range statements(sqliteIndexes) {
			if _, err := s.db.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("create indexes: %w", err)
			}
		}
	}
	var v string
	err := s.db.QueryRowContext(ctx, "SELECT value FROM meta WHERE `key` = 'schema_version'").Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		_, err = s.db.ExecContext(ctx, "INSERT INTO meta(`key`, value) VALUES ('schema_version', ?)", strconv.Itoa(SchemaVersion))
		// Runners of a split load open a new shared store at once: another
		// may have written it first.
		if err != nil && !s.dialect.duplicate(err) {
			return fmt.Errorf("write schema version: %w", err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("read schema version: %w", err)
	}
	if n, _ := strconv.Atoi(v); n > SchemaVersion {
		return fmt.Errorf("the store has layout %s, newer than this shakedown knows (%d): use a newer shakedown or another --store", v, SchemaVersion)
	}
	return nil
}

// added are the columns later layouts added to the tables of layout 1, each
// with a default, so that a store written before them reads and writes as
// it did: a migration only adds.
var added = []struct{ table, column, decl string }{
	{"runs", "degraded", "INTEGER NOT NULL DEFAULT 0"},
	// The part of a split load a run is (NULL: a run alone).
	{"runs", "split_id", "INTEGER"},
	{"runs", "seg_index", "INTEGER NOT NULL DEFAULT 0"},
	// The runs of the other targets beside a baseline's (NULL: none kept).
	{"baselines", "witness_run_ids", "TEXT"},
}

// sqliteIndexes are the SQLite indexes on added columns. A segment
// reports each step once: the unique key refuses a second report.
const sqliteIndexes = `
CREATE UNIQUE INDEX IF NOT EXISTS runs_split_part ON runs(split_id, step, seg_index);
`

func (s *Store) addColumns(ctx context.Context) error {
	for _, a := range added {
		has, err := s.dialect.hasColumn(ctx, s.db, a.table, a.column)
		if err != nil {
			return fmt.Errorf("read the layout of %s: %w", a.table, err)
		}
		if has {
			continue
		}
		if _, err := s.db.ExecContext(ctx, "ALTER TABLE "+a.table+" ADD COLUMN "+a.column+" "+a.decl); err != nil {
			// Another process opening the store at the same moment may
			// have added it.
			if has, _ := s.dialect.hasColumn(ctx, s.db, a.table, a.column); has {
				continue
			}
			return fmt.Errorf("add %s.%s: %w", a.table, a.column, err)
		}
	}
	return nil
}

func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// CreateSweep records a new sweep with its targets and returns its ID.
func (s *Store) CreateSweep(ctx context.Context, sw *Sweep, targets []Target) (int64, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("record sweep: %w", err)
	}
	defer tx.Rollback()
	id, err := createSweep(ctx, tx, sw, targets)
	if err != nil {
		return 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("record sweep: %w", err)
	}
	return id, nil
}

// createSweep records a sweep and its targets in tx, and sets sw.ID.
func createSweep(ctx context.Context, tx *sql.Tx, sw *Sweep, targets []Target) (int64, error) {
	settings, err := json.Marshal(sw.Settings)
	if err != nil {
		return 0, fmt.Errorf("record sweep: %w", err)
	}
	status := sw.Status
	if status == "" {
		status = SweepRunning
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO sweeps(name, plan_path, plan, started_at, finished_at, status, steps, client_host, tool, settings)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		sw.Name, sw.PlanPath, sw.Plan, timeText(sw.StartedAt), timeText(sw.FinishedAt), status, sw.Steps, sw.ClientHost, sw.Tool, string(settings))
	if err != nil {
		return 0, fmt.Errorf("record sweep: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("record sweep: %w", err)
	}
	for i, t := range targets {
		vars := t.Variables
		if vars == nil {
			vars = map[string]string{}
		}
		vb, err := json.Marshal(vars)
		if err != nil {
			return 0, fmt.Errorf("record target %s: %w", t.Name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO targets(sweep_id, position, name, role, url, server_version, flavour, variables)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, id, i, t.Name, t.Role, t.URL, t.Version, t.Flavour, string(vb)); err != nil {
			return 0, fmt.Errorf("record target %s: %w", t.Name, err)
		}
	}
	sw.ID = id
	sw.Status = status
	return id, nil
}

// FinishSweep sets a sweep's final status and end time.
func (s *Store) FinishSweep(ctx context.Context, id int64, status string, at time.Time) error {
	res, err := s.db.ExecContext(ctx, `UPDATE sweeps SET status = ?, finished_at = ? WHERE id = ?`, status, timeText(at), id)
	if err != nil {
		return fmt.Errorf("finish sweep %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("finish sweep %d: %w", id, ErrNotFound)
	}
	return nil
}

// ReopenSweep marks a stored sweep as running again, to be continued.
func (s *Store) ReopenSweep(ctx context.Context, id int64) error {
	res, err := s.db.ExecContext(ctx, `UPDATE sweeps SET status = ?, finished_at = '' WHERE id = ?`, SweepRunning, id)
	if err != nil {
		return fmt.Errorf("reopen sweep %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("reopen sweep %d: %w", id, ErrNotFound)
	}
	return nil
}

// SetSweepSteps records how many steps a sweep has, when it grows
// (repeats: auto).
func (s *Store) SetSweepSteps(ctx context.Context, id int64, steps int) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE sweeps SET steps = ? WHERE id = ?`, steps, id); err != nil {
		return fmt.Errorf("record the steps of sweep %d: %w", id, err)
	}
	return nil
}

// AddRun records a run with its result document and intervals, and sets
// r.ID.
func (s *Store) AddRun(ctx context.Context, r *Run) (int64, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("record run: %w", err)
	}
	defer tx.Rollback()
	var sweep any
	if r.SweepID != 0 {
		sweep = r.SweepID
	}
	var doc any
	var qps, tps, avg, p95, p99, maxL, errs any
	if res := r.Result; res != nil {
		b, err := json.Marshal(res)
		if err != nil {
			return 0, fmt.Errorf("record run: %w", err)
		}
		doc = string(b)
		qps, tps, errs = res.QPS, res.TPS, res.Errors.Total
		avg, p95, p99, maxL = res.LatencyMS.Avg, res.LatencyMS.P95, res.LatencyMS.P99, res.LatencyMS.Max
	}
	rep := r.Repeat
	if rep == 0 {
		rep = 1
	}
	var split any
	seg := 0
	if r.Part != nil {
		split, seg = r.Part.SplitID, r.Part.Index
	}
	out, err := tx.ExecContext(ctx, `INSERT INTO runs(sweep_id, step, target, role, workload, threads, repeat_no, command, status, error,
		started_at, wall_s, qps, tps, lat_avg_ms, lat_p95_ms, lat_p99_ms, lat_max_ms, errors, result, degraded, split_id, seg_index)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		sweep, r.Step, r.Target, r.Role, r.Workload, r.Threads, rep, r.Command, r.Status, r.Error,
		timeText(r.StartedAt), r.WallS, qps, tps, avg, p95, p99, maxL, errs, doc, r.Degraded, split, seg)
	if s.dialect.duplicate(err) && r.Part != nil {
		return 0, fmt.Errorf("record run: segment %d of split %d already reported step %d: %w", seg+1, r.Part.SplitID, r.Step, ErrReported)
	}
	if err != nil {
		return 0, fmt.Errorf("record run: %w", err)
	}
	id, err := out.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("record run: %w", err)
	}
	if r.Result != nil && len(r.Result.Intervals) > 0 {
		stmt, err := tx.PrepareContext(ctx, `REPLACE INTO intervals(run_id, t_s, threads, tps, qps, read_qps, write_qps, other_qps,
			latency_pct_ms, latency_avg_ms, latency_max_ms, err_ps, reconn_ps) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return 0, fmt.Errorf("record intervals: %w", err)
		}
		defer stmt.Close()
		for _, iv := range r.Result.Intervals {
			if _, err := stmt.ExecContext(ctx, id, iv.AtS, iv.Threads, iv.TPS, iv.QPS, iv.ReadQPS, iv.WriteQPS, iv.OtherQPS,
				iv.LatencyPct, iv.LatencyAvg, iv.LatencyMax, iv.ErrorsPS, iv.ReconnPS); err != nil {
				return 0, fmt.Errorf("record intervals: %w", err)
			}
		}
	}
	if r.Part != nil {
		if err := s.addIntervalHDR(ctx, tx, id, r.Part.Intervals); err != nil {
			return 0, err
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("record run: %w", err)
	}
	r.ID = id
	return id, nil
}
