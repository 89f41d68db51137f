package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The packet capture fixtures recorded from a sandbox session (see
// internal/capture/record_test.go).
var pcapFixtures = filepath.Join("..", "capture", "testdata", "pcap")

func fixturePortArg(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(pcapFixtures, "port"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestCapturePacketDumps(t *testing.T) {
	port := fixturePortArg(t)
	dir := t.TempDir()
	// The TCP handshake and the greeting only: traffic, but no statement.
	whole, err := os.ReadFile(filepath.Join(pcapFixtures, "session.x.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(whole), "\n")
	var head strings.Builder
	packets := 0
	for _, l := range lines {
		if !strings.HasPrefix(l, "\t") {
			packets++
		}
		if packets > 4 {
			break
		}
		head.WriteString(l)
	}
	greeting := filepath.Join(dir, "greeting.txt")
	if err := os.WriteFile(greeting, []byte(head.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		stderr   []string
		captured int
	}{
		{"tcpdump -x text, detected", []string{filepath.Join(pcapFixtures, "session.x.txt"), "--port", port}, ExitOK,
			[]string{"42 statements in 2 sessions", "of 2 connections (0 open before the capture began); skipped: none"}, 42},
		{"tcpdump -xx text of connections already open", []string{filepath.Join(pcapFixtures, "midstream.xx.txt"), "--port", port}, ExitOK,
			[]string{"40 statements in 3 sessions", "(2 open before the capture began); skipped: 8 executions of statements prepared before the capture began"}, 40},
		{"pcapng", []string{filepath.Join(pcapFixtures, "midstream.pcapng"), "--port", port}, ExitOK,
			[]string{"40 statements in 3 sessions"}, 40},
		{"wrong port", []string{filepath.Join(pcapFixtures, "session.x.txt"), "--port", "3306"}, ExitUsage,
			[]string{"no TCP packet to or from port 3306 in 190 packets"}, -1},
		{"no statement", []string{greeting, "--port", port, "--format", "tcpdump-text"}, ExitUsage,
			[]string{"no statement read from port " + port + ": 4 packets"}, -1},
		{"a pcap read as text", []string{filepath.Join(pcapFixtures, "session.pcap"), "--port", port, "--format", "tcpdump-text"}, ExitUsage,
			[]string{"no TCP packet to or from port"}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".capture")
			code, _, stderr := runCLI(context.Background(), append([]string{"capture", "-o", out}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("got exit %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			for _, w := range tc.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("got stderr %q, want it to say %q", stderr, w)
				}
			}
			if tc.captured < 0 {
				if _, err := os.Stat(out); err == nil {
					t.Errorf("got a capture file %s, want none after a refusal", out)
				}
				return
			}
			n := 0
			for _, r := range readCapture(t, out) {
				if r.Kind == "" {
					n++
				}
			}
			if n != tc.captured {
				t.Errorf("got %d statements in the capture file, want %d", n, tc.captured)
			}
		})
	}
}
