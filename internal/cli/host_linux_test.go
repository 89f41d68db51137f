package cli

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

// TestHostDiffSandboxes compares two local servers reached by their URLs,
// one bound to CPU 0: host diff finds each server's process from its pid
// file and names the CPUs it may run on.
func TestHostDiffSandboxes(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: nothing to bind a server away from")
	}
	sandboxtest.RequireServer(t)
	t.Parallel() // servers of its own, no timings
	insts := sandboxtest.StartAll(t, nil, nil)
	var one unix.CPUSet
	one.Set(0)
	if err := unix.SchedSetaffinity(insts[0].PID, &one); err != nil {
		t.Skipf("cannot bind the server to CPU 0: %v", err)
	}
	code, out, stderr := runCLI(context.Background(), "host", "diff", insts[0].URL(), insts[1].URL())
	if code != ExitDifferences {
		t.Fatalf("exit: got %d, want %d\n%s%s", code, ExitDifferences, out, stderr)
	}
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "process.cpus_allowed ") {
			line = l
		}
	}
	if f := strings.Fields(line); len(f) < 3 || f[1] != "0" || f[2] == "0" {
		t.Errorf("process.cpus_allowed: got line %q, want CPU 0 against the other's CPUs\n%s", line, out)
	}
	for _, want := range []string{"pid " + strconv.Itoa(insts[0].PID), "datadir " + insts[0].DataDir, "what: the CPUs the server may run on"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
