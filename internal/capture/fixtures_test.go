package capture

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/logs")

// TestLogFixtures reads each log in testdata/logs, written after its
// server's documentation, with its format detected as a user's would be,
// and compares the statements, their fingerprints and the source's counts
// with the golden file beside it (go test -run TestLogFixtures -update
// rewrites them).
func TestLogFixtures(t *testing.T) {
	logs, err := filepath.Glob("testdata/logs/*.log")
	if err != nil || len(logs) == 0 {
		t.Fatalf("fixtures: got %d, %v; want some", len(logs), err)
	}
	for _, path := range logs {
		name := strings.TrimSuffix(filepath.Base(path), ".log")
		t.Run(name, func(t *testing.T) {
			got := describeCapture(t, path)
			golden := strings.TrimSuffix(path, ".log") + ".want"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if got != string(want) {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// describeCapture captures one log and describes what came out.
func describeCapture(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	format, why, err := DetectWhy(data)
	if err != nil {
		t.Fatalf("detect: %v", err)
	}
	var got []*Record
	c := NewCapturer(func(r *Record) error { got = append(got, r); return nil })
	if err := c.Run(context.Background(), []Source{{Name: filepath.Base(path), Format: format, FormatWhy: why, R: bytes.NewReader(data)}}); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	s := c.Stats.Sources[0]
	fmt.Fprintf(&b, "format: %s (%s)\n", s.Format, s.FormatWhy)
	fmt.Fprintf(&b, "entries %d, statements %d, not statements %d, skipped %d, values lost %d\n",
		s.Entries(), s.Statements, s.Other, s.SkippedCount(), s.ValuesLost)
	if txt := s.SkipText(); txt != "" {
		fmt.Fprintf(&b, "skipped: %s\n", txt)
	}
	if why := s.Empty(); why != "" {
		fmt.Fprintf(&b, "empty: %s\n", why)
	}
	for _, p := range c.Stats.Problems {
		fmt.Fprintf(&b, "problem: %s\n", p)
	}
	for _, r := range got {
		fmt.Fprintf(&b, "%s\n", brief(r))
		if r.Kind == "" {
			fmt.Fprintf(&b, "    %s %s\n", r.Digest, r.Fingerprint)
		}
	}
	return b.String()
}

// TestCaptureDeterministic captures each fixture twice into capture files
// and compares them byte for byte.
func TestCaptureDeterministic(t *testing.T) {
	logs, _ := filepath.Glob("testdata/logs/*.log")
	for _, path := range logs {
		t.Run(filepath.Base(path), func(t *testing.T) {
			var out [2]bytes.Buffer
			for i := range out {
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				format, _, err := DetectWhy(data)
				if err != nil {
					t.Fatal(err)
				}
				w, err := NewWriter(&out[i], []string{path}, time.Unix(0, 0))
				if err != nil {
					t.Fatal(err)
				}
				c := NewCapturer(w.Write)
				if err := c.Run(context.Background(), []Source{{Name: path, Format: format, R: bytes.NewReader(data)}}); err != nil {
					t.Fatal(err)
				}
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(out[0].Bytes(), out[1].Bytes()) {
				t.Errorf("got two different captures of one log:\n%s\n%s", out[0].String(), out[1].String())
			}
		})
	}
}
