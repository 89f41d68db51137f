//go:build !linux

package sandbox

import "errors"

// allowedCPUs is unknown outside Linux: --cpus finds no CPU.
func allowedCPUs() []int { return nil }

func withAffinity(cpus []int, start func() error) error {
	return errors.New("bind to cpus: CPU affinity is only set on Linux")
}

func startBound(cpus []int, start func() error) error { return withAffinity(cpus, start) }
