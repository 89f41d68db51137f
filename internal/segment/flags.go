package segment

import (
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/usage"
)

// Flags are the options that make a process one runner of a load split
// over many: which segment it drives and when it starts. run, slap and
// sweep bind them once, each in its own flag set.
type Flags struct {
	Segment  string
	Sequence string
	Segments int
	IndexEnv string
	StartAt  string
}

// Bind adds the options to fs.
func (f *Flags) Bind(fs *pflag.FlagSet) {
	fs.StringVar(&f.Segment, "segment", "", "drive one segment of the load: I/N (the I-th of N equal parts, from 1) or FROM:TO (e.g. 1/4:1/2); threads, --rate and --events are shared out")
	fs.StringVar(&f.Sequence, "segment-sequence", "", "every runner's segment boundaries from 0 to 1, e.g. 0,1/4,1/2,1 (default: N equal parts)")
	fs.IntVar(&f.Segments, "segments", 0, "with --segment-index-env: the number of equal segments (runners)")
	fs.StringVar(&f.IndexEnv, "segment-index-env", "", "take the segment from this environment variable's 0-based index, e.g. JOB_COMPLETION_INDEX in a Kubernetes Indexed Job")
	fs.StringVar(&f.StartAt, "start-at", "", "start at this RFC 3339 time (e.g. 2026-03-01T12:00:00Z), so that every runner starts together")
}

// Given reports whether any option names a segment: the process is then a
// runner of a split load, even of a split into one.
func (f *Flags) Given() bool {
	return f.Segment != "" || f.IndexEnv != "" || f.Sequence != "" || f.Segments != 0
}

// Split is what the split options resolve to.
type Split struct {
	Segment  Segment
	Sequence Sequence  // every runner's segments, this one's among them
	StartAt  time.Time // zero: start now
	// On is set when the options named a segment: the process is one
	// runner of a split load, whose result is merged with the others'.
	On bool
}

// Alone is the split of a process with the whole load.
var Alone = Split{Segment: Whole, Sequence: Equal(1)}

// Resolve checks the options together and works out the segment. getenv
// reads --segment-index-env's variable; now judges --start-at.
func (f *Flags) Resolve(getenv func(string) string, now time.Time) (Split, error) {
	sp := Alone
	sp.On = f.Given()
	if f.Sequence != "" {
		q, err := ParseSequence(f.Sequence)
		if err != nil {
			return Split{}, err
		}
		sp.Sequence = q
	}
	switch {
	case f.Segment != "" && f.IndexEnv != "":
		return Split{}, usage.Errorf("--segment and --segment-index-env both name a segment: give one")
	case f.Segments != 0 && f.IndexEnv == "":
		return Split{}, usage.Errorf("--segments %d needs --segment-index-env (or write --segment I/%d)", f.Segments, f.Segments)
	case f.Segment != "":
		s, err := Parse(f.Segment)
		if err != nil {
			return Split{}, err
		}
		sp.Segment = s
		if f.Sequence == "" {
			sp.Sequence = Around(s)
		} else if _, err := sp.Sequence.Index(s); err != nil {
			return Split{}, err
		}
	case f.IndexEnv != "":
		if f.Segments != 0 {
			if f.Segments < 1 {
				return Split{}, usage.Errorf("--segments must be >= 1 (got %d)", f.Segments)
			}
			q := Equal(int64(f.Segments))
			if f.Sequence != "" && q.String() != sp.Sequence.String() {
				return Split{}, usage.Errorf("--segments %d and --segment-sequence %s disagree: give one", f.Segments, sp.Sequence)
			}
			sp.Sequence = q
		} else if f.Sequence == "" {
			return Split{}, usage.Errorf("--segment-index-env %s needs --segments N or --segment-sequence, to know how many runners there are", f.IndexEnv)
		}
		v := ""
		if getenv != nil {
			v = strings.TrimSpace(getenv(f.IndexEnv))
		}
		if v == "" {
			return Split{}, usage.Errorf("--segment-index-env %s: the variable is not set (an Indexed Job sets JOB_COMPLETION_INDEX in its pods)", f.IndexEnv)
		}
		k, err := strconv.Atoi(v)
		if err != nil {
			return Split{}, usage.Errorf("--segment-index-env %s: %q is not an index (0, 1, 2...)", f.IndexEnv, v)
		}
		if sp.Segment, err = sp.Sequence.At(k); err != nil {
			return Split{}, usage.Errorf("--segment-index-env %s=%d: %v", f.IndexEnv, k, err)
		}
	case f.Sequence != "":
		return Split{}, usage.Errorf("--segment-sequence %s: name this runner's segment too, with --segment FROM:TO or --segment-index-env", f.Sequence)
	}
	if f.StartAt != "" {
		t, err := ParseStartAt(f.StartAt, now)
		if err != nil {
			return Split{}, err
		}
		sp.StartAt = t
	}
	return sp, nil
}

// Label names the runner's segment: I/N for equal parts, else FROM:TO.
func (s Split) Label() string { return s.Sequence.Label(s.Segment) }

// Index is the runner's place among the sequence's segments, from 0:
// runner 1 of the split is index 0.
func (s Split) Index() int {
	k, _ := s.Sequence.Index(s.Segment)
	return k
}

// First reports whether the runner drives the first segment: it alone
// prepares and cleans up, and samples the server.
func (s Split) First() bool { return s.Index() == 0 }

// Share is the runner's part of a count, refused when it is none: a
// runner with no thread (or no event) would measure nothing and its
// result would make the merged one look partial. what names the option,
// e.g. "--threads".
func (s Split) Share(what string, v int64) (int64, error) {
	n := s.Segment.Share(v)
	if n == 0 && v > 0 {
		return 0, usage.Errorf("%s %d split %d ways leaves segment %s none (shares go round(v*to) - round(v*from)): give at least one per runner, or fewer runners",
			what, v, s.Sequence.Len(), s.Label())
	}
	return n, nil
}

// FlagIn is the first option of a split load among args (--segment and
// its kin), "" when there is none: for a command that cannot be split, to
// say why.
func FlagIn(args []string) string {
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case !strings.HasPrefix(a, "--"):
		case name == "segment", name == "segments", name == "segment-sequence", name == "segment-index-env", name == "start-at":
			return "--" + name
		}
	}
	return ""
}
