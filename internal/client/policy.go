package client

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/clock"
	"github.com/shakedown/shakedown/internal/target"
)

// Policy says what a failed statement or connect means for a client of a
// load: counted and tried again, counted and reconnected, or the end of the
// load. The runner (sysbench's rules) and slap (mysqlslap's) differ only in
// its two switches.
type Policy struct {
	// Ignore lists the error codes that are counted and passed over;
	// IgnoreAll passes over every server error.
	Ignore    map[uint16]bool
	IgnoreAll bool
	// ReconnectLost reconnects after a lost connection whatever its code
	// (a run goes on through a server restart); otherwise a lost
	// connection ends the load unless its code is ignored (mysqlslap).
	ReconnectLost bool
	// RetryConnect tries again every failed connect but those trying
	// cannot help (mysqlslap); otherwise only a lost or refused connection
	// and an ignored code are tried again.
	RetryConnect bool
}

// Action is what a client does after an error.
type Action int

const (
	// Fail ends the load with the error.
	Fail Action = iota
	// Retry counts the error and goes on (the event again, or the next
	// statement).
	Retry
	// Reconnect counts the error, drops the connection and opens another.
	Reconnect
)

// ParseIgnore reads an ignore list as flag gives it: error codes separated
// by commas, "all", or "none" (or nothing).
func ParseIgnore(flag, v string) (Policy, error) {
	var p Policy
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "all":
		p.IgnoreAll = true
		return p, nil
	case "", "none":
		return p, nil
	}
	p.Ignore = map[uint16]bool{}
	for _, part := range strings.Split(v, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(part), 10, 16)
		if err != nil {
			return Policy{}, fmt.Errorf("%s: %q is not an error code; give codes such as %d,%d, all or none", flag, part, target.ERLockDeadlock, target.ERLockWaitTimeout)
		}
		p.Ignore[uint16(n)] = true
	}
	return p, nil
}

// Ignored says whether errors with this code are counted and passed over.
// Code 0 (not a database error) never is.
func (p Policy) Ignored(code uint16) bool {
	return code != 0 && (p.IgnoreAll || p.Ignore[code])
}

// OnStatement says what follows a statement that failed with err on a
// connection that is broken or not.
func (p Policy) OnStatement(err error, broken bool) Action {
	code := target.Code(err)
	switch {
	case errors.Is(err, ErrMissingTables):
		return Fail
	case target.IsConnLost(err):
		if p.ReconnectLost || p.Ignored(code) {
			return Reconnect
		}
		return Fail
	case target.NotReady(err):
		// A cluster node out of the primary component for a moment (a
		// Galera node that lost its peers): counted, and the client
		// goes on through a new connection, which a URL naming several
		// nodes may open on another. The statement did not commit.
		return Reconnect
	case p.Ignored(code) && broken:
		return Reconnect // passed over, but this connection is done
	case p.Ignored(code):
		return Retry
	}
	return Fail
}

// OnConnect says whether a failed connect is tried again (Retry) or ends
// the load (Fail).
func (p Policy) OnConnect(err error) Action {
	code := target.Code(err)
	switch {
	case errors.Is(err, ErrMissingTables), target.Permanent(code):
		return Fail
	case target.IsConnLost(err), target.NotReady(err), p.Ignored(code), p.RetryConnect && code != 0:
		return Retry
	}
	return Fail
}

// ErrMissingTables means the workload's tables are not there.
var ErrMissingTables = errors.New("the workload's tables do not exist: run prepare first")

// ExplainSetup turns the failure of a thread's set-up (preparing its
// statements) into ErrMissingTables when a table is missing.
func ExplainSetup(err error) error {
	if target.Code(err) == target.ERNoSuchTable {
		return fmt.Errorf("%w (%v)", ErrMissingTables, err)
	}
	return err
}

// Backoff says how long to wait between attempts to connect: First, then
// twice as long each time up to Max.
type Backoff struct {
	First, Max time.Duration
	// Attempts bounds the attempts; 0 means no bound.
	Attempts int
	// Within bounds the time spent trying; 0 means no bound.
	Within time.Duration
	// Until, when set, is when trying stops (the end of a timed run): a
	// pause that would end later is cut short, and no attempt is made
	// after it.
	Until time.Time
}

// ErrStopped is returned by Redial when ctx ended or stop said so.
var ErrStopped = errors.New("stopped")

// GaveUpError is a connect that failed for good: the policy said so, or
// the attempts or time of the backoff were used up.
type GaveUpError struct {
	Attempts int
	For      time.Duration
	Err      error // the last attempt's
}

func (e *GaveUpError) Error() string {
	if e.Attempts <= 1 {
		return e.Err.Error()
	}
	return fmt.Sprintf("could not connect in %d attempts over %s: %v", e.Attempts, e.For.Round(time.Millisecond), e.Err)
}

func (e *GaveUpError) Unwrap() error { return e.Err }

// Redial calls dial until it succeeds, ctx ends, stop reports true or b's
// Until passes (ErrStopped), or it gives up (*GaveUpError): the policy calls the error
// final, or b's attempts or time are used up. failed, when set, is told of
// every failed attempt; the pauses are on clk.
func (p Policy) Redial(ctx context.Context, clk clock.Clock, b Backoff, stop func() bool, dial func(context.Context) error, failed func(error)) error {
	start := clk.Now()
	pause := b.First
	for n := 1; ; n++ {
		if ctx.Err() != nil || stop != nil && stop() {
			return ErrStopped
		}
		err := dial(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ErrStopped
		}
		if failed != nil {
			failed(err)
		}
		spent := clk.Now().Sub(start)
		if p.OnConnect(err) == Fail || b.Attempts > 0 && n >= b.Attempts || b.Within > 0 && spent >= b.Within {
			return &GaveUpError{Attempts: n, For: spent, Err: err}
		}
		wait := pause
		if !b.Until.IsZero() {
			wait = min(wait, b.Until.Sub(clk.Now()))
		}
		if !clock.Sleep(ctx, clk, wait) || !b.Until.IsZero() && !clk.Now().Before(b.Until) {
			return ErrStopped
		}
		if pause *= 2; pause > b.Max {
			pause = b.Max
		}
	}
}
