// Package outfile is how commands write the files their flags name and
// the documents that go in them: each file is checked before any work
// starts, so that nothing is measured that cannot be kept, and errors
// name the flag's path, never a temporary file beside it; every document
// is written as indented JSON or in a format chosen by name
// (document.go).
package outfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// File is a file a command writes when it ends, named by its flag.
// An empty path is not asked for; "-" is standard output.
type File struct {
	Flag, Path string
}

// Check proves, before any load starts, that every file can be
// written where its flag says, so that nothing is measured that cannot be
// kept. It creates nothing that stays: an existing file is opened for
// writing without being changed, a missing one is tried as a temporary
// file beside it. The error names the flag and the path.
func Check(files ...File) error {
	var errs []error
	for _, f := range files {
		if f.Path == "" || f.Path == "-" {
			continue
		}
		if err := Writable(f.Path); err != nil {
			errs = append(errs, fmt.Errorf("%s %s: cannot be written: %w", f.Flag, f.Path, err))
		}
	}
	return errors.Join(errs...)
}

// Writable says why path cannot be written, or nil, changing nothing.
func Writable(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return errors.New("it is a directory")
	case err == nil:
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return PlainPathError(err)
		}
		return f.Close()
	case !errors.Is(err, fs.ErrNotExist):
		return PlainPathError(err)
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil {
		return fmt.Errorf("its directory %s: %w", dir, PlainPathError(err))
	} else if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	f, err := os.CreateTemp(dir, ".shakedown-check-*")
	if err != nil {
		return fmt.Errorf("its directory %s: %w", dir, PlainPathError(err))
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// PlainPathError drops the path a *fs.PathError carries: the message
// names the flag's path itself, never a temporary one.
func PlainPathError(err error) error {
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

// Write writes data to the file a flag names, atomically, or to
// stdout for "-".
func Write(stdout io.Writer, f File, data []byte) error {
	if f.Path == "-" {
		_, err := stdout.Write(data)
		return err
	}
	if err := WriteAtomic(f.Path, data); err != nil {
		return fmt.Errorf("%s: %w", f.Flag, err)
	}
	return nil
}

// WriteAtomic writes data to path through a temporary file, synced
// before it takes path's place, so that a failed write or a crash leaves
// the old file or the new one, never half of one.
func WriteAtomic(path string, data []byte) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	// Errors name path, never the temporary file beside it.
	tmp := path + ".tmp"
	if err := writeSynced(tmp, data); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, PlainPathError(err))
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, PlainPathError(err))
	}
	return nil
}

// writeSynced writes data to a new file at path and syncs it to disk.
func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Create fills path with what write writes, atomically (WriteAtomic): a
// write that fails leaves no half file.
func Create(path string, write func(io.Writer) error) error {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return err
	}
	return WriteAtomic(path, b.Bytes())
}

var formatByExt = map[string]string{".txt": "text", ".md": "md", ".csv": "csv", ".json": "json", ".html": "html", ".htm": "html"}

// Choose settles a command's output file and format: html, a --html FILE
// given, is -o FILE --format html, as every command that writes a page
// names it; with -o FILE (*out) and no --format (formatSet), FILE's
// extension says it; it must be one of formats. cmd names the command in
// the error, which is the user's to fix.
func Choose(cmd, html string, formatSet bool, out, format *string, formats []string) error {
	if html != "" {
		if *out != "" || formatSet || !slices.Contains(formats, "html") {
			return fmt.Errorf("%s: --html FILE is -o FILE --format html, and goes with neither -o nor --format (formats here: %s)", cmd, strings.Join(formats, ", "))
		}
		*out, *format = html, "html"
	}
	if !formatSet && *out != "" {
		f, err := FormatOf(cmd, *out, *format, formats)
		if err != nil {
			return err
		}
		*format = f
	}
	if !slices.Contains(formats, *format) {
		return fmt.Errorf("%s: --format %q: want one of %s", cmd, *format, strings.Join(formats, ", "))
	}
	return nil
}

// FormatOf is the format that -o FILE's extension asks for, given the
// formats cmd writes; a file without an extension keeps format. An
// extension of no format (report.xlsx) is an error, the user's to fix,
// rather than text under a name that promises something else.
func FormatOf(cmd, out, format string, formats []string) (string, error) {
	ext := strings.ToLower(filepath.Ext(out))
	if ext == "" {
		return format, nil
	}
	if f, ok := formatByExt[ext]; ok && slices.Contains(formats, f) {
		return f, nil
	}
	var exts []string
	for _, e := range []string{".txt", ".md", ".csv", ".json", ".html"} {
		if slices.Contains(formats, formatByExt[e]) {
			exts = append(exts, e)
		}
	}
	return "", fmt.Errorf("%s: -o %s: %s is not a format %s writes: name the file %s, or give --format (%s)",
		cmd, out, ext, cmd, strings.Join(exts, ", "), strings.Join(formats, ", "))
}
