package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/target"
)

// dialect is what differs between the two backends: the tables' DDL and
// the few statements each server spells its own way. Every other query is
// written once, in the SQL both understand (? placeholders, REPLACE INTO,
// backquoted names).
type dialect interface {
	// schema is the DDL, one statement each, every one safe to run again.
	schema() []string
	// hasColumn reports whether table has column.
	hasColumn(ctx context.Context, db *sql.DB, table, column string) (bool, error)
	// duplicate reports whether err is a unique key refusing a row.
	duplicate(err error) bool
	// now is the store's clock.
	now(ctx context.Context, db *sql.DB) (time.Time, error)
	name() string
}

// statements splits DDL at the semicolons that end its lines.
func statements(ddl string) []string {
	var out []string
	for _, s := range strings.Split(ddl, ";\n") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, strings.TrimSuffix(s, ";"))
		}
	}
	return out
}

// sqliteDialect is the embedded default.
type sqliteDialect struct{}

func (sqliteDialect) name() string { return "sqlite" }

func (sqliteDialect) schema() []string {
	return statements(schema + evidenceSchema + baselineSchema + splitSchema + notesSchema + rehearsalSchema)
}

func (sqliteDialect) hasColumn(ctx context.Context, db *sql.DB, table, column string) (bool, error) {
	var n int
	err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?`, table, column).Scan(&n)
	return n > 0, err
}

func (sqliteDialect) duplicate(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

func (sqliteDialect) now(context.Context, *sql.DB) (time.Time, error) {
	// The file is on this host: its clock is ours.
	return time.Now(), nil
}

// mysqlDialect is a store on a MySQL-compatible server (MySQL, MariaDB,
// TiDB), shared by the runners of a split load.
type mysqlDialect struct{}

func (mysqlDialect) name() string { return "mysql" }

func (mysqlDialect) schema() []string {
	return statements(mysqlSchema + mysqlNotesSchema + mysqlRehearsalSchema)
}

func (mysqlDialect) hasColumn(ctx context.Context, db *sql.DB, table, column string) (bool, error) {
	var n int
	err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = ?`,
		table, column).Scan(&n)
	return n > 0, err
}

func (mysqlDialect) duplicate(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == target.ERDupEntry
}

func (mysqlDialect) now(ctx context.Context, db *sql.DB) (time.Time, error) {
	// UNIX_TIMESTAMP does not depend on the session's time zone.
	var s string
	if err := db.QueryRowContext(ctx, `SELECT CAST(UNIX_TIMESTAMP(NOW(6)) AS CHAR)`).Scan(&s); err != nil {
		return time.Time{}, fmt.Errorf("read the store's clock: %w", err)
	}
	return parseUnix(s)
}

// parseUnix reads seconds since the epoch with up to 6 decimals, without
// the rounding of a float.
func parseUnix(s string) (time.Time, error) {
	sec, frac, _ := strings.Cut(strings.TrimSpace(s), ".")
	n, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("read the store's clock: %q is not a time", s)
	}
	frac = (frac + "000000")[:6]
	us, err := strconv.ParseInt(frac, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("read the store's clock: %q is not a time", s)
	}
	return time.Unix(n, us*1000), nil
}

// mysqlPlanRunColumns is planRunColumns for a store on a server.
const mysqlPlanRunColumns = `
	id           BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	name         VARCHAR(255) NOT NULL,
	plan_path    VARCHAR(1024) NOT NULL DEFAULT '',
	plan         LONGTEXT NOT NULL,
	started_at   VARCHAR(40) NOT NULL,
	finished_at  VARCHAR(40) NOT NULL DEFAULT '',
	status       VARCHAR(32) NOT NULL,`

// mysqlSchema is the SQLite schema translated: the same tables and
// columns. Text that is a key or has a default is VARCHAR (191 characters
// keeps a utf8mb4 key within the oldest InnoDB limit); documents are
// LONGTEXT, which takes no default, so every INSERT names them. Indexes
// are declared in the tables, as MySQL has no CREATE INDEX IF NOT EXISTS.
const mysqlSchema = `
CREATE TABLE IF NOT EXISTS meta (
	` + "`key`" + ` VARCHAR(191) NOT NULL PRIMARY KEY,
	value VARCHAR(255) NOT NULL
) DEFAULT CHARSET=utf8mb4;
CREATE TABLE IF NOT EXISTS sweeps (` + mysqlPlanRunColumns + `
	steps        BIGINT NOT NULL,
	client_host  VARCHAR(255) NOT NULL,
	tool         VARCHAR(255) NOT NULL,
	settings     LONGTEXT NOT NULL
) DEFAULT CHARSET=utf8mb4;
CREATE TABLE IF NOT EXISTS targets (
	sweep_id       BIGINT NOT NULL,
	position       BIGINT NOT NULL,
	name           VARCHAR(191) NOT NULL,
	role           VARCHAR(32) NOT NULL,
	url            VARCHAR(1024) NOT NULL,
	server_version VARCHAR(255) NOT NULL,
	flavour        VARCHAR(64) NOT NULL,
	variables      LONGTEXT NOT NULL,
	PRIMARY KEY (sweep_id, name)
) DEFAULT CHARSET=utf8mb4;
CREATE TABLE IF NOT EXISTS runs (
	id          BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	sweep_id    BIGINT NULL,
	step        BIGINT NOT NULL DEFAULT 0,
	target      VARCHAR(255) NOT NULL,
	role        VARCHAR(32) NOT NULL DEFAULT '',
	workload    VARCHAR(255) NOT NULL,
	threads     BIGINT NOT NULL,
	repeat_no   BIGINT NOT NULL DEFAULT 1,
	command     TEXT NOT NULL,
	status      VARCHAR(32) NOT NULL,
	error       TEXT NOT NULL,
	started_at  VARCHAR(40) NOT NULL,
	wall_s      DOUBLE NOT NULL DEFAULT 0,
	qps         DOUBLE NULL,
	tps         DOUBLE NULL,
	lat_avg_ms  DOUBLE NULL,
	lat_p95_ms  DOUBLE NULL,
	lat_p99_ms  DOUBLE NULL,
	lat_max_ms  DOUBLE NULL,
	errors      BIGINT NULL,
	result      LONGTEXT NULL,
	degraded    BIGINT NOT NULL DEFAULT 0,
	split_id    BIGINT NULL,
	seg_index   BIGINT NOT NULL DEFAULT 0,
	INDEX runs_by_sweep (sweep_id, step),
	UNIQUE KEY runs_split_part (split_id, step, seg_index)
) DEFAULT CHARSET=utf8mb4;
CREATE TABLE IF NOT EXISTS intervals (
	run_id         BIGINT NOT NULL,
	t_s            DOUBLE NOT NULL,
	threads        BIGINT NOT NULL,
	tps            DOUBLE NOT NULL,
	qps            DOUBLE NOT NULL,
	read_qps       DOUBLE NOT NULL,
	write_qps      DOUBLE NOT NULL,
	other_qps      DOUBLE NOT NULL,
	latency_pct_ms DOUBLE NOT NULL,
	latency_avg_ms DOUBLE NOT NULL,
	latency_max_ms DOUBLE NOT NULL,
	err_ps         DOUBLE NOT NULL,
	reconn_ps      DOUBLE NOT NULL,
	PRIMARY KEY (run_id, t_s)
) DEFAULT CHARSET=utf8mb4;
CREATE TABLE IF NOT EXISTS evidence (
	id        BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	kind      VARCHAR(32) NOT NULL,
	source    VARCHAR(1024) NOT NULL,
	target    VARCHAR(1024) NOT NULL,
	at        VARCHAR(40) NOT NULL,
	tool      VARCHAR(255) NOT NULL DEFAULT '',
	outcome   VARCHAR(32) NOT NULL,
	summary   TEXT NOT NULL,
	document  LONGTEXT NOT NULL,
	INDEX evidence_by_kind (kind, id)
) DEFAULT CHARSET=utf8mb4;
CREATE TABLE IF NOT EXISTS baselines (
	name       VARCHAR(191) NOT NULL PRIMARY KEY,
	created_at VARCHAR(40) NOT NULL,
	target     VARCHAR(255) NOT NULL,
	source     VARCHAR(255) NOT NULL,
	run_ids    LONGTEXT NOT NULL,
	witness_run_ids LONGTEXT
) DEFAULT CHARSET=utf8mb4;
CREATE TABLE IF NOT EXISTS splits (
	id          BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	run_key     VARCHAR(191) NOT NULL,
	kind        VARCHAR(32) NOT NULL,
	sweep_id    BIGINT NULL,
	seg_sequence VARCHAR(1024) NOT NULL,
	runners     BIGINT NOT NULL,
	start_at    VARCHAR(40) NOT NULL DEFAULT '',
	created_at  VARCHAR(40) NOT NULL,
	description TEXT NOT NULL,
	UNIQUE KEY splits_by_key (run_key)
) DEFAULT CHARSET=utf8mb4;
CREATE TABLE IF NOT EXISTS runners (
	split_id        BIGINT NOT NULL,
	seg_index       BIGINT NOT NULL,
	segment         VARCHAR(255) NOT NULL,
	label           VARCHAR(255) NOT NULL,
	host            VARCHAR(255) NOT NULL DEFAULT '',
	registered_at   VARCHAR(40) NOT NULL,
	first_start_at  VARCHAR(40) NOT NULL DEFAULT '',
	finished_at     VARCHAR(40) NOT NULL DEFAULT '',
	status          VARCHAR(32) NOT NULL,
	clock_offset_us BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (split_id, seg_index)
) DEFAULT CHARSET=utf8mb4;
CREATE TABLE IF NOT EXISTS interval_hdr (
	run_id       BIGINT NOT NULL,
	seq          BIGINT NOT NULL,
	t_start_us   BIGINT NOT NULL,
	t_end_us     BIGINT NOT NULL,
	n_threads    BIGINT NOT NULL,
	n_events     BIGINT NOT NULL,
	n_reads      BIGINT NOT NULL,
	n_writes     BIGINT NOT NULL,
	n_others     BIGINT NOT NULL,
	n_errors     BIGINT NOT NULL,
	n_reconnects BIGINT NOT NULL,
	lat_count    BIGINT NOT NULL,
	lat_sum_ns   BIGINT NOT NULL,
	lat_min_ns   BIGINT NOT NULL,
	lat_max_ns   BIGINT NOT NULL,
	hdr          LONGTEXT NOT NULL,
	PRIMARY KEY (run_id, seq)
) DEFAULT CHARSET=utf8mb4;
CREATE TABLE IF NOT EXISTS marks (
	split_id  BIGINT NOT NULL,
	name      VARCHAR(191) NOT NULL,
	resume_at VARCHAR(40) NOT NULL DEFAULT '',
	error     TEXT NOT NULL,
	at        VARCHAR(40) NOT NULL,
	PRIMARY KEY (split_id, name)
) DEFAULT CHARSET=utf8mb4;
`
