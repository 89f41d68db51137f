package follow

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Stats are a follower's figures since it started, as the progress line
// and the metrics show them.
type Stats struct {
	Elapsed    time.Duration `json:"-"`
	Events     int64         `json:"events"`         // binary log events read
	Txns       int64         `json:"transactions"`   // transactions applied (with changes to the followed tables)
	Rows       int64         `json:"rows"`           // row changes applied
	Skipped    int64         `json:"skipped_events"` // row events of tables not followed
	DDL        int64         `json:"ddl"`            // DDL statements applied
	Reconnects int64         `json:"reconnects"`     // streams or batches started again after a failure
	Lag        float64       `json:"lag_seconds"`    // from the last applied event's time on the source
	LagBytes   int64         `json:"lag_bytes"`      // bytes of binary log not yet applied (-1: unknown)
	Position   Position      `json:"position"`       // the last saved position
	// rates over the last interval
	EventsPerSec float64 `json:"events_per_sec"`
	RowsPerSec   float64 `json:"rows_per_sec"`
	Seconds      float64 `json:"seconds"` // Elapsed
}

// String is the progress line.
func (s Stats) String() string {
	lag := fmt.Sprintf("lag %.1f s", s.Lag)
	if s.LagBytes >= 0 {
		lag += fmt.Sprintf(" (%s)", bytesText(s.LagBytes))
	}
	line := fmt.Sprintf("follow: %s, %.0f events/s, %.0f rows/s, %s, at %s, %d rows applied",
		s.Elapsed.Truncate(time.Second), s.EventsPerSec, s.RowsPerSec, lag, s.Position, s.Rows)
	if s.Skipped > 0 {
		line += fmt.Sprintf(", %d events of other tables skipped", s.Skipped)
	}
	if s.Reconnects > 0 {
		line += fmt.Sprintf(", %d reconnects", s.Reconnects)
	}
	return line
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// Summary is what a follower did, at its end.
type Summary struct {
	Source     string      `json:"source"`
	Target     string      `json:"target"`
	Databases  []Pair      `json:"databases"`
	From       Position    `json:"from"`
	To         Position    `json:"to"`
	State      string      `json:"state"`
	Seconds    float64     `json:"seconds"`
	Events     int64       `json:"events"`
	Txns       int64       `json:"transactions"`
	Rows       int64       `json:"rows"`
	Skipped    int64       `json:"skipped_events"`
	DDL        int64       `json:"ddl"`
	Reconnects int64       `json:"reconnects"`
	LagP50     float64     `json:"lag_p50_seconds"`
	LagP99     float64     `json:"lag_p99_seconds"`
	LagMax     float64     `json:"lag_max_seconds"`
	LagSamples int         `json:"lag_samples"` // one a second
	Verifies   []VerifyRun `json:"verifies,omitempty"`
	Notes      []string    `json:"notes"`
}

// lagQuantiles fills the lag figures from one sample a second.
func (s *Summary) lagQuantiles(samples []float64) {
	s.LagSamples = len(samples)
	if len(samples) == 0 {
		return
	}
	v := slices.Clone(samples)
	slices.Sort(v)
	at := func(q float64) float64 { return v[min(len(v)-1, int(q*float64(len(v))))] }
	s.LagP50, s.LagP99, s.LagMax = at(0.5), at(0.99), v[len(v)-1]
}

// Text is the end summary.
func (s *Summary) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "follow %s -> %s: %s\n", s.Source, s.Target, s.State)
	fmt.Fprintf(&b, "  from %s\n  to   %s\n", s.From, s.To)
	rate := 0.0
	if s.Seconds > 0 {
		rate = float64(s.Rows) / s.Seconds
	}
	fmt.Fprintf(&b, "  %d events, %d transactions, %d rows applied in %.1f s (%.0f rows/s)", s.Events, s.Txns, s.Rows, s.Seconds, rate)
	if s.DDL > 0 {
		fmt.Fprintf(&b, ", %d DDL", s.DDL)
	}
	if s.Skipped > 0 {
		fmt.Fprintf(&b, ", %d events of other tables skipped", s.Skipped)
	}
	if s.Reconnects > 0 {
		fmt.Fprintf(&b, ", %d reconnects", s.Reconnects)
	}
	if s.LagSamples == 0 {
		b.WriteString("\n  lag not sampled: it ran under a second\n")
	} else {
		fmt.Fprintf(&b, "\n  lag p50 %.1f s, p99 %.1f s, max %.1f s (%d samples, one a second)\n", s.LagP50, s.LagP99, s.LagMax, s.LagSamples)
	}
	for _, v := range s.Verifies {
		fmt.Fprintf(&b, "  %s: %s\n", v.At.Format("15:04:05"), strings.TrimPrefix(v.String(), "follow: "))
	}
	for _, n := range s.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	return b.String()
}
