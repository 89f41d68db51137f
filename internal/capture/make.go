package capture

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/shakedown/shakedown/internal/fingerprint"
	"github.com/shakedown/shakedown/internal/usage"
)

// Made is what one reading of a capture's sources made.
type Made struct {
	Stats    Stats
	Summary  *Summary
	Workload *WorkloadBuilder // nil unless a workload was asked for
	// Empty says, for each source from which no statement was read, why;
	// only when the reading itself did not fail.
	Empty []string
}

// Make reads sources once into all that was asked for: records into w
// (nil: none), a summary, and with toWorkload a workload (reads only with
// readsOnly). The first 20 problems are told on problems.
func Make(ctx context.Context, sources []Source, w *Writer, toWorkload, readsOnly bool, problems io.Writer) (*Made, error) {
	emit := func(r *Record) error {
		if w == nil {
			return nil
		}
		return w.Write(r)
	}
	cp := NewCapturer(emit)
	m := &Made{Summary: NewSummary()}
	if toWorkload {
		m.Workload = NewWorkloadBuilder(readsOnly)
	}
	cp.OnRecord = func(r *Record, info *fingerprint.Info) {
		m.Summary.Add(r, info)
		if m.Workload != nil {
			m.Workload.Add(r, info)
		}
	}
	shown := 0
	cp.OnProblem = func(p Problem) {
		if shown < 20 {
			if p.Kept {
				fmt.Fprintf(problems, "capture: %s\n", p)
			} else {
				fmt.Fprintf(problems, "capture: %s (skipped)\n", p)
			}
		}
		shown++
	}
	runErr := cp.Run(ctx, sources)
	m.Stats = cp.Stats
	// Never a silent zero: a source from which no statement was read fails
	// the capture, once every source has been read.
	if runErr == nil {
		for i := range m.Stats.Sources {
			if why := m.Stats.Sources[i].Empty(); why != "" {
				m.Empty = append(m.Empty, m.Stats.Sources[i].Name+": "+why)
			}
		}
	}
	return m, runErr
}

// WriteNotes tells what each source skipped or dropped, one line each.
func WriteNotes(w io.Writer, st *Stats) {
	for i := range st.Sources {
		s := &st.Sources[i]
		if n := s.SkippedCount(); n > 0 {
			fmt.Fprintf(w, "capture: %s: %d of %d entries skipped: %s\n", s.Name, n, s.Entries(), s.SkipText())
		}
		if s.ValuesLost > 0 {
			fmt.Fprintf(w, "capture: %s: %d unreadable values dropped, their statements kept\n", s.Name, s.ValuesLost)
		}
	}
}

// OpenFile opens a file SOURCE and finds its format: format when given,
// else from its first 64 KiB. A capture file is read back as a source of
// its own records. Faults are bad input.
func OpenFile(path, format string, port int) (Source, func(), error) {
	nop := func() {}
	f, err := os.Open(path)
	if err != nil {
		return Source{}, nop, usage.Errorf("capture: %v", err)
	}
	br := bufio.NewReaderSize(f, 1<<20)
	head, _ := br.Peek(64 << 10)
	if strings.HasPrefix(string(head), `{"shakedown_capture"`) {
		rd, err := NewReader(br)
		if err != nil {
			f.Close()
			return Source{}, nop, usage.Errorf("capture: %s: %v", path, err)
		}
		return Source{Name: path, Format: "capture", FormatWhy: "a capture file header", Replay: rd}, func() { f.Close() }, nil
	}
	why := "--format"
	if format == "" {
		if format, why, err = DetectWhy(head); err != nil {
			f.Close()
			return Source{}, nop, usage.Errorf("capture: %s: %v", path, err)
		}
	}
	return Source{Name: path, Format: format, FormatWhy: why, R: br, Port: port}, func() { f.Close() }, nil
}
