package follow

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/target"
)

// Schema is the target database the follower keeps its position in.
const Schema = "shakedown_follow"

// States a saved position can be in.
const (
	StateFollowing = "following"
	StateStopped   = "stopped"
	StateCaughtUp  = "caught up"
	StateDDL       = "stopped at ddl"
	StateFailed    = "failed"
)

// Saved is the follower's row in shakedown_follow.position: where it is,
// and what it was doing when it last wrote.
type Saved struct {
	Name      string   `json:"name"` // the target databases, comma-separated
	Source    string   `json:"source"`
	ServerID  uint32   `json:"source_server_id"`
	Databases []Pair   `json:"databases"`
	Position  Position `json:"position"`
	// DDL is the end of the DDL statement the follower stopped before
	// (zero when it did not).
	DDL        Position  `json:"ddl,omitempty"`
	DDLText    string    `json:"ddl_statement,omitempty"`
	State      string    `json:"state"`
	Events     int64     `json:"events"`
	Rows       int64     `json:"rows"`
	EventTime  time.Time `json:"event_time"` // the last applied event's time on the source
	LagSeconds float64   `json:"lag_seconds"`
	Heartbeat  time.Time `json:"heartbeat"` // when the follower last wrote the row
}

// Alive says the follower that wrote s is still at work: it writes at
// least every second while it runs.
func (s *Saved) Alive(now time.Time) bool {
	return (s.State == StateFollowing || s.State == StateHeld) && now.Sub(s.Heartbeat) < 5*time.Second
}

// nameOf is the key of the position row for these databases.
func nameOf(pairs []Pair) string {
	return strings.Join(targetNames(pairs), ",")
}

func encodePairs(pairs []Pair) string {
	s := make([]string, len(pairs))
	for i, p := range pairs {
		s[i] = p.Source + "=" + p.Target
	}
	return strings.Join(s, ",")
}

func decodePairs(s string) []Pair {
	var out []Pair
	for _, f := range strings.Split(s, ",") {
		if src, dst, ok := strings.Cut(f, "="); ok {
			out = append(out, Pair{src, dst})
		}
	}
	return out
}

// ensureSchema creates the position table if the target lacks it.
func ensureSchema(ctx context.Context, db *sql.DB) error {
	for _, stmt := range []string{
		"CREATE DATABASE IF NOT EXISTS " + Schema,
		"CREATE TABLE IF NOT EXISTS " + Schema + `.position (
  name VARCHAR(190) NOT NULL PRIMARY KEY,
  source VARCHAR(255) NOT NULL,
  server_id BIGINT UNSIGNED NOT NULL,
  dbs TEXT NOT NULL,
  binlog_file VARCHAR(255) NOT NULL,
  binlog_pos BIGINT UNSIGNED NOT NULL,
  gtid TEXT NOT NULL,
  ddl_file VARCHAR(255) NOT NULL DEFAULT '',
  ddl_pos BIGINT UNSIGNED NOT NULL DEFAULT 0,
  ddl_text TEXT,
  state VARCHAR(32) NOT NULL,
  events BIGINT NOT NULL DEFAULT 0,
  rows_applied BIGINT NOT NULL DEFAULT 0,
  event_time_ms BIGINT NOT NULL DEFAULT 0,
  lag_seconds DOUBLE NOT NULL DEFAULT 0,
  heartbeat_ms BIGINT NOT NULL DEFAULT 0
)`, holdTable,
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("target: create the follower's position table (%s): %w", Schema, err)
		}
	}
	return nil
}

// Load reads the saved position of the follower of these target
// databases (comma-separated), or ErrNoPosition.
func Load(ctx context.Context, db *sql.DB, name string) (*Saved, error) {
	var (
		s                          Saved
		dbs, ddlText               sql.NullString
		eventMS, beatMS, pos, dpos int64
	)
	err := db.QueryRowContext(ctx, "SELECT name, source, server_id, dbs, binlog_file, binlog_pos, gtid, ddl_file, ddl_pos, ddl_text, state, events, rows_applied, event_time_ms, lag_seconds, heartbeat_ms FROM "+Schema+".position WHERE name = ?", name).
		Scan(&s.Name, &s.Source, &s.ServerID, &dbs, &s.Position.File, &pos, &s.Position.GTID, &s.DDL.File, &dpos, &ddlText, &s.State, &s.Events, &s.Rows, &eventMS, &s.LagSeconds, &beatMS)
	if errors.Is(err, sql.ErrNoRows) || isNoTable(err) {
		return nil, fmt.Errorf("%w for %s on the target (%s.position): start with copy --follow, or give --from FILE:POS", ErrNoPosition, name, Schema)
	}
	if err != nil {
		return nil, fmt.Errorf("target: read the saved position: %w", err)
	}
	s.Position.Pos, s.DDL.Pos = uint32(pos), uint32(dpos)
	s.Databases = decodePairs(dbs.String)
	s.DDLText = ddlText.String
	s.EventTime, s.Heartbeat = time.UnixMilli(eventMS), time.UnixMilli(beatMS)
	return &s, nil
}

// save writes s, with its heartbeat now.
func save(ctx context.Context, db *sql.DB, s *Saved) error {
	s.Heartbeat = time.Now()
	_, err := db.ExecContext(ctx, "REPLACE INTO "+Schema+".position (name, source, server_id, dbs, binlog_file, binlog_pos, gtid, ddl_file, ddl_pos, ddl_text, state, events, rows_applied, event_time_ms, lag_seconds, heartbeat_ms) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
		s.Name, s.Source, s.ServerID, encodePairs(s.Databases), s.Position.File, s.Position.Pos, s.Position.GTID, s.DDL.File, s.DDL.Pos, s.DDLText,
		s.State, s.Events, s.Rows, s.EventTime.UnixMilli(), s.LagSeconds, s.Heartbeat.UnixMilli())
	if err != nil {
		return fmt.Errorf("target: save the position: %w", err)
	}
	return nil
}

// isNoTable says err is "table or database does not exist".
func isNoTable(err error) bool {
	code := target.Code(err)
	return code == target.ERNoSuchTable || code == target.ERBadDB
}
