package result

import (
	"errors"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/histogram"
)

// TestStatusOf: the one rule, case by case. A run that ran its course
// but lost connections (by any lost-connection code, or by reconnecting)
// is failed with the reason, as a sweep always stored it; so is one in
// which nothing completed.
func TestStatusOf(t *testing.T) {
	ran := func(byCode map[string]int64, reconnects int64) *Result {
		return &Result{QPS: 100, Transactions: 500, Reconnects: reconnects, Errors: Errors{ByCode: byCode}}
	}
	boom := errors.New("run stopped: boom")
	tests := []struct {
		name        string
		res         *Result
		err         error
		interrupted bool
		status      string
		why         string // in the reason; "" for none
	}{
		{"ran its course", ran(map[string]int64{}, 0), nil, false, StatusOK, ""},
		{"deadlocks passed over are no loss", ran(map[string]int64{"1213": 4}, 0), nil, false, StatusOK, ""},
		{"lost connections, reconnected", ran(map[string]int64{"2013": 2}, 2), nil, false, StatusFailed, "the server was lost during the run (2 lost or refused connections, 2 reconnects)"},
		{"killed mid-statement (MariaDB)", ran(map[string]int64{"1927": 1}, 1), nil, false, StatusFailed, "(1 lost or refused connections, 1 reconnects)"},
		{"refused connections", ran(map[string]int64{"2002": 3}, 0), nil, false, StatusFailed, "3 lost or refused"},
		{"reconnected without a counted error", ran(map[string]int64{}, 1), nil, false, StatusFailed, "0 lost or refused connections, 1 reconnects"},
		{"ended with an error", ran(map[string]int64{}, 0), boom, false, StatusFailed, "boom"},
		{"an error and lost connections: the error", ran(map[string]int64{"2013": 1}, 1), boom, false, StatusFailed, "boom"},
		{"interrupted", ran(map[string]int64{"2013": 1}, 1), boom, true, StatusInterrupted, "boom"},
		{"a result that says it was interrupted", &Result{Interrupted: true}, nil, false, StatusInterrupted, ""},
		{"nothing completed", &Result{TimeS: 8, Errors: Errors{ByCode: map[string]int64{}}}, nil, false, StatusFailed, "nothing completed: 0 transactions (events) in 8.0s"},
		{"begun, never committed", &Result{TimeS: 3, Queries: Queries{Other: 2, Total: 2}}, nil, false, StatusFailed, "nothing completed"},
		{"statements, no transactions (a slap level)", &Result{QPS: 50, Histogram: histogram.Snapshot{Count: 50}}, nil, false, StatusOK, ""},
		{"nothing completed, interrupted", &Result{Interrupted: true}, nil, false, StatusInterrupted, ""},
		{"nothing measured, an error", nil, boom, false, StatusFailed, "boom"},
		{"nothing measured, stopped", nil, nil, true, StatusInterrupted, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, why := StatusOf(tc.res, tc.err, tc.interrupted)
			if status != tc.status {
				t.Errorf("status: got %q, want %q", status, tc.status)
			}
			switch {
			case tc.why == "" && why != nil:
				t.Errorf("reason: got %q, want none", why)
			case tc.why != "" && (why == nil || !strings.Contains(why.Error(), tc.why)):
				t.Errorf("reason: got %v, want it to say %q", why, tc.why)
			}
		})
	}
}

// TestResultStatus: a result document read back (a file, a slap level)
// gets its status by the same rule, from its own error and counts.
func TestResultStatus(t *testing.T) {
	tests := []struct {
		name   string
		res    Result
		status string
	}{
		{"ok", Result{Transactions: 1, Errors: Errors{ByCode: map[string]int64{}}}, StatusOK},
		{"nothing completed", Result{Errors: Errors{ByCode: map[string]int64{}}}, StatusFailed},
		{"its error", Result{Error: "run stopped: boom"}, StatusFailed},
		{"interrupted", Result{Interrupted: true, Error: "x"}, StatusInterrupted},
		{"lost connections", Result{Reconnects: 1, Errors: Errors{ByCode: map[string]int64{"2006": 1}}}, StatusFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := tc.res.Status(); got != tc.status {
				t.Errorf("got %q, want %q", got, tc.status)
			}
		})
	}
}
