package capture

import (
	"fmt"
	"os"
	"time"

	"github.com/shakedown/shakedown/internal/outfile"
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
