package report

import (
	"errors"
	"fmt"
	"io"

	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/store"
)

// StallFormats are the formats report --stall writes.
var StallFormats = []string{"text", "json"}

// ErrNoStalls is a run that took no stall capture.
var ErrNoStalls = errors.New("no stall captures")

// WriteRunStalls prints one stored run's stall captures in full: every
// row of every table and the whole of each text (report --stall ID). A
// run without captures is ErrNoStalls, saying why there may be none.
func WriteRunStalls(w io.Writer, format string, run store.Run) error {
	if run.Result == nil || len(run.Result.Stalls) == 0 {
		return fmt.Errorf("run %d: %w: it ran without --stall, or no trigger held", run.ID, ErrNoStalls)
	}
	r := run.Result
	if format == "json" {
		doc := struct {
			Run      int64          `json:"run"`
			SweepID  int64          `json:"sweep_id,omitempty"`
			Step     int            `json:"step,omitempty"`
			Target   string         `json:"target"`
			Workload string         `json:"workload"`
			Threads  int            `json:"threads"`
			Skipped  int            `json:"skipped,omitempty"`
			Stalls   []result.Stall `json:"stalls"`
		}{run.ID, run.SweepID, run.Step, run.Target, run.Workload, run.Threads, r.StallsSkipped, r.Stalls}
		return outfile.WriteJSON(w, doc)
	}
	where := "made on its own"
	if run.SweepID > 0 {
		where = fmt.Sprintf("sweep %d, step %d", run.SweepID, run.Step)
	}
	fmt.Fprintf(w, "Run %d (%s): %s, %s, %d threads, started %s\n", run.ID, where, run.Target, run.Workload, run.Threads, run.StartedAt.UTC().Format("2006-01-02 15:04:05"))
	fmt.Fprintf(w, "Stall captures: %d", len(r.Stalls))
	if r.StallsSkipped > 0 {
		fmt.Fprintf(w, " (the triggers held %d more times: within the cooldown, during a capture or past --stall-max)", r.StallsSkipped)
	}
	fmt.Fprintln(w)
	for i := range r.Stalls {
		fmt.Fprintln(w)
		r.Stalls[i].WriteFull(w, i+1)
	}
	return nil
}
