package replay

import (
	"hash/maphash"
	"time"

	"github.com/shakedown/shakedown/internal/fingerprint"
	"github.com/shakedown/shakedown/internal/wire"
)

// The comparison's owner, for the other tools that compare a control's
// results with a candidate's (mirror): one reader of a reply into what is
// compared, one Compare, one latency verdict, so that order, types,
// floats, errors and warnings follow the same rules everywhere.

// Hasher reads one statement's reply (a wire.RowReader) into a Result:
// its columns, row count, checksums and its first rows. A Hasher is
// reused statement after statement by one goroutine.
type Hasher struct{ h rowHasher }

// Start begins a statement whose result sets follow. seed must be the
// same for the results that will be compared with each other; db is the
// session's default database (SHOW TABLES names a column after it).
func (h *Hasher) Start(seed maphash.Seed, db string, info *fingerprint.Info) {
	h.h.start(seed, db, info.OrderKeys)
}

// Columns takes a result set's columns.
func (h *Hasher) Columns(cols []wire.Column) { h.h.Columns(cols) }

// Row takes one row as text.
func (h *Hasher) Row(values [][]byte) { h.h.Row(values) }

// Finish ends the statement: wr and err are what the reply ended with
// (a *mysql.MySQLError for an ERR reply), broken whether the connection
// was lost with it, dur its latency. The Result is its own: it may be
// kept, or compared on another goroutine, while the Hasher reads on.
func (h *Hasher) Finish(wr wire.Result, err error, broken bool, dur time.Duration) Result {
	return Result{h.h.finish(wr, err, broken, dur, false)}
}

// FinishLent is Finish for a Result compared before the Hasher's next
// Start, which saves copying its first rows: until then they are the
// Hasher's, and after it they are another statement's.
func (h *Hasher) FinishLent(wr wire.Result, err error, broken bool, dur time.Duration) Result {
	return Result{h.h.finish(wr, err, broken, dur, true)}
}

// Result is one statement's result on one target, as compared.
type Result struct{ r result }

// Err is the statement's error number and message: 0 when it succeeded,
// -1 for a lost connection or another failure than the server's error.
func (r *Result) Err() (code int, msg string) { return r.r.errCode, r.r.errMsg }

// Lost reports whether the connection broke during the statement.
func (r *Result) Lost() bool { return r.r.lost }

// Duration is the statement's latency.
func (r *Result) Duration() time.Duration { return r.r.dur }

// Rows is the number of rows returned.
func (r *Result) Rows() int64 { return r.r.rows }

// Sample is the first rows returned, as text (at most 5, values cut at
// 64 bytes).
func (r *Result) Sample() [][]string { return r.r.kept.sample() }

// FirstDiff is where the candidate's rows first part from the control's,
// nil where their rows do not differ (or either failed); see
// FirstDifference. It is meant for a Comparison that is Different, and
// costs a pass over the rows each result kept.
func FirstDiff(control, candidate *Result, info *fingerprint.Info) *FirstDifference {
	return firstDifference(&control.r, &candidate.r, info)
}

// Comparison is how a candidate's Result compares with the control's.
type Comparison struct {
	Outcome Outcome
	// Kind says what differed ("rows", "error on the candidate only
	// (1146)", ...); "" when nothing did.
	Kind string
	// NewErr is set when the candidate failed where the control did not.
	NewErr bool
}

// Compare compares a candidate's result with the control's by replay's
// rules (info says whether the statement orders its rows, cuts them with
// LIMIT, or cannot be expected to repeat).
func Compare(control, candidate *Result, info *fingerprint.Info) Comparison {
	c := compare(&control.r, &candidate.r, info)
	return Comparison{Outcome: c.outcome, Kind: c.kind, NewErr: c.newErr}
}
