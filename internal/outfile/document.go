package outfile

// What the writers of every document share: indented JSON, a writer that
// keeps its first error so that printing code stays flat, and the choice
// of a writer by the name of its format, so that each is decided once.

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteJSON writes v as one JSON document indented by two spaces, the
// layout of every JSON document shakedown writes.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Sticky passes writes on to W until one fails, then keeps that error and
// drops every later write: the first error is the one worth reporting.
type Sticky struct {
	W   io.Writer
	Err error
}

// Write writes p unless an earlier write failed.
func (s *Sticky) Write(p []byte) (int, error) {
	if s.Err != nil {
		return 0, s.Err
	}
	n, err := s.W.Write(p)
	s.Err = err
	return n, err
}

// Printf formats to the writer unless an earlier write failed.
func (s *Sticky) Printf(format string, args ...any) {
	if s.Err == nil {
		_, s.Err = fmt.Fprintf(s.W, format, args...)
	}
}

// Format is one way of writing a document of type T.
type Format[T any] struct {
	Name  string
	Write func(io.Writer, T) error
}

// FormatNames are the formats' names, in their order.
func FormatNames[T any](formats []Format[T]) []string {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = f.Name
	}
	return names
}

// WriteFormat writes v in the format named format, one of formats. doc
// names the document in the errors: an unknown format lists the names
// there are.
func WriteFormat[T any](w io.Writer, doc, format string, formats []Format[T], v T) error {
	for _, f := range formats {
		if f.Name != format {
			continue
		}
		if err := f.Write(w, v); err != nil {
			return fmt.Errorf("write %s %s: %w", format, doc, err)
		}
		return nil
	}
	return fmt.Errorf("write %s: unknown format %q; formats: %s", doc, format, strings.Join(FormatNames(formats), ", "))
}
