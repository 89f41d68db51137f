package hotrow

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/workload"
)

// TestHotrowCheck: the check, judged as a run judges it, against stock
// figures that agree and that do not, without a server.
func TestHotrowCheck(t *testing.T) {
	for _, tc := range []struct {
		name                                string
		before, after, commits, decs, doubt int64
		lost                                int64
		line                                string
	}{
		{name: "exact", before: 1000, after: 900, commits: 100, decs: 100},
		{name: "merged updates", before: 1000000, after: 1000000 - 7776 + 580, commits: 7776, decs: 7776, lost: 580,
			line: "LOST UPDATES: 580 of 7776 committed transactions"},
		{name: "a change no transaction made", before: 1000, after: 897, commits: 100, decs: 100, lost: -3,
			line: "LOST UPDATES: -3 of 100 committed transactions"},
		{name: "in doubt and committed", before: 1000, after: 898, commits: 100, decs: 100, doubt: 3},
		{name: "in doubt and rolled back", before: 1000, after: 900, commits: 100, decs: 100, doubt: 3},
		{name: "more than in doubt", before: 1000, after: 895, commits: 100, decs: 100, doubt: 3, lost: -2,
			line: "LOST UPDATES: -2 of 100"},
		{name: "at the floor", before: 5, after: 1, commits: 10, decs: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGenerator(workload.Meta{Name: "hotrow"})
			g.before, g.ready = tc.before, true
			g.tally.commits.Store(tc.commits)
			g.tally.decrements.Store(tc.decs)
			g.tally.inDoubt.Store(tc.doubt)
			r := g.check(tc.after)
			c := result.NewDataCheck(r.What, r.Before, r.After, r.Committed, r.Expected, r.InDoubt, r.Step)
			if c.LostUpdates != tc.lost || c.OK() != (tc.lost == 0) {
				t.Errorf("got %d lost updates (ok %v), want %d", c.LostUpdates, c.OK(), tc.lost)
			}
			if got := c.Finding(); tc.line == "" && got != "" || !strings.HasPrefix(got, tc.line) {
				t.Errorf("got finding %q, want one starting %q", got, tc.line)
			}
		})
	}
}

// TestHotrowTally: a COMMIT the server refused rolled back; one that got
// no answer may have committed.
func TestHotrowTally(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		doubt int64
	}{
		{"serialization failure", &mysql.MySQLError{Number: target.ERLockDeadlock, Message: "serialization failure"}, 0},
		{"connection killed", &mysql.MySQLError{Number: target.ERConnectionKilled}, 1},
		{"connection lost", errors.New("read tcp: connection reset by peer"), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tl tally
			tl.failed(tc.err, 1)
			if got := tl.inDoubt.Load(); got != tc.doubt {
				t.Errorf("got %d in doubt, want %d", got, tc.doubt)
			}
		})
	}
}
