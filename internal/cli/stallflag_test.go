package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

// TestStallTakesSeparateValue: --stall takes its triggers after a space,
// as every other option takes its value, in run and in watch; a bare
// --stall before watch's TARGET is the default trigger. Before,
// --stall 'threads_running>5 for 2s' was an unexpected argument.
func TestStallTakesSeparateValue(t *testing.T) {
	url := sandboxtest.URL(t)
	path := filepath.Join(t.TempDir(), "r.json")
	code, out, errOut := runCLI(context.Background(), "run", "ping", "--target", url, "--time", "1", "--stall", "threads_running>5 for 2s", "--json", path)
	if code != ExitOK {
		t.Fatalf("run --stall TRIGGER: exit %d, want 0\n%s\n%s", code, out, errOut)
	}
	if got := readResult(t, path).Options["stall"]; got != "threads_running>5 for 2s" {
		t.Errorf("run --stall TRIGGER: got stall %q, want %q", got, "threads_running>5 for 2s")
	}

	cases := []struct {
		name string
		args []string
		code int
		want string // in standard output or standard error
	}{
		{"a trigger after a space", []string{"watch", "--stall", "threads_running>5 for 2s", "--count", "1", url}, ExitOK, "stall capture: when threads_running>5 for 2s"},
		{"a bad trigger after a space", []string{"watch", "--stall", "threads_running>abc", url}, ExitUsage, `--stall: trigger "threads_running>abc"`},
		{"alone, before the target", []string{"watch", "--count", "1", "--stall", url}, ExitOK, "stall capture: when threads_running>25 for 5s"},
		{"a word after a bare stall", []string{"run", "ping", "--target", url, "--stall", "threads_running"}, ExitUsage,
			`unexpected argument "threads_running" (a trigger after --stall compares a figure: --stall 'threads_running>25 for 5s' or --stall='threads_running>25 for 5s')`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(context.Background(), tc.args...)
			if code != tc.code || !strings.Contains(out+errOut, tc.want) {
				t.Errorf("got exit %d\n%s\n%s\nwant exit %d and %q", code, out, errOut, tc.code, tc.want)
			}
		})
	}
}
