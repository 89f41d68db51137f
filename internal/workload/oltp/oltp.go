// Package oltp implements sysbench 1.0.20's OLTP family of workloads:
// oltp_read_write, oltp_read_only, oltp_write_only, oltp_point_select,
// oltp_insert, oltp_update_index, oltp_update_non_index, oltp_delete,
// select_random_points, select_random_ranges and bulk_insert.
//
// Each workload sends the server the statements sysbench's Lua script of the
// same name sends, in the same order, prepared or as text as sysbench does,
// with the same options and defaults, so the server's Com_* counters per event
// match sysbench's. Prepare makes the same tables and rows, but loads them
// faster: in parallel within and across tables, with LOAD DATA LOCAL INFILE
// where the server allows it.
package oltp

import (
	"fmt"
	"regexp"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/workload"
)

// kind says which sysbench script a generator stands for.
type kind int

const (
	readWrite kind = iota
	readOnly
	writeOnly
	pointSelect
	insert
	updateIndex
	updateNonIndex
	deleteOnly
	randomPoints
	randomRanges
	bulkInsert
)

var metas = []struct {
	kind kind
	name string
	desc string
}{
	{readWrite, "oltp_read_write", "sysbench OLTP read/write transactions: point and range SELECTs, UPDATEs, DELETE+INSERT"},
	{readOnly, "oltp_read_only", "sysbench OLTP read-only transactions: point and range SELECTs"},
	{writeOnly, "oltp_write_only", "sysbench OLTP write-only transactions: UPDATEs and DELETE+INSERT"},
	{pointSelect, "oltp_point_select", "sysbench OLTP point SELECT by primary key, one per event"},
	{insert, "oltp_insert", "sysbench OLTP single-row INSERTs"},
	{updateIndex, "oltp_update_index", "sysbench OLTP UPDATEs of the indexed column k"},
	{updateNonIndex, "oltp_update_non_index", "sysbench OLTP UPDATEs of the non-indexed column c"},
	{deleteOnly, "oltp_delete", "sysbench OLTP single-row DELETEs"},
	{randomPoints, "select_random_points", "sysbench SELECTs of random points of k with IN()"},
	{randomRanges, "select_random_ranges", "sysbench SELECT count(k) over random BETWEEN ranges of k"},
	{bulkInsert, "bulk_insert", "sysbench multi-row INSERTs, each thread into its own table"},
}

func init() {
	for _, m := range metas {
		m := m
		meta := workload.Meta{Name: m.name, Description: m.desc, Sysbench: true}
		meta.New = func() workload.Generator { return newGenerator(m.kind, meta) }
		workload.Register(meta)
	}
}

// Options are the options of sysbench's oltp_common.lua plus the few that
// individual scripts add. Names use '-' here; the command line accepts '_'.
type Options struct {
	TableSize       int
	RangeSize       int
	Tables          int
	PointSelects    int
	SimpleRanges    int
	SumRanges       int
	OrderRanges     int
	DistinctRanges  int
	IndexUpdates    int
	NonIndexUpdates int
	DeleteInserts   int
	RangeSelects    bool
	AutoInc         bool
	SkipTrx         bool
	Secondary       bool
	CreateSecondary bool
	StorageEngine   string
	// CreateTableOptions is appended to CREATE TABLE. sysbench 1.0.20 has no
	// such option (later releases do); it is an extension.
	CreateTableOptions string
	PgsqlVariant       string // accepted for compatibility; PostgreSQL only

	RandomPoints   int // select_random_points
	NumberOfRanges int // select_random_ranges
	Delta          int // select_random_ranges
}

// DefaultOptions returns sysbench 1.0.20's defaults.
func DefaultOptions() Options {
	return Options{
		TableSize:       10000,
		RangeSize:       100,
		Tables:          1,
		PointSelects:    10,
		SimpleRanges:    1,
		SumRanges:       1,
		OrderRanges:     1,
		DistinctRanges:  1,
		IndexUpdates:    1,
		NonIndexUpdates: 1,
		DeleteInserts:   1,
		RangeSelects:    true,
		AutoInc:         true,
		Secondary:       false,
		CreateSecondary: true,
		StorageEngine:   "innodb",
		RandomPoints:    10,
		NumberOfRanges:  10,
		Delta:           5,
	}
}

// generator is one configured workload of the family.
type generator struct {
	kind kind
	meta workload.Meta
	opts Options
	fs   *pflag.FlagSet

	bulk bulkState // bulk_insert only
}

func newGenerator(k kind, meta workload.Meta) *generator {
	g := &generator{kind: k, meta: meta, opts: DefaultOptions()}
	g.fs = g.buildFlags()
	if k == bulkInsert {
		// bulk_insert.lua reads none of oltp_common.lua's options, and
		// sysbench 1.0.20 checks no option of a script that declares
		// none: a line that ran an OLTP script still runs it with
		// --tables, --table-size and the rest, which change nothing.
		// They are taken and ignored here too, hidden from the help and
		// left out of the result's options.
		g.fs.VisitAll(func(f *pflag.Flag) {
			f.Hidden = true
			f.Usage = "accepted and ignored, as sysbench's bulk_insert.lua does: it reads none of the OLTP options"
		})
	}
	return g
}

func (g *generator) Meta() workload.Meta { return g.meta }

// EventKind says what one event is as the server counts it: a transaction
// when the script wraps its statements in BEGIN..COMMIT, a statement when
// it sends one alone (oltp_point_select, oltp_insert, the select_random_*
// scripts), and unknown for several statements without a transaction
// (--skip-trx) or bulk_insert's multi-row INSERTs, which a server counts
// by statement while an event is a batch of them.
func (g *generator) EventKind() workload.EventKind {
	switch g.kind {
	case bulkInsert:
		return ""
	case insert, randomPoints, randomRanges:
		return workload.EventStatement
	}
	p := planFor(g.kind, &g.opts)
	if p.trx {
		return workload.EventTransaction
	}
	if e := p.statementsPerEvent(); e.Select+e.Update+e.Insert+e.Delete == 1 {
		return workload.EventStatement
	}
	return ""
}

// ReadOnly says whether every statement an event sends only reads:
// oltp_point_select, oltp_read_only and the select_random_* scripts, unless
// options add writes to them.
func (g *generator) ReadOnly() bool {
	switch g.kind {
	case randomPoints, randomRanges:
		return true
	case insert, bulkInsert:
		return false
	}
	e := planFor(g.kind, &g.opts).statementsPerEvent()
	return e.Select > 0 && e.Update+e.Insert+e.Delete == 0
}

// Options returns the options as parsed.
func (g *generator) Options() Options { return g.opts }

// Flags returns the workload's flag set, bound to its options. It is built
// once, so repeated calls return the same set.
func (g *generator) Flags() *pflag.FlagSet { return g.fs }

func (g *generator) buildFlags() *pflag.FlagSet {
	fs := sbflag.NewFlagSet(g.meta.Name)
	o := &g.opts
	d := DefaultOptions()
	fs.IntVar(&o.TableSize, "table-size", d.TableSize, "Number of rows per table")
	fs.IntVar(&o.RangeSize, "range-size", d.RangeSize, "Range size for range SELECT queries")
	fs.IntVar(&o.Tables, "tables", d.Tables, "Number of tables")
	fs.IntVar(&o.PointSelects, "point-selects", d.PointSelects, "Number of point SELECT queries per transaction")
	fs.IntVar(&o.SimpleRanges, "simple-ranges", d.SimpleRanges, "Number of simple range SELECT queries per transaction")
	fs.IntVar(&o.SumRanges, "sum-ranges", d.SumRanges, "Number of SELECT SUM() queries per transaction")
	fs.IntVar(&o.OrderRanges, "order-ranges", d.OrderRanges, "Number of SELECT ORDER BY queries per transaction")
	fs.IntVar(&o.DistinctRanges, "distinct-ranges", d.DistinctRanges, "Number of SELECT DISTINCT queries per transaction")
	fs.IntVar(&o.IndexUpdates, "index-updates", d.IndexUpdates, "Number of UPDATE index queries per transaction")
	fs.IntVar(&o.NonIndexUpdates, "non-index-updates", d.NonIndexUpdates, "Number of UPDATE non-index queries per transaction")
	fs.IntVar(&o.DeleteInserts, "delete-inserts", d.DeleteInserts, "Number of DELETE/INSERT combinations per transaction")
	sbflag.BoolVar(fs, &o.RangeSelects, "range-selects", d.RangeSelects, "Enable/disable all range SELECT queries")
	sbflag.BoolVar(fs, &o.AutoInc, "auto-inc", d.AutoInc, "Use AUTO_INCREMENT column as Primary Key (for MySQL), or its alternatives in other DBMS. When disabled, use client-generated IDs")
	sbflag.BoolVar(fs, &o.SkipTrx, "skip-trx", d.SkipTrx, "Don't start explicit transactions and execute all queries in the AUTOCOMMIT mode")
	sbflag.BoolVar(fs, &o.Secondary, "secondary", d.Secondary, "Use a secondary index in place of the PRIMARY KEY")
	sbflag.BoolVar(fs, &o.CreateSecondary, "create-secondary", d.CreateSecondary, "Create a secondary index in addition to the PRIMARY KEY")
	fs.StringVar(&o.StorageEngine, "mysql-storage-engine", d.StorageEngine, "Storage engine, if MySQL is used")
	if g.kind != bulkInsert { // its tables are sysbench's, with no options
		fs.StringVar(&o.CreateTableOptions, "create-table-options", "", "Extra options appended to CREATE TABLE (shakedown extension; not in sysbench 1.0.20)")
	}
	fs.StringVar(&o.PgsqlVariant, "pgsql-variant", "", "Use this PostgreSQL variant when running with the PostgreSQL driver (accepted for compatibility; unused with MySQL)")
	switch g.kind {
	case randomPoints:
		fs.IntVar(&o.RandomPoints, "random-points", d.RandomPoints, "Number of random points in the IN() clause in generated SELECTs")
	case randomRanges:
		fs.IntVar(&o.NumberOfRanges, "number-of-ranges", d.NumberOfRanges, "Number of random BETWEEN ranges per SELECT")
		fs.IntVar(&o.Delta, "delta", d.Delta, "Size of BETWEEN ranges")
	}
	return fs
}

var engineName = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// Validate checks the options once, before anything connects.
func (g *generator) Validate() error {
	if g.kind == bulkInsert {
		return nil
	}
	return g.opts.validate(g.kind)
}

func (o *Options) validate(k kind) error {
	nonNeg := []struct {
		name string
		v    int
	}{
		{"table-size", o.TableSize},
		{"range-size", o.RangeSize},
		{"point-selects", o.PointSelects},
		{"simple-ranges", o.SimpleRanges},
		{"sum-ranges", o.SumRanges},
		{"order-ranges", o.OrderRanges},
		{"distinct-ranges", o.DistinctRanges},
		{"index-updates", o.IndexUpdates},
		{"non-index-updates", o.NonIndexUpdates},
		{"delete-inserts", o.DeleteInserts},
	}
	for _, f := range nonNeg {
		if f.v < 0 {
			return fmt.Errorf("--%s must be >= 0", f.name)
		}
	}
	// Ids are INTEGER (signed 32-bit) in the tables.
	if o.TableSize > 1<<31-1 {
		return fmt.Errorf("--table-size must be <= 2147483647")
	}
	if o.Tables < 1 {
		return fmt.Errorf("--tables must be >= 1")
	}
	if !engineName.MatchString(o.StorageEngine) {
		return fmt.Errorf("--mysql-storage-engine must be a storage engine name such as innodb (got %q)", o.StorageEngine)
	}
	switch k {
	case randomPoints:
		if o.RandomPoints < 1 {
			return fmt.Errorf("--random-points must be >= 1")
		}
	case randomRanges:
		if o.NumberOfRanges < 1 {
			return fmt.Errorf("--number-of-ranges must be >= 1")
		}
		if o.Delta < 0 {
			return fmt.Errorf("--delta must be >= 0")
		}
	}
	return nil
}
