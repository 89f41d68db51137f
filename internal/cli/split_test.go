package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/usage"
)

func TestSplitFlags(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	env := map[string]string{"JOB_COMPLETION_INDEX": "2", "BAD_INDEX": "two"}
	getenv := func(k string) string { return env[k] }
	for _, tc := range []struct {
		name    string
		args    []string
		want    string // segment label, then the sequence
		wantErr string
	}{
		{"alone", nil, "1/1 0,1", ""},
		{"i of n", []string{"--segment=2/4"}, "2/4 0,1/4,1/2,3/4,1", ""},
		{"from to", []string{"--segment=1/3:1"}, "1/3:1 0,1/3,1", ""},
		{"from to in a sequence", []string{"--segment=1/3:1/2", "--segment-sequence=0,1/3,1/2,1"}, "1/3:1/2 0,1/3,1/2,1", ""},
		{"index from the environment", []string{"--segment-index-env=JOB_COMPLETION_INDEX", "--segments=4"}, "3/4 0,1/4,1/2,3/4,1", ""},
		{"index into a sequence", []string{"--segment-index-env=JOB_COMPLETION_INDEX", "--segment-sequence=0,1/10,1/5,1"}, "1/5:1 0,1/10,1/5,1", ""},
		{"not in the sequence", []string{"--segment=1/4:3/4", "--segment-sequence=0,1/2,1"}, "", "overlaps 0:1/2 and 1/2:1"},
		{"sequence with a gap", []string{"--segment=1/2", "--segment-sequence=0,1/2"}, "", "gap 1/2:1"},
		{"both segment and index", []string{"--segment=1/2", "--segment-index-env=JOB_COMPLETION_INDEX", "--segments=2"}, "", "give one"},
		{"segments alone", []string{"--segments=4"}, "", "needs --segment-index-env"},
		{"index without a count", []string{"--segment-index-env=JOB_COMPLETION_INDEX"}, "", "needs --segments N or --segment-sequence"},
		{"index unset", []string{"--segment-index-env=NOPE", "--segments=2"}, "", "the variable is not set"},
		{"index not a number", []string{"--segment-index-env=BAD_INDEX", "--segments=2"}, "", `"two" is not an index`},
		{"index past the end", []string{"--segment-index-env=JOB_COMPLETION_INDEX", "--segments=2"}, "", "from 0 to 1"},
		{"counts disagree", []string{"--segment-index-env=JOB_COMPLETION_INDEX", "--segments=3", "--segment-sequence=0,1/2,1"}, "", "disagree"},
		{"bad start", []string{"--start-at=noon"}, "", "--start-at"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f splitFlags
			fs := sbflag.NewFlagSet("test")
			f.bind(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			sp, err := f.resolve(getenv, now)
			if tc.wantErr != "" {
				if err == nil || !usage.Is(err) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want a usage error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := sp.Label() + " " + sp.Sequence.String(); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestCheckArgs(t *testing.T) {
	start := time.Now().Add(time.Minute).UTC().Format(time.RFC3339)
	env := &Env{Getenv: func(k string) string {
		if k == "JOB_COMPLETION_INDEX" {
			return "0"
		}
		return ""
	}}
	sp, err := CheckArgs(env, []string{"sweep", "/etc/shakedown/plan.yaml", "--segment-index-env=JOB_COMPLETION_INDEX", "--segments=3", "--start-at=" + start, "--store=/tmp/s.db"})
	if err != nil {
		t.Fatal(err)
	}
	if sp.Label() != "1/3" || sp.StartAt.IsZero() {
		t.Errorf("got segment %s starting at %v, want 1/3 and a start time", sp.Label(), sp.StartAt)
	}
	for _, bad := range [][]string{
		{"run", "oltp_point_select"},
		{"sweep", "plan.yaml", "--no-such-flag"},
		{"sweep"},
	} {
		if _, err := CheckArgs(env, bad); err == nil || !usage.Is(err) {
			t.Errorf("CheckArgs(%q): got %v, want a usage error", bad, err)
		}
	}
}
