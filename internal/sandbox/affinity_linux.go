package sandbox

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// allowedCPUs is the CPUs this process may run on.
func allowedCPUs() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	var out []int
	for c := 0; c < len(set)*64 && c <= maxCPU; c++ {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out
}

// withAffinity runs start (which forks the server) on a thread bound to
// cpus: a child inherits its parent thread's affinity, so every thread the
// server makes is bound from its first instruction, which setting the
// affinity of a running server (one thread at a time) cannot promise. The
// caller must have locked the goroutine to its thread. The thread's own
// affinity is put back afterwards.
func withAffinity(cpus []int, start func() error) error {
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return fmt.Errorf("read cpu affinity: %w", err)
	}
	for _, c := range cpus {
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("bind to cpus %s: %w", FormatCPUList(cpus), err)
	}
	err := start()
	if rerr := unix.SchedSetaffinity(0, &old); rerr != nil && err == nil {
		err = fmt.Errorf("restore cpu affinity: %w", rerr)
	}
	return err
}

// startBound runs start on a thread of its own bound to cpus. The thread
// is retired afterwards (its goroutine ends locked), so no other goroutine
// ever runs on it, whatever its affinity was left as.
func startBound(cpus []int, start func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		done <- withAffinity(cpus, start)
	}()
	return <-done
}
