package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCaptureSourceCounts checks that capture says what each source held
// and never turns a source it could not read into a silent zero.
func TestCaptureSourceCounts(t *testing.T) {
	dir := t.TempDir()
	write := fileWriter(t, dir)
	entry := "# Query_time: 0.1  Lock_time: 0.0  Rows_sent: 1  Rows_examined: 1\nSET timestamp=1;\n"
	partial := write("partial.log", entry+"SELECT 1;\n"+entry+entry+"SELECT 2;\n")
	empty := write("empty.log", entry+entry)
	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   []string // lines that must be in the output
		stderr   []string
		captured bool // whether the capture file is there
	}{
		{"skipped entries said", []string{partial, "--summary"}, 0,
			[]string{`source ` + partial + `: slow ("# Query_time:" on line 1); 3 entries: 2 statements, 0 not statements, 1 skipped (1 entry without a statement (line 4))`},
			[]string{"capture: " + partial + ": 1 of 3 entries skipped: 1 entry without a statement (line 4)", "capture: 2 statements in 1 sessions written to"}, true},
		{"format named", []string{partial, "--format", "slow", "--summary"}, 0,
			[]string{`source ` + partial + `: slow (--format); 3 entries`}, nil, true},
		{"nothing read", []string{empty}, 2, nil,
			[]string{"capture: " + empty + ": no statement read (format slow, \"# Query_time:\" on line 1; 2 entries): skipped 2 entry without a statement (lines 1, 3)"}, false},
		{"one source of two empty", []string{partial, empty}, 2, nil,
			[]string{"capture: " + empty + ": no statement read", "capture: 2 statements in 1 sessions written to"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "x.capture")
			code, stdout, stderr := runCLI(context.Background(), append([]string{"capture", "-o", out}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit: got %d, want %d\n%s\n%s", code, tc.code, stdout, stderr)
			}
			for _, want := range tc.stdout {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout: got\n%s\nwant a line with %q", stdout, want)
				}
			}
			for _, want := range tc.stderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr: got\n%s\nwant a line with %q", stderr, want)
				}
			}
			if _, err := os.Stat(out); (err == nil) != tc.captured {
				t.Errorf("capture file there: got %v, want %v", err == nil, tc.captured)
			}
		})
	}
}

// TestCaptureSameBytes captures each log fixture twice and compares the
// files byte for byte.
func TestCaptureSameBytes(t *testing.T) {
	logs, err := filepath.Glob("../capture/testdata/logs/*.log")
	if err != nil || len(logs) == 0 {
		t.Fatalf("fixtures: got %d, %v", len(logs), err)
	}
	dir := t.TempDir()
	for _, log := range logs {
		var files [2][]byte
		for i := range files {
			out := filepath.Join(dir, fmt.Sprintf("%d.capture", i))
			code, _, stderr := runCLI(context.Background(), "capture", log, "-o", out)
			if code == ExitUsage && strings.Contains(stderr, "no statement read: no entries, only") {
				break // a log of server headers alone, which yields nothing
			}
			if code != 0 {
				t.Fatalf("capture %s: exit %d: %s", log, code, stderr)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			files[i] = b
		}
		if !bytes.Equal(files[0], files[1]) {
			t.Errorf("%s: got two different captures:\n%s\n%s", log, files[0], files[1])
		}
	}
}
