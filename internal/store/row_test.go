package store

import (
	"errors"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/result"
)

// TestNewRun: run --store and slap --store build their rows here; the
// reason is kept beside a failed status only.
func TestNewRun(t *testing.T) {
	why := errors.New("server lost")
	cases := []struct {
		name, status, wantErr string
		why                   error
	}{
		{"ok", RunOK, "", nil},
		{"failed keeps why", RunFailed, "server lost", why},
		{"interrupted says it by status", RunInterrupted, "", why},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := &result.Result{Target: result.Target{Name: "a"}, Degraded: true}
			run := NewRun(res, tc.status, tc.why, "oltp_read_only", 4, "run oltp_read_only", time.Unix(0, 0), 1.5)
			if run.Status != tc.status || run.Error != tc.wantErr {
				t.Errorf("got status %q error %q, want %q %q", run.Status, run.Error, tc.status, tc.wantErr)
			}
			if run.Target != "a" || run.Threads != 4 || !run.Degraded || run.WallS != 1.5 || run.Result != res {
				t.Errorf("got %+v, want target a, 4 threads, degraded, 1.5 s and the result", run)
			}
		})
	}
}
