package cli

import (
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/usage"
)

func TestCheckArgs(t *testing.T) {
	start := time.Now().Add(time.Minute).UTC().Format(time.RFC3339)
	env := &Env{Getenv: func(k string) string {
		if k == "JOB_COMPLETION_INDEX" {
			return "0"
		}
		return ""
	}}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"sweep", []string{"sweep", "/etc/shakedown/plan.yaml", "--segment-index-env=JOB_COMPLETION_INDEX", "--segments=3", "--start-at=" + start, "--store=/tmp/s.db"}, "1/3"},
		{"run", []string{"run", "oltp_point_select", "--threads=8", "--segment=2/4", "--start-at=" + start}, "2/4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp, err := CheckArgs(env, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if sp.Label() != tc.want || sp.StartAt.IsZero() || !sp.On {
				t.Errorf("got segment %s starting at %v, want %s and a start time", sp.Label(), sp.StartAt, tc.want)
			}
		})
	}
	for _, bad := range [][]string{
		{"slap", "--concurrency=4"},
		{"sweep", "plan.yaml", "--no-such-flag"},
		{"sweep"},
		{"run", "oltp_point_select", "--threads=2", "--segment=2/4"}, // no thread left for 2/4
	} {
		if _, err := CheckArgs(env, bad); err == nil || !usage.Is(err) {
			t.Errorf("CheckArgs(%q): got %v, want a usage error", bad, err)
		}
	}
}
