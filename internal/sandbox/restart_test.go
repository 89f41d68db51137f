package sandbox_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

// TestRestart restarts a sandbox with a setting that cannot change at
// runtime, then with its own settings again.
func TestRestart(t *testing.T) {
	t.Parallel()
	inst := sandboxtest.Start(t, "back_log=500")
	ctx := t.Context()
	db := open(t, inst.URL())

	set := append(append([]string(nil), inst.Settings...), "back_log=700")
	again, err := sandbox.Restart(ctx, inst.Home, inst.Name, set)
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	if got := queryString(t, db, "SELECT @@back_log"); got != "700" {
		t.Errorf("back_log after a restart with 700: got %s, want 700", got)
	}
	if again.Port != inst.Port || again.PID == inst.PID || !slices.Contains(again.Settings, "back_log=700") {
		t.Errorf("got port %d pid %d settings %v, want port %d, a new pid and back_log=700", again.Port, again.PID, again.Settings, inst.Port)
	}
	if got, err := sandbox.Get(inst.Home, inst.Name); err != nil || !got.Running || !slices.Equal(got.Settings, again.Settings) {
		t.Errorf("get: got %+v, %v, want it running with the new settings saved", got, err)
	}

	if _, err := sandbox.Restart(ctx, inst.Home, inst.Name, inst.Settings); err != nil {
		t.Fatalf("restart with the old settings: %v", err)
	}
	if got := queryString(t, db, "SELECT @@back_log"); got != "500" {
		t.Errorf("back_log after restoring: got %s, want 500", got)
	}

	fixed := append(append([]string(nil), inst.Settings...), "innodb_page_size=4k")
	if _, err := sandbox.Restart(ctx, inst.Home, inst.Name, fixed); !errors.Is(err, sandbox.ErrInvalid) || !strings.Contains(err.Error(), "innodb_page_size is fixed") {
		t.Errorf("restart changing the page size: got %v, want ErrInvalid naming innodb_page_size", err)
	}
	bad := append(append([]string(nil), inst.Settings...), "no_such_option=1")
	if _, err := sandbox.Restart(ctx, inst.Home, inst.Name, bad); err == nil || !strings.Contains(err.Error(), "no-such-option") {
		t.Errorf("restart with an unknown option: got %v, want an error quoting the server's log", err)
	}
	if _, err := sandbox.Restart(ctx, inst.Home, inst.Name, inst.Settings); err != nil {
		t.Fatalf("restart after a failed one: %v", err)
	}
	if got := queryString(t, db, "SELECT @@back_log"); got != "500" {
		t.Errorf("back_log after recovering: got %s, want 500", got)
	}
}

func TestFixedAtCreation(t *testing.T) {
	for name, want := range map[string]bool{"innodb_page_size": true, "lower_case_table_names": true, "innodb_log_file_size": false, "back_log": false} {
		if got := sandbox.FixedAtCreation(name); got != want {
			t.Errorf("FixedAtCreation(%s): got %v, want %v", name, got, want)
		}
	}
}
