package result

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/shakedown/shakedown/internal/target"
)

// The statuses a run is stored with (the store's RunOK and its kin are
// these).
const (
	StatusOK          = "ok"
	StatusFailed      = "failed"
	StatusInterrupted = "interrupted"
)

// StatusOf is the one rule for the status a run is stored with, whoever
// ran it: run and slap with --store, a sweep's step, a runner of a split
// load, a result file given to report. res is what the run measured (nil
// when nothing), err the error it ended with (nil when it ran its
// course), interrupted whether it was stopped before its end (Ctrl-C, a
// cancelled sweep). The second value is the reason to store beside a
// status other than ok: err, or why a run that ended well failed.
//
//   - Stopped before its end: interrupted. What it measured is kept, and
//     left out of every comparison: it did not get its full time.
//   - Ended with an error: failed. That includes a degraded run (reconnects
//     that failed: the server could not be reached for a while).
//   - Ran its course but lost connections to the server and got them back
//     (statements failed with a lost connection, or threads reconnected):
//     failed too. Its figures are real, and are kept in the result and
//     shown, but they measure the outage as much as the server: a
//     comparison would blame the server for the time its connections were
//     away, and a baseline would learn an outage as what good looks like.
//     A DBA reads such a run as one to do again, which is what failed
//     says everywhere (reports leave failed runs out of every figure, and
//     say why beside them); ok with a note would let its figures into
//     the verdicts.
//   - Ran its course but nothing completed: no transaction (event) and no
//     latency sample (a slap level counts statements, not transactions).
//     Threads stuck on locks, or a server that never answered, end a run
//     that way: failed, never a silent zero (a script would read it as a
//     run that measured, a report as a server that served nothing).
//   - Otherwise ok.
func StatusOf(res *Result, err error, interrupted bool) (string, error) {
	switch {
	case interrupted || res != nil && res.Interrupted:
		return StatusInterrupted, err
	case err != nil:
		return StatusFailed, err
	}
	if lost := res.LostServer(); lost > 0 || res != nil && res.Reconnects > 0 {
		return StatusFailed, fmt.Errorf("the server was lost during the run (%d lost or refused connections, %d reconnects): its figures measure the outage as much as the server, and are left out of comparisons",
			lost, res.Reconnects)
	}
	if res != nil && res.Transactions == 0 && res.Histogram.Count == 0 {
		return StatusFailed, fmt.Errorf("nothing completed: 0 transactions (events) in %.1fs: the run measured nothing (threads waiting on locks the whole run, or a server that did not answer?)", res.TimeS)
	}
	return StatusOK, nil
}

// Status is the status of a result document read back (a file given to
// report, a slap level), by StatusOf: its own error, interruption and
// lost connections say it.
func (r *Result) Status() (string, error) {
	var err error
	if r.Error != "" {
		err = errors.New(r.Error)
	}
	return StatusOf(r, err, false)
}

// LostServer counts the statements of r that failed because their
// connection was lost or could not be opened; 0 for a nil r.
func (r *Result) LostServer() int64 {
	if r == nil {
		return 0
	}
	var n int64
	for code, count := range r.Errors.ByCode {
		c, err := strconv.ParseUint(code, 10, 16)
		if err == nil && (target.ConnLostCode(uint16(c)) || c == target.CRConnectionError) {
			n += count
		}
	}
	return n
}
