package bisect

import (
	"fmt"
	"io"

	"github.com/shakedown/shakedown/internal/result"
)

// Write tells what a restore did: the variables set back, and, when it
// finished, the line that ends it (undoPath is the undo file it removed).
func (r *Restored) Write(w io.Writer, undoPath string, finished bool) {
	for _, s := range r.Set {
		fmt.Fprintf(w, "  set back %s\n", s)
	}
	if !finished {
		return
	}
	how := ""
	if r.Restarted {
		how = " (the sandbox was restarted with its own settings)"
	}
	fmt.Fprintf(w, "restored %s%s: %d variables set back, %d read back at their original values; %s removed\n",
		r.Control, how, len(r.Set), r.Checked, undoPath)
}

// WritePlan lists what a bisect would set on the control, as Plan found
// the differences.
func WritePlan(w io.Writer, control fmt.Stringer, diffs []result.BisectVariable) {
	fmt.Fprintf(w, "vars bisect would set these on the control %s, one group at a time (SET GLOBAL, or a restart when the control is a sandbox), and restore them at the end:\n", control)
	for _, d := range diffs {
		fmt.Fprintf(w, "  %s: %s -> %s\n", d.Name, d.Control, d.Candidate)
	}
}
