package segment

import (
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/usage"
)

func TestFlags(t *testing.T) {
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
		{"sequence alone", []string{"--segment-sequence=0,1/2,1"}, "", "name this runner's segment too"},
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
			var f Flags
			fs := sbflag.NewFlagSet("test")
			f.Bind(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			sp, err := f.Resolve(getenv, now)
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
			if sp.On != (len(tc.args) > 0) {
				t.Errorf("On: got %v, want %v", sp.On, len(tc.args) > 0)
			}
		})
	}
}

func TestSplitShare(t *testing.T) {
	for _, tc := range []struct {
		seg     string
		v       int64
		want    int64
		wantErr string
	}{
		{"1/4", 10, 3, ""},
		{"1/4", 2, 1, ""}, // round(0.5) - 0
		{"2/4", 2, 0, "--threads 2 split 4 ways leaves segment 2/4 none"},
		{"1/4", 0, 0, ""},
	} {
		g, err := Parse(tc.seg)
		if err != nil {
			t.Fatal(err)
		}
		sp := Split{Segment: g, Sequence: Around(g), On: true}
		got, err := sp.Share("--threads", tc.v)
		switch {
		case tc.wantErr != "" && (err == nil || !usage.Is(err) || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s of %d: got %v, want a usage error containing %q", tc.seg, tc.v, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || got != tc.want):
			t.Errorf("%s of %d: got %d, %v, want %d", tc.seg, tc.v, got, err, tc.want)
		}
	}
}
