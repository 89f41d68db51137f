// Package bench turns a run into a job and carries it out: prepare, run
// or cleanup of one workload at one concurrency against one target. The
// run command, the sweep, capacity and bisect all go through here, so a
// step of a sweep means exactly what the same command line means.
//
// flags.go reads a sysbench-style command line into a runspec.Spec
// (ParseArgs, the one reader of argv), job.go makes a Job of a Spec (New),
// connect.go connects to the target and finds what it is, and run.go
// carries the job out.
package bench

import (
	"errors"

	"github.com/shakedown/shakedown/internal/usage"
)

// usagef is bad input: the caller exits with code 2.
var usagef = usage.Errorf

// ErrHelp is returned by ParseArgs (and Parse) when --help was asked for;
// the usage text has been written.
var ErrHelp = errors.New("help requested")

// ErrInterrupted means the context was cancelled before the job finished.
var ErrInterrupted = errors.New("interrupted")

// ErrDegraded means the server could not be reached for part of a run: what
// was measured is kept, marked degraded, but it measures no server.
var ErrDegraded = errors.New("run degraded")
