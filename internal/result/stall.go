package result

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Stall is one stall capture: why it was taken, the server's figures of
// the seconds before it, and what the server showed at that moment.
type Stall struct {
	// At is when the trigger fired; AtS is the same in seconds from the
	// start of measurement (negative during a warm-up).
	At  time.Time `json:"at"`
	AtS float64   `json:"t_s"`
	// Reasons are the triggers that held, each with the figure that made
	// it hold.
	Reasons []string `json:"reasons"`
	// Before holds the server samples of the seconds before the trigger,
	// oldest first, the last one the sample that fired.
	Before []Sample `json:"before"`
	// Sections are what the capture read, in order.
	Sections []StallSection `json:"sections"`
	// Blockers are the sessions that block others in the lock waits and
	// wait for nothing themselves: where a pile-up starts. Each is the
	// session's id, then what the lock waits say of it.
	Blockers []string `json:"blockers,omitempty"`
	// CaptureMS is how long the whole capture took.
	CaptureMS float64 `json:"capture_ms"`
}

// StallSection is one read of a capture: a table (Columns and Rows) or a
// text (SHOW ENGINE INNODB STATUS), or why it could not be read.
type StallSection struct {
	// Name is "processlist", "innodb_status", "lock_waits" or
	// "transactions".
	Name string `json:"name"`
	// Source is the statement that read it.
	Source  string     `json:"source,omitempty"`
	Columns []string   `json:"columns,omitempty"`
	Rows    [][]string `json:"rows,omitempty"`
	Text    string     `json:"text,omitempty"`
	// Truncated says rows or text were cut to the capture's bounds.
	Truncated bool    `json:"truncated,omitempty"`
	Error     string  `json:"error,omitempty"`
	ReadMS    float64 `json:"read_ms"`
	// PauseMS is how long the read stopped the server (stacks only).
	PauseMS float64 `json:"pause_ms,omitempty"`
}

// Section returns the capture's section of that name, or nil.
func (s *Stall) Section(name string) *StallSection {
	for i := range s.Sections {
		if s.Sections[i].Name == name {
			return &s.Sections[i]
		}
	}
	return nil
}

// stallRowsShown bounds the rows of a section that a summary prints; the
// stored capture keeps them all.
const stallRowsShown = 12

// WriteStalls prints the run's stall captures, or nothing when there are
// none.
func (r *Result) WriteStalls(w io.Writer) {
	if len(r.Stalls) == 0 {
		return
	}
	fmt.Fprintf(w, "\nStall captures: %d", len(r.Stalls))
	if r.StallsSkipped > 0 {
		fmt.Fprintf(w, " (the triggers held %d more times: within the cooldown, during a capture or past --stall-max)", r.StallsSkipped)
	}
	fmt.Fprintln(w)
	for i := range r.Stalls {
		r.Stalls[i].Write(w, i+1)
	}
}

// Write prints one capture, numbered n, its tables cut to their first
// rows and its texts left out (they stay with the result).
func (s *Stall) Write(w io.Writer, n int) { s.write(w, n, false) }

// WriteFull prints one capture, numbered n, with every row and text it
// holds (report --stall, watch --stall).
func (s *Stall) WriteFull(w io.Writer, n int) { s.write(w, n, true) }

func (s *Stall) write(w io.Writer, n int, full bool) {
	fmt.Fprintf(w, "  #%d at %.1fs (%s), captured in %.0f ms: %s\n", n, s.AtS, s.At.UTC().Format("15:04:05"), s.CaptureMS, strings.Join(s.Reasons, "; "))
	if len(s.Before) > 0 {
		fmt.Fprintf(w, "    seconds before (qps / threads_running):")
		for _, b := range s.Before {
			fmt.Fprintf(w, " %.0f/%.0f", b.Values["qps"], b.Values["threads_running"])
		}
		fmt.Fprintln(w)
	}
	for _, b := range s.Blockers {
		fmt.Fprintf(w, "    blocking, waiting for nothing: %s\n", b)
	}
	for _, sec := range s.Sections {
		head := fmt.Sprintf("    %s (%.0f ms)", sec.Name, sec.ReadMS)
		if sec.PauseMS > 0 {
			head = fmt.Sprintf("    %s (the server stopped %.0f ms while gdb read them)", sec.Name, sec.PauseMS)
		}
		switch {
		case sec.Error != "":
			fmt.Fprintf(w, "%s: not read: %s\n", head, sec.Error)
		case sec.Columns == nil && full:
			fmt.Fprintf(w, "%s: %d lines\n", head, strings.Count(sec.Text, "\n"))
			for _, line := range strings.Split(strings.TrimRight(sec.Text, "\n"), "\n") {
				fmt.Fprintln(w, strings.TrimRight("      "+line, " "))
			}
		case sec.Columns == nil:
			fmt.Fprintf(w, "%s: %d lines, kept with the result\n", head, strings.Count(sec.Text, "\n"))
		case len(sec.Rows) == 0:
			fmt.Fprintf(w, "%s: none\n", head)
		default:
			fmt.Fprintf(w, "%s: %d rows\n", head, len(sec.Rows))
			fmt.Fprintf(w, "      %s\n", strings.Join(sec.Columns, " | "))
			for j, row := range sec.Rows {
				if j == stallRowsShown && !full {
					fmt.Fprintf(w, "      ... %d more, kept with the result\n", len(sec.Rows)-j)
					break
				}
				fmt.Fprintf(w, "      %s\n", strings.Join(row, " | "))
			}
		}
	}
}
