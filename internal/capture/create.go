package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/usage"
)

// Create makes the capture file path (capture's -o) for the records of
// the sources names; the caller flushes the writer and closes the file.
// No creation time is written: the same input gives the same capture. No
// path is no file: nil, nil, nil.
func Create(path string, names []string) (*Writer, *os.File, error) {
	if path == "" {
		return nil, nil, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, fmt.Errorf("capture: -o %s: %w", path, outfile.PlainPathError(err))
	}
	w, err := NewWriter(f, names, time.Time{})
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return w, f, nil
}

// MakeFile is Make with its records written to the capture file path
// (none when ""), flushed and closed. When nothing at all was read (no
// traffic, a format not known, or sources that held no statement) the
// file is removed and the error is bad usage saying why; otherwise the
// error is the reading's, beside what was made.
func MakeFile(ctx context.Context, sources []Source, names []string, path string, toWorkload, readsOnly bool, problems io.Writer) (*Made, error) {
	w, f, err := Create(path, names)
	if err != nil {
		return nil, err
	}
	if f != nil {
		defer f.Close()
	}
	m, runErr := Make(ctx, sources, w, toWorkload, readsOnly, problems)
	if errors.Is(runErr, ErrNoTraffic) || errors.Is(runErr, ErrUnknownFormat) || (len(m.Empty) > 0 && m.Stats.Statements == 0) {
		if f != nil {
			f.Close()
			os.Remove(path)
		}
		if runErr == nil {
			return nil, usage.Errorf("capture: %s", strings.Join(m.Empty, "; "))
		}
		return nil, usage.Errorf("capture: %v", runErr)
	}
	if w != nil {
		if err := w.Flush(); err != nil {
			return nil, err
		}
		if err := f.Close(); err != nil {
			return nil, fmt.Errorf("write %s: %w", path, err)
		}
	}
	return m, runErr
}
