package monitor

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/shakedown/shakedown/internal/result"
)

// WatchWriter is how watch prints each sample on w: as one JSON object
// (asJSON), or as a line of the table, fitted to width (0: every column),
// after a line that says what is watched (what, every interval). local
// says the server runs on this host.
func WatchWriter(w io.Writer, asJSON bool, what string, interval time.Duration, local bool, width int) func(result.Sample, time.Time) error {
	if asJSON {
		enc := json.NewEncoder(w)
		// Each sample as JSON, with the time its reading came back.
		return func(smp result.Sample, _ time.Time) error { return enc.Encode(Record(smp)) }
	}
	fmt.Fprintf(w, "watching %s every %s\n", what, interval)
	tb := NewTableWidth(w, local, width)
	tb.Interval = interval
	return tb.WriteAt
}
