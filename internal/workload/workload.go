// Package workload defines what a load generator is and keeps the registry of
// them by name. A workload describes statements; the runner owns time, rate,
// events, warm-up, intervals and the error policy.
//
// The core interface is Generator. Capabilities are optional and found by type
// assertion: Flagser (own options), Validator (checks options once, before any
// connection), Preparer and Cleaner (create and drop data), DataChecker
// (checks the data before a run), Opser (hands out one Worker per thread),
// RunPreparer (reads values before a run), RunChecker (checks after a run
// that the data changed as the committed events say), StatementNamer
// (reports per statement), PreparedStatementser (says how many server-side
// statements a thread keeps prepared), ServerCounted (what the server counts of its
// statements, for the client vs server cross-check) and EventKinder (what
// one event is as the server counts it).
package workload

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/randgen"
)

// Meta describes a registered workload.
type Meta struct {
	Name        string
	Description string
	// Sysbench is set on sysbench 1.0.20's own workloads, which shakedown
	// reproduces statement for statement; the others are shakedown's.
	Sysbench bool
	// New returns a Generator with every option at its default.
	New func() Generator
}

// Generator is one configured workload.
type Generator interface {
	Meta() Meta
}

// Flagser is a workload with options of its own. The flag set is bound to the
// generator's fields; the caller parses it before calling Validate.
// Option names use '-' (the command line accepts '_' too, as sysbench does).
type Flagser interface {
	Flags() *pflag.FlagSet
}

// Helper is a workload with more to say in "shakedown run NAME --help"
// than its options: the language of its input file, say. Help is shown
// between the usage line and the options.
type Helper interface {
	Help() string
}

// Validator checks the options once, before anything connects. Errors name the
// option and say what is allowed, e.g. "--tables must be >= 1".
type Validator interface {
	Validate() error
}

// Preparer creates the workload's data.
type Preparer interface {
	Prepare(ctx context.Context, env *PrepareEnv) error
}

// IncompleteError is the error of a prepare that stopped part way: Tables
// says, one by one, what is missing ("sbtest4 holds 10478 of 20000 rows").
type IncompleteError struct {
	Err    error
	Tables []string
}

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("%v; incomplete: %s: run cleanup, then prepare again", e.Err, strings.Join(e.Tables, ", "))
}

func (e *IncompleteError) Unwrap() error { return e.Err }

// Tabler names the tables a workload's prepare creates and its cleanup
// drops, so that a sweep running several workloads on one database can tell
// whose data can stay side by side and whose collide. threads is prepare's
// --threads (bulk_insert makes a table per thread). known is false when the
// workload cannot tell (a script of the user's); no names with known true
// means its prepare makes nothing.
type Tabler interface {
	Tables(threads int) (names []string, known bool)
}

// DataChecker checks cheaply, before a run starts, that the data the run
// will use is there and roughly as large as the options say; an error
// wraps ErrNotPrepared and says what is missing. env.DB is the run's first
// connection; it must not write.
type DataChecker interface {
	CheckData(ctx context.Context, env *PrepareEnv) error
}

// ErrNotPrepared means the data a run needs is missing or incomplete.
var ErrNotPrepared = errors.New("run prepare first")

// Cleaner drops the workload's data.
type Cleaner interface {
	Cleanup(ctx context.Context, env *PrepareEnv) error
}

// RunPreparer reads what a run needs from the server once, before the
// threads connect (the values of a column, say). env.DB is the run's
// first connection; it must not write.
type RunPreparer interface {
	PrepareRun(ctx context.Context, env *PrepareEnv) error
}

// RunChecker is a workload whose events change the data by an amount it
// can tell, so that a run can check afterwards that the server kept every
// change it acknowledged: a server that merges concurrent updates of one
// row loses some, and looks faster for it. BeforeRun reads the data once,
// before the threads connect, on the run's first connection (env.DB);
// CheckRun reads it again once every thread has stopped, on a connection
// of its own, and says what it read and what the events that committed
// should have made of it; the caller judges (result.NewDataCheck).
// Neither writes. A run whose check finds a difference fails. The check
// assumes the run is the only writer: a split load, whose runners all
// write, is not checked.
type RunChecker interface {
	BeforeRun(ctx context.Context, env *PrepareEnv) error
	CheckRun(ctx context.Context, env *PrepareEnv) (RunCheck, error)
}

// RunCheck is what a RunChecker read after a run, beside what the run's
// events say they did.
type RunCheck struct {
	// What names what was read, for people.
	What string
	// Before and After are its values before and after the run.
	Before, After int64
	// Committed counts the events that committed; Expected is the change
	// they made in all.
	Committed, Expected int64
	// InDoubt counts the events whose commit got no answer (a lost
	// connection): each may have changed the value by Step, or not at all.
	InDoubt, Step int64
}

// PreparedStatementser says how many server-side prepared statements one
// thread of a run keeps open when prepared statements are on, so that a
// run the server's max_prepared_stmt_count cannot hold is stopped before it
// starts. A workload without it is not checked.
type PreparedStatementser interface {
	PreparedStatements() int
}

// Opser hands out the per-thread workers of a run. NewWorker is called once
// per thread, and again after a lost connection was re-established, so it must
// (re)prepare whatever it needs on env.Conn. It is called concurrently for
// different threads.
type Opser interface {
	NewWorker(ctx context.Context, env *WorkerEnv) (Worker, error)
}

// Worker runs events on one connection. It is used by one goroutine only.
type Worker interface {
	// Event runs one event (a transaction for the OLTP workloads). An error
	// from the server is returned as is, so the runner can classify it.
	Event(ctx context.Context) error
}

// ServerCounted is a workload whose statements the server does not count
// one for one in its Questions counter, which the client vs server
// cross-check compares with by default. ServerCounter names the global
// status counter that does count what the workload sends (COM_PING goes to
// Com_admin_commands, not Questions), or returns "" when no counter
// matches and the cross-check does not apply.
type ServerCounted interface {
	ServerCounter() string
}

// EventKind is what one event of a workload is, as a server counts it.
type EventKind string

const (
	// EventTransaction is one transaction, BEGIN to COMMIT: a server's
	// transactions a second (watch's tps) are events a second.
	EventTransaction EventKind = "transaction"
	// EventStatement is one statement: a server's statements a second
	// (watch's qps) are events a second.
	EventStatement EventKind = "statement"
)

// EventKinder says what one event of the workload is, so that a rate a
// server recorded (a production peak) can be set against a rate of its
// events. It returns "" when an event is neither one transaction nor one
// statement (several statements outside a transaction, say); a workload
// without it is not known either.
type EventKinder interface {
	EventKind() EventKind
}

// ReadOnlyer says whether no event of the workload changes data, so that
// the client can drive it as the server serves reads best (client.IOChoice.ForRun).
// A workload without it is taken to write.
type ReadOnlyer interface {
	ReadOnly() bool
}

// Finisher is a Worker that has something to do once its thread ends
// normally, such as flushing a pending multi-row INSERT.
type Finisher interface {
	Finish(ctx context.Context) error
}

// PrepareEnv is what prepare and cleanup get.
type PrepareEnv struct {
	// DB is a pool on the target's first endpoint with the database selected.
	// Its size allows Threads connections.
	DB *sql.DB
	// Threads is --threads: how many connections prepare may use at once.
	Threads int
	// Rand are the random-number options (--rand-type and friends).
	Rand randgen.Config
	// Out receives progress lines meant for the user.
	Out io.Writer
}

// WorkerEnv is what one thread's worker gets.
type WorkerEnv struct {
	// ID is the thread number, from 0 to Threads-1.
	ID      int
	Threads int
	Conn    Conn
	// Rand is this thread's generator; not safe for use by other threads.
	Rand *randgen.Rand
	// Dial opens another connection like Conn, for a workload whose event
	// is connecting (connect). The caller closes it. Its connect time is
	// counted in the run's connect figures. Nil outside a run.
	Dial func(ctx context.Context) (Conn, error)
	// Counts are the thread's statement counters, for a statement that
	// goes outside Conn's methods (the COM_QUIT of a Close that the
	// workload counts as the server does). Nil outside a run.
	Counts *Counts
	// Stmts records per-statement figures; set when the generator is a
	// StatementNamer, nil otherwise (its methods then do nothing).
	Stmts *StmtRecorder
}

var (
	registryMu sync.RWMutex
	registry   = map[string]Meta{}
)

// Register adds a workload to the registry. It panics on a duplicate name,
// which is a programming error.
func Register(m Meta) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[m.Name]; dup {
		panic("workload: duplicate registration of " + m.Name)
	}
	registry[m.Name] = m
}

// Lookup returns the workload registered under name.
func Lookup(name string) (Meta, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	m, ok := registry[name]
	return m, ok
}

// Names returns every registered workload name, sorted.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
