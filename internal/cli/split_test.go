package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/bench"
	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/segment"
	"github.com/shakedown/shakedown/internal/sweep"
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

// TestSplitSweepRefused checks the plans a split sweep refuses before
// connecting to anything (the target here is a port nothing listens on).
func TestSplitSweepRefused(t *testing.T) {
	start := time.Now().Add(time.Minute).UTC().Format(time.RFC3339)
	base := `targets:
  - name: a
    url: mysql://shakedown@127.0.0.1:1/sbtest
    role: control
workloads: [oltp_point_select]
threads: [2]
`
	for _, tc := range []struct {
		name string
		plan string
		args []string
		want string
	}{
		{"no start", base + "time: 1\n", []string{"--segment=1/2"}, "needs --start-at"},
		{"auto repeats", base + "time: 1\nrepeats: auto\nmax_repeats: 5\n", []string{"--segment=1/2", "--start-at=" + start}, "repeats: auto"},
		{"no time", base + "time: 0\nevents: 100\n", []string{"--segment=1/2", "--start-at=" + start}, "needs a time per step"},
		{"resume", base + "time: 1\n", []string{"--segment=1/2", "--start-at=" + start, "--resume=latest"}, "leave out --segment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writePlan(t, tc.plan)
			code, _, errOut := runCLI(t.Context(), append([]string{"sweep", path, "--store", filepath.Join(t.TempDir(), "s.db")}, tc.args...)...)
			if code != ExitUsage || !strings.Contains(errOut, tc.want) {
				t.Errorf("got exit %d, %q: want %d and %q", code, errOut, ExitUsage, tc.want)
			}
		})
	}
}

// TestEstimate: a split sweep's estimate follows its timetable, margins
// included; one process's adds up the steps.
func TestEstimate(t *testing.T) {
	src := []byte(`name: e
targets:
  - {name: a, url: "mysql://u@127.0.0.1:3306/db", role: control}
workloads: [oltp_point_select]
threads: [2, 4]
time: 1
prepare: true
`)
	p, err := plan.Parse("e.yaml", src, func(string) string { return "" }, bench.Grammar{})
	if err != nil {
		t.Fatal(err)
	}
	split := segment.Split{Segment: segment.Whole, Sequence: segment.Equal(2), StartAt: time.Now(), On: true}
	for _, tc := range []struct {
		name string
		sp   segment.Split
		want string
	}{
		{"alone", segment.Alone, "0m02s"},
		// Per step: connect 5 s, 1 s of load; 2 s between the steps and
		// after the last; 5 s for the data-ready mark.
		{"split", split, "0m21s from --start-at plus preparing the data"},
	} {
		if got := sweep.Estimate(p, tc.sp); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
