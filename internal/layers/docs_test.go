package layers

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The two pages a newcomer opens first stay short enough to read: the
// README is a map to docs/, and the performance page holds today's
// figures, not their history (which is git's).
func TestDocSizes(t *testing.T) {
	for _, tc := range []struct {
		path string
		max  int
	}{
		{"README.md", 400},
		{filepath.Join("docs", "PERFORMANCE.md"), 800},
	} {
		b, err := os.ReadFile(filepath.Join("..", "..", tc.path))
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(b, []byte("\n")); n > tc.max {
			t.Errorf("%s has %d lines, want at most %d: move detail to a page of docs/, or history to git", tc.path, n, tc.max)
		}
	}
}
