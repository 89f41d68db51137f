// Package dbcopy copies databases from a source server to a target: the
// schema in dependency order, the rows in parallel by key ranges, then what
// is cheaper after the rows (secondary indexes, foreign keys, triggers),
// and proves the result with verify.
//
// # Safety
//
// The source is only read (SELECT, SHOW, and the brief lock below). The
// target is written only when Options.AllowWrite is set, and a target
// database that holds tables is refused (ErrTargetNotEmpty) unless
// Options.Replace, which drops it first.
//
// # Consistency
//
// With ConsistencyLock, a control connection takes the server's lightest
// global lock that stops commits (MariaDB's BACKUP STAGE BLOCK_COMMIT, else
// FLUSH TABLES WITH READ LOCK), every worker connection starts a
// REPEATABLE READ transaction WITH CONSISTENT SNAPSHOT, the binary log
// position and GTID set are read, and the lock is released: it is held for
// the time it takes to open the snapshots, and every row read afterwards
// comes from the same point in time. ConsistencyNone reads each range as it
// is at that moment; the result says so.
//
// # Data
//
// Each table is cut into key ranges by verify's Splitter; Options.Threads
// workers each copy one range at a time: the rows are read from the
// worker's snapshot as text and streamed, as they are read, into one LOAD
// DATA LOCAL INFILE statement on the target (one statement, so one
// transaction, per range), or sent as multi-row INSERTs where the target
// refuses LOAD DATA LOCAL. Memory is bounded by the threads and the range
// size, not by the table. A table without a usable key is one range.
//
// # Subsets
//
// Options.Where and Options.Sample choose rows; with Options.FollowFK the
// rows that reference the chosen ones are added down to Options.FKDepth,
// then every row those rows reference, so that no foreign key dangles. Each
// table's choice is one SQL condition, applied in the snapshot and again by
// verify on both sides.
//
// # Checkpoint
//
// With Options.Checkpoint, every planned and finished range is written to a
// file as it happens; Options.Resume continues after the finished ones
// (ranges planned and not finished are emptied on the target and copied
// again). A resumed copy reads from a new snapshot.
package dbcopy

import (
	"errors"
	"io"
	"time"

	"github.com/shakedown/shakedown/internal/usage"
)

// Consistency modes.
const (
	ConsistencyLock = "lock"
	ConsistencyNone = "none"
)

// Errors callers test for: the first three are bad usage.
var (
	ErrWriteNotAllowed = errors.New("writing to the target needs --allow-write")
	ErrTargetNotEmpty  = errors.New("target database holds tables")
	ErrNothingToCopy   = errors.New("nothing to copy")
	ErrInterrupted     = errors.New("copy interrupted")
)

// Options control a copy. The zero value of each field means its default.
type Options struct {
	// Databases to copy, by the same names on the target. Empty: the source
	// URL's database into the target URL's (or the same name).
	Databases []string
	// Threads is how many ranges are copied at once (default 4).
	Threads int
	// ChunkRows is the rows per range (default 10,000).
	ChunkRows int64
	// Consistency is ConsistencyLock (default) or ConsistencyNone.
	Consistency string
	// AllowWrite must be set: the target is written.
	AllowWrite bool
	// Replace drops a target database that holds tables.
	Replace bool
	// Schema is SchemaCreate (default) or SchemaExisting: load into the
	// target's own tables.
	Schema string
	// Accounts copies the accounts with privileges on the copied
	// databases and those privileges (not global ones).
	Accounts bool
	// IndexesWithData creates secondary indexes with the tables instead of
	// after the rows.
	IndexesWithData bool
	// Where chooses rows of tables by condition: "db.table" or "table" ->
	// SQL condition on that table's columns.
	Where map[string]string
	// Sample is the fraction (0..1] of rows chosen in every table that
	// has no Where and no foreign key of its own; 0 for none.
	Sample float64
	// FollowFK brings referencing rows down to FKDepth levels and all
	// referenced rows (default on with a subset: NoFollowFK turns it off).
	NoFollowFK bool
	FKDepth    int
	// Checkpoint is a file recording finished ranges; Resume continues a
	// copy that one recorded.
	Checkpoint string
	Resume     bool
	// DeferTriggers leaves the source's triggers out, for a copy that is
	// followed: applied row changes would fire them. A note names them.
	DeferTriggers bool
	// NoVerify skips the final verify; NoAnalyze skips ANALYZE TABLE.
	NoVerify  bool
	NoAnalyze bool
	// Log receives a line per step (nil: none). OnProgress, when set, is
	// called after each range from several goroutines at once.
	Log        io.Writer
	OnProgress func(Progress)

	// For tests: called after each finished range, with how many have
	// finished; and the table size from which indexes wait for the rows
	// (0: deferIndexRows).
	afterChunk func(n int)
	deferRows  int64
}

// Validate checks the options as the flags of copy's command line set
// them, before anything connects: a fault is bad usage that names the
// flag.
func (o *Options) Validate() error {
	switch {
	case !o.AllowWrite:
		return usage.Errorf("copy: %v: TARGET is written (tables created, rows loaded); add --allow-write", ErrWriteNotAllowed)
	case o.Threads < 1:
		return usage.Errorf("copy: --threads must be >= 1")
	case o.ChunkRows < 100:
		return usage.Errorf("copy: --chunk-rows must be >= 100")
	case o.Consistency != ConsistencyLock && o.Consistency != ConsistencyNone:
		return usage.Errorf("copy: --consistency must be lock or none, got %q", o.Consistency)
	case o.FKDepth < 1:
		return usage.Errorf("copy: --fk-depth must be >= 1")
	case o.Resume && o.Checkpoint == "":
		return usage.Errorf("copy: --resume needs --checkpoint FILE")
	}
	return nil
}

func (o *Options) defaults() {
	if o.Threads <= 0 {
		o.Threads = 4
	}
	if o.ChunkRows <= 0 {
		o.ChunkRows = 10_000
	}
	if o.Consistency == "" {
		o.Consistency = ConsistencyLock
	}
	if o.Schema == "" {
		o.Schema = SchemaCreate
	}
	if o.deferRows == 0 {
		o.deferRows = deferIndexRows
	}
	if o.FKDepth <= 0 {
		o.FKDepth = 3
	}
}

// Result is what a copy did.
type Result struct {
	Source      string         `json:"source"`
	Target      string         `json:"target"`
	Databases   []DatabasePair `json:"databases"`
	Consistency string         `json:"consistency"` // how: the lock taken, or "none"
	Schema      string         `json:"schema"`      // create, or existing: the target's own tables
	LockSeconds float64        `json:"lock_seconds"`
	BinlogFile  string         `json:"binlog_file,omitempty"`
	BinlogPos   int64          `json:"binlog_pos,omitempty"`
	GTID        string         `json:"gtid,omitempty"`
	Loader      string         `json:"loader"` // "load data local" or "insert"
	Resumed     bool           `json:"resumed"`
	Subset      bool           `json:"subset"`
	Tables      []*TableResult `json:"tables"`
	Views       int            `json:"views"`
	Routines    int            `json:"routines"`
	Triggers    int            `json:"triggers"`
	Events      int            `json:"events"` // created disabled
	Accounts    int            `json:"accounts"`
	Rows        int64          `json:"rows"`
	Bytes       int64          `json:"bytes"`
	Seconds     float64        `json:"seconds"`      // the whole copy, verify excluded
	DataSeconds float64        `json:"data_seconds"` // the rows alone
	// FullEstimate is, for a subset, the seconds the rows of the whole
	// tables (by the source's row estimates) would take at this copy's
	// rate: a first figure for the real migration.
	FullRowsEst  int64         `json:"full_rows_estimate,omitempty"`
	FullEstimate float64       `json:"full_seconds_estimate,omitempty"`
	Verify       *VerifyResult `json:"verify,omitempty"`
	Notes        []string      `json:"notes"`
}

// DatabasePair is a source database and the target database it went to.
type DatabasePair struct {
	Source string `json:"source"`
	Target string `json:"target"`
}

// TableResult is one table's copy.
type TableResult struct {
	Table     string  `json:"table"` // db.table on the source
	Where     string  `json:"where,omitempty"`
	Rows      int64   `json:"rows"`
	Bytes     int64   `json:"bytes"` // the text sent to the target
	Chunks    int     `json:"chunks"`
	Seconds   float64 `json:"seconds"`
	RowsPerS  float64 `json:"rows_per_second"`
	GBPerHour float64 `json:"gb_per_hour"`
}

// VerifyResult sums up the final verify.
type VerifyResult struct {
	Equal             bool     `json:"equal"`
	Tables            int      `json:"tables"`
	DifferingRows     int64    `json:"differing_rows"`
	SchemaDifferences int      `json:"schema_differences"`
	Differing         []string `json:"differing_tables"`
	Seconds           float64  `json:"seconds"`
}

// Progress is the state of the data phase after a range.
type Progress struct {
	Table             string
	TableRows         int64
	TableEst          int64
	Rows, EstRows     int64
	Bytes             int64
	Elapsed           time.Duration
	TablesDone, Total int
}
