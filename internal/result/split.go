package result

import (
	"strconv"
	"time"

	"github.com/shakedown/shakedown/internal/histogram"
)

// Segment says which part of a load split over many runners a result is
// (a runner's own result; a merged one has Split instead).
type Segment struct {
	// Label is the segment as people write it: 2/4, or 1/4:1/2 when the
	// parts are not equal.
	Label string `json:"label"`
	// Range is the segment as FROM:TO, and Sequence every runner's
	// boundaries from 0 to 1.
	Range    string `json:"range"`
	Sequence string `json:"sequence"`
	// Index is the segment's place in Sequence, from 0; Runners is how
	// many segments Sequence has.
	Index   int `json:"index"`
	Runners int `json:"runners"`
	// Host is the runner's host name.
	Host string `json:"host,omitempty"`
	// StartAt is the common start the runners were given; Started and
	// Measured are when this runner's load started and when it started
	// measuring, by its own clock.
	StartAt  time.Time `json:"start_at,omitzero"`
	Started  time.Time `json:"started"`
	Measured time.Time `json:"measured"`
}

// IntervalHDR is one interval of one runner, exactly: its bounds on the
// runner's clock, its counts and its latency histogram (that interval's
// values only). Adding the intervals of the runners that cover the same
// second gives the whole load's second exactly.
type IntervalHDR struct {
	StartUS    int64              `json:"start_us"` // Unix microseconds
	EndUS      int64              `json:"end_us"`
	Threads    int                `json:"threads"`
	Events     int64              `json:"events"`
	Reads      int64              `json:"reads"`
	Writes     int64              `json:"writes"`
	Others     int64              `json:"others"`
	Errors     int64              `json:"errors"`
	Reconnects int64              `json:"reconnects"`
	Latency    histogram.Snapshot `json:"latency"`
}

// Duration is the interval's length.
func (h IntervalHDR) Duration() time.Duration {
	return time.Duration(h.EndUS-h.StartUS) * time.Microsecond
}

// Split describes a result merged from the runners of a split load.
type Split struct {
	// Runners is how many segments the load was split into; Complete how
	// many of them reported a whole run.
	Runners  int    `json:"runners"`
	Complete int    `json:"complete"`
	Sequence string `json:"sequence"`
	// Partial is set when a runner never reported or stopped early: the
	// figures cover only what the others measured, and reports leave the
	// result out of their verdicts.
	Partial bool `json:"partial"`
	// Parts are the runners that reported, in segment order.
	Parts []Part `json:"parts"`
	// Missing says, for each segment that did not report a whole run, what
	// happened ("3/4 never reported", "2/4 stopped early: interrupted").
	Missing []string `json:"missing,omitempty"`
	// StartSkewS is the spread of the runners' measuring starts, on the
	// store's clock where the runners' clock offsets are known.
	StartSkewS float64 `json:"start_skew_s"`
	// Warnings are things about the merge a reader should know: clock
	// skew beyond a second, a runner that ended early.
	Warnings []string `json:"warnings,omitempty"`
}

// Part is one runner of a merged result.
type Part struct {
	Segment string    `json:"segment"`
	Host    string    `json:"host,omitempty"`
	Status  string    `json:"status"`
	Threads int       `json:"threads"`
	Queries int64     `json:"queries"`
	QPS     float64   `json:"qps"`
	Started time.Time `json:"started"`
	// ClockOffsetMS is the runner's clock minus the store's, as measured
	// when it registered (0 when the store shares the runner's clock).
	ClockOffsetMS float64 `json:"clock_offset_ms,omitempty"`
	Error         string  `json:"error,omitempty"`
}

// Label is how a merged result is described: "4 runners", or "partial, 3
// of 4 runners".
func (s *Split) Label() string {
	if s.Partial {
		return "partial, " + strconv.Itoa(s.Complete) + " of " + strconv.Itoa(s.Runners) + " runners"
	}
	return strconv.Itoa(s.Runners) + " runners"
}
