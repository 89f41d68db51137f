package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputExtensionNamesAFormat: -o with an extension that is no format
// is exit 2 naming -o and the formats, before anything is read or
// written; a known extension or --format still decides.
func TestOutputExtensionNamesAFormat(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"report to xlsx", []string{"report", "--store", filepath.Join(dir, "none.db"), "-o", filepath.Join(dir, "x.xlsx")}, 2,
			"report: -o " + filepath.Join(dir, "x.xlsx") + ": .xlsx is not a format report writes: name the file .txt, .md, .csv, .json, .html, or give --format (text, md, csv, json, html)"},
		{"readiness to csv", []string{"readiness", "mysql://u@127.0.0.1:1/a", "mysql://u@127.0.0.1:2/a", "--store", filepath.Join(dir, "none.db"), "-o", filepath.Join(dir, "r.csv")}, 2,
			".csv is not a format readiness writes: name the file .txt, .md, .json, .html, or give --format"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(context.Background(), tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("got exit %d, %q; want exit %d and %q", code, stderr, tc.code, tc.want)
			}
			if _, err := os.Stat(tc.args[len(tc.args)-1]); err == nil {
				t.Errorf("got %s written, want nothing written", tc.args[len(tc.args)-1])
			}
		})
	}
}
