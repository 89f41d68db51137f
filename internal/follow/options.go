package follow

import (
	"errors"
	"io"
	"time"

	"github.com/shakedown/shakedown/internal/usage"
)

// Errors callers test for.
var (
	// ErrPositionGone: the source no longer has the binary log the saved
	// position is in, or it is another server; a new copy is needed.
	ErrPositionGone = errors.New("the saved position cannot be followed")
	// ErrStoppedAtDDL: a DDL statement could not be applied; the follower
	// stopped before it.
	ErrStoppedAtDDL = errors.New("stopped before a statement it cannot apply")
	// ErrNoPosition: the target has no saved position for these databases.
	ErrNoPosition = errors.New("no saved position")
	// ErrDiffers: the last verify made while following found differences.
	ErrDiffers = errors.New("the target differs from the source")
	// ErrPrerequisites: the source or target lacks what following needs.
	ErrPrerequisites = errors.New("following needs settings the servers lack")
)

// Pair is a source database and the target database it is applied to.
type Pair struct {
	Source string `json:"source"`
	Target string `json:"target"`
}

// targetNames are the pairs' target databases, in order.
func targetNames(pairs []Pair) []string {
	out := make([]string, len(pairs))
	for i, p := range pairs {
		out[i] = p.Target
	}
	return out
}

// Position is a point in the source's binary log: the file and offset of
// the end of the last applied transaction and, where the source has
// GTIDs, the set applied up to there.
type Position struct {
	File string `json:"file"`
	Pos  uint32 `json:"pos"`
	GTID string `json:"gtid,omitempty"`
}

// Options control a follower. The zero value of each field means its
// default.
type Options struct {
	// Databases to follow, each to its target database. Empty: the source
	// URL's database into the target URL's (or the same name).
	Databases []Pair
	// From is where to start; zero: the position saved in the target.
	From Position
	// Workers is the target connections changes are applied on (default 4).
	Workers int
	// BatchRows ends a batch at this many row changes (default 2,000);
	// BatchWait ends it when it is this old (default 100ms).
	BatchRows int
	BatchWait time.Duration
	// UntilCaughtUp stops once the position the source had when following
	// started (or when CaughtUp was last asked) is applied.
	UntilCaughtUp bool
	// Duration stops after this long (0: until stopped).
	Duration time.Duration
	// SkipDDL goes on past the DDL statement the last follower stopped
	// before, without applying it (it was applied by hand, or is not
	// wanted).
	SkipDDL bool
	// ServerID is the replica id the follower registers with (default: one
	// derived from the target databases, in 1<<30..1<<31).
	ServerID uint32
	// RetryFor is how long the follower keeps reconnecting to a server that
	// fails before it gives up (default 5m).
	RetryFor time.Duration
	// Interval is the progress interval (default 1s).
	Interval time.Duration
	// Log receives a line per step and reconnect (nil: none). OnProgress,
	// when set, is called every Interval with the latest figures.
	Log        io.Writer
	OnProgress func(Stats)
	// AllowWrite must be set: the target is written.
	AllowWrite bool
}

// Validate checks the options as the flags set them, before anything
// connects: a fault is bad usage naming the flag.
func (o *Options) Validate(cmd string) error {
	switch {
	case !o.AllowWrite:
		return usage.Errorf("%s: the target is written (row changes, a position in shakedown_follow); add --allow-write", cmd)
	case o.Workers < 0 || o.Workers > 256:
		return usage.Errorf("%s: --workers must be between 1 and 256, got %d", cmd, o.Workers)
	case o.BatchRows < 0:
		return usage.Errorf("%s: --batch-rows must be >= 1, got %d", cmd, o.BatchRows)
	case o.Duration < 0:
		return usage.Errorf("%s: --duration must not be negative", cmd)
	}
	return nil
}

func (o *Options) defaults() {
	if o.Workers <= 0 {
		o.Workers = 4
	}
	if o.BatchRows <= 0 {
		o.BatchRows = 2000
	}
	if o.BatchWait <= 0 {
		o.BatchWait = 100 * time.Millisecond
	}
	if o.RetryFor <= 0 {
		o.RetryFor = 5 * time.Minute
	}
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
}
