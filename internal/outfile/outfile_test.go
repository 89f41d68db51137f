package outfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Create and WriteAtomic are the one way an output file is written: whole
// or not at all, never leaving the temporary file beside it.
func TestWritesWholeOrNothing(t *testing.T) {
	errBoom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		old     string // the file before, "" for none
		write   func(path string) error
		want    string // the file after, "" for none
		wantErr error
	}{
		{"atomic new", "", func(p string) error { return WriteAtomic(p, []byte("new\n")) }, "new\n", nil},
		{"atomic replaces", "old\n", func(p string) error { return WriteAtomic(p, []byte("new\n")) }, "new\n", nil},
		{"create new", "", func(p string) error {
			return Create(p, func(w io.Writer) error { _, err := io.WriteString(w, "made\n"); return err })
		}, "made\n", nil},
		{"create fails: no file", "", func(p string) error {
			return Create(p, func(w io.Writer) error { io.WriteString(w, "half"); return errBoom })
		}, "", errBoom},
		{"create fails: old file kept", "old\n", func(p string) error {
			return Create(p, func(w io.Writer) error { io.WriteString(w, "half"); return errBoom })
		}, "old\n", errBoom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.json")
			if tc.old != "" {
				if err := os.WriteFile(path, []byte(tc.old), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := tc.write(path); !errors.Is(err, tc.wantErr) {
				t.Fatalf("got error %v, want %v", err, tc.wantErr)
			}
			b, err := os.ReadFile(path)
			switch {
			case tc.want == "" && !errors.Is(err, os.ErrNotExist):
				t.Errorf("got file %q (%v), want none", b, err)
			case tc.want != "" && string(b) != tc.want:
				t.Errorf("got %q (%v), want %q", b, err, tc.want)
			}
			if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(left) > 0 {
				t.Errorf("got temporary files %v left, want none", left)
			}
		})
	}
}

// An error names the path asked for, never the temporary file.
func TestWriteErrorNamesThePath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	err := WriteAtomic(path, []byte("x")) // a directory is in the way
	if err == nil || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), ".tmp") {
		t.Errorf("got %v, want an error naming %s and no temporary file", err, path)
	}
}

func TestFormatOf(t *testing.T) {
	all := []string{"text", "md", "csv", "json", "html"}
	tests := []struct {
		name, out, format, want string
		bad                     bool
	}{
		{"extension decides", "r.json", "text", "json", false},
		{"any case", "R.HTML", "text", "html", false},
		{"htm is html", "r.htm", "text", "html", false},
		{"no extension keeps the format", "report", "md", "md", false},
		{"spreadsheet", "r.xlsx", "text", "", true},
		{"pdf", "r.pdf", "text", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FormatOf("report", tc.out, tc.format, all)
			if got != tc.want || (err != nil) != tc.bad {
				t.Errorf("got %q, %v; want %q, error %v", got, err, tc.want, tc.bad)
			}
		})
	}
}
