package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/shakedown/shakedown/internal/store"
)

// outputFile is a file a command writes when it ends, named by its flag.
// An empty path is not asked for; "-" is standard output.
type outputFile struct {
	flag, path string
}

// checkOutputs proves, before any load starts, that every file can be
// written where its flag says, so that nothing is measured that cannot be
// kept. It creates nothing that stays: an existing file is opened for
// writing without being changed, a missing one is tried as a temporary
// file beside it. The error names the flag and the path.
func checkOutputs(files ...outputFile) error {
	var errs []error
	for _, f := range files {
		if f.path == "" || f.path == "-" {
			continue
		}
		if err := checkWritable(f.path); err != nil {
			errs = append(errs, fmt.Errorf("%s %s: cannot be written: %w", f.flag, f.path, err))
		}
	}
	return errors.Join(errs...)
}

func checkWritable(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return errors.New("it is a directory")
	case err == nil:
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return plainPathError(err)
		}
		return f.Close()
	case !errors.Is(err, fs.ErrNotExist):
		return plainPathError(err)
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil {
		return fmt.Errorf("its directory %s: %w", dir, plainPathError(err))
	} else if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	f, err := os.CreateTemp(dir, ".shakedown-check-*")
	if err != nil {
		return fmt.Errorf("its directory %s: %w", dir, plainPathError(err))
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// plainPathError drops the path a *fs.PathError carries: the message
// names the flag's path itself, never a temporary one.
func plainPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// openStoreFlag opens the store a flag names before the load starts: a
// store that cannot be opened or written stops the command (exit 1) before
// anything is measured.
func openStoreFlag(ctx context.Context, flag, path string) (*store.Store, error) {
	st, err := store.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("%s %s: cannot be used: %w", flag, path, err)
	}
	return st, nil
}

// writeOutput writes data to the file a flag names, atomically, or to
// stdout for "-".
func writeOutput(stdout io.Writer, f outputFile, data []byte) error {
	if f.path == "-" {
		_, err := stdout.Write(data)
		return err
	}
	if err := writeFileAtomic(f.path, data); err != nil {
		return fmt.Errorf("%s: %w", f.flag, err)
	}
	return nil
}

// errNotSaved is a failure to keep what a command measured; the caller has
// printed why, and the measurement itself on standard error.
var errNotSaved = errors.New("the results could not be saved: they are on standard error above, as JSON")

// rescue prints what could not be saved on standard error, as JSON, so
// that it is not lost.
func rescue(stderr io.Writer, why error, doc any) error {
	fmt.Fprintln(stderr, "shakedown:", why)
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("%w; nor could they be printed: %v", why, err)
	}
	fmt.Fprintf(stderr, "%s\n", b)
	return errNotSaved
}
