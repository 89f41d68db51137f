package cli

import (
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/schedule"
	"github.com/shakedown/shakedown/internal/segment"
)

// splitFlags are the options that make this process one runner of a load
// split over many: which segment it drives and when it starts.
type splitFlags struct {
	segment  string
	sequence string
	segments int
	indexEnv string
	startAt  string
}

func (f *splitFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&f.segment, "segment", "", "drive one segment of the load: I/N (the I-th of N equal parts, from 1) or FROM:TO (e.g. 1/4:1/2); threads, --rate and --events are shared out")
	fs.StringVar(&f.sequence, "segment-sequence", "", "every runner's segment boundaries from 0 to 1, e.g. 0,1/4,1/2,1 (default: N equal parts)")
	fs.IntVar(&f.segments, "segments", 0, "with --segment-index-env: the number of equal segments (runners)")
	fs.StringVar(&f.indexEnv, "segment-index-env", "", "take the segment from this environment variable's 0-based index, e.g. JOB_COMPLETION_INDEX in a Kubernetes Indexed Job")
	fs.StringVar(&f.startAt, "start-at", "", "start at this RFC 3339 time (e.g. 2026-03-01T12:00:00Z), so that every runner starts together")
}

// Split is what the split options resolve to.
type Split struct {
	Segment  segment.Segment
	Sequence segment.Sequence // every runner's segments, this one's among them
	StartAt  time.Time        // zero: start now
}

// resolve checks the options together and works out the segment. getenv
// reads --segment-index-env's variable; now judges --start-at.
func (f *splitFlags) resolve(getenv func(string) string, now time.Time) (Split, error) {
	sp := Split{Segment: segment.Whole, Sequence: segment.Equal(1)}
	if f.sequence != "" {
		q, err := segment.ParseSequence(f.sequence)
		if err != nil {
			return Split{}, err
		}
		sp.Sequence = q
	}
	switch {
	case f.segment != "" && f.indexEnv != "":
		return Split{}, usagef("--segment and --segment-index-env both name a segment: give one")
	case f.segments != 0 && f.indexEnv == "":
		return Split{}, usagef("--segments %d needs --segment-index-env (or write --segment I/%d)", f.segments, f.segments)
	case f.segment != "":
		s, err := segment.Parse(f.segment)
		if err != nil {
			return Split{}, err
		}
		sp.Segment = s
		if f.sequence == "" {
			sp.Sequence = segment.Around(s)
		} else if _, err := sp.Sequence.Index(s); err != nil {
			return Split{}, err
		}
	case f.indexEnv != "":
		if f.segments != 0 {
			if f.segments < 1 {
				return Split{}, usagef("--segments must be >= 1 (got %d)", f.segments)
			}
			q := segment.Equal(int64(f.segments))
			if f.sequence != "" && q.String() != sp.Sequence.String() {
				return Split{}, usagef("--segments %d and --segment-sequence %s disagree: give one", f.segments, sp.Sequence)
			}
			sp.Sequence = q
		} else if f.sequence == "" {
			return Split{}, usagef("--segment-index-env %s needs --segments N or --segment-sequence, to know how many runners there are", f.indexEnv)
		}
		v := strings.TrimSpace(getenv(f.indexEnv))
		if v == "" {
			return Split{}, usagef("--segment-index-env %s: the variable is not set (an Indexed Job sets JOB_COMPLETION_INDEX in its pods)", f.indexEnv)
		}
		k, err := strconv.Atoi(v)
		if err != nil {
			return Split{}, usagef("--segment-index-env %s: %q is not an index (0, 1, 2...)", f.indexEnv, v)
		}
		if sp.Segment, err = sp.Sequence.At(k); err != nil {
			return Split{}, usagef("--segment-index-env %s=%d: %v", f.indexEnv, k, err)
		}
	}
	if f.startAt != "" {
		t, err := schedule.ParseStartAt(f.startAt, now)
		if err != nil {
			return Split{}, err
		}
		sp.StartAt = t
	}
	return sp, nil
}

// CheckArgs parses a runner's command line the way its command will,
// reading no file and connecting to nothing, and resolves its split
// options with env.Getenv. Deployment manifests are checked with it.
// Only sweep is a runner's command for now.
func CheckArgs(env *Env, args []string) (Split, error) {
	if len(args) == 0 || args[0] != "sweep" {
		return Split{}, usagef("a runner's command line starts with sweep (got %q)", strings.Join(args, " "))
	}
	sc := &sweepCmd{}
	fs := sc.flags(env)
	var sf splitFlags
	sf.bind(fs)
	if err := fs.Parse(args[1:]); err != nil {
		return Split{}, usagef("sweep: %v (see shakedown sweep --help)", err)
	}
	if fs.NArg() != 1 {
		return Split{}, usagef("sweep: name one plan file, e.g. shakedown sweep plan.yaml (see shakedown sweep --help)")
	}
	return sf.resolve(env.Getenv, time.Now())
}

// Label names the runner's segment: I/N for equal parts, else FROM:TO.
func (s Split) Label() string { return s.Sequence.Label(s.Segment) }
