package outfile

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

var errFull = errors.New("disk full")

// failAfter accepts n writes, then fails every one.
type failAfter struct {
	n      int
	writes int
}

func (f *failAfter) Write(p []byte) (int, error) {
	f.writes++
	if f.writes > f.n {
		return 0, errFull
	}
	return len(p), nil
}

func TestWriteJSONIndents(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, map[string][]int{"a": {1}}); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "{\n  \"a\": [\n    1\n  ]\n}\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestStickyKeepsFirstError(t *testing.T) {
	f := &failAfter{n: 1}
	s := &Sticky{W: f}
	s.Printf("one %d\n", 1)
	s.Printf("two\n")
	if _, err := io.WriteString(s, "three\n"); !errors.Is(err, errFull) {
		t.Errorf("write after a failure: got %v, want %v", err, errFull)
	}
	if !errors.Is(s.Err, errFull) {
		t.Errorf("got Err %v, want %v", s.Err, errFull)
	}
	if f.writes != 2 {
		t.Errorf("got %d writes reaching the writer, want 2: later ones are dropped", f.writes)
	}
}

func TestWriteByFormat(t *testing.T) {
	formats := []Format[string]{
		{Name: "text", Write: func(w io.Writer, s string) error { _, err := io.WriteString(w, s); return err }},
		{Name: "bad", Write: func(io.Writer, string) error { return errFull }},
	}
	for _, tc := range []struct {
		name, format, want, wantErr string
	}{
		{"known", "text", "hello", ""},
		{"writer fails", "bad", "", "write bad page: disk full"},
		{"unknown", "pdf", "", `write page: unknown format "pdf"; formats: text, bad`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			err := WriteFormat(&b, "page", tc.format, formats, "hello")
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != tc.wantErr || b.String() != tc.want {
				t.Errorf("got %q and error %q, want %q and error %q", b.String(), gotErr, tc.want, tc.wantErr)
			}
		})
	}
}
