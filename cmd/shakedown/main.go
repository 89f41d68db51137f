// Command shakedown proves a MySQL-compatible database before you move to it.
package main

import (
	"context"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/shakedown/shakedown/internal/cli"
	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/ioloop"
	_ "github.com/shakedown/shakedown/internal/workload/all"
)

func main() {
	// A benchmark's baseline: the I/O loops wait the ordinary way,
	// giving their processor away (see ioloop.HoldProcessor).
	if os.Getenv("SHAKEDOWN_IOLOOP_HOLD") == "off" {
		ioloop.HoldProcessor = false
	}
	// How many replies a loop turns into statements at once (see
	// ioloop.Burst), for a benchmark that compares bursts.
	if n, err := strconv.Atoi(os.Getenv("SHAKEDOWN_IOLOOP_BURST")); err == nil && n > 0 {
		ioloop.Burst = n
	}
	// How many loops a run with loops makes, in place of the rule (see
	// client.LoopCount), for a benchmark that compares loop counts.
	if n, err := strconv.Atoi(os.Getenv("SHAKEDOWN_IOLOOP_LOOPS")); err == nil && n > 0 {
		client.LoopCount = n
	}
	// Whether held loops are bound to CPUs, in place of the rule (see
	// client.BindLoops), for a benchmark that compares the two.
	if v := os.Getenv("SHAKEDOWN_IOLOOP_BIND"); v == "on" || v == "off" {
		client.BindLoops = v
	}
	// Whether held loops are watched (and wait with no timeout), in place
	// of the rule (see ioloop.Watch), for a benchmark that compares the two.
	if v := os.Getenv("SHAKEDOWN_IOLOOP_WATCH"); v == "on" || v == "off" {
		ioloop.Watch = v
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, &cli.Env{
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Getenv: os.Getenv,
		Notify: notify,
	}, os.Args[1:])
	stop()
	os.Exit(code)
}

// notify relays sig on a channel of its own until stop.
func notify(sig ...os.Signal) (<-chan os.Signal, func()) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, sig...)
	return c, func() { signal.Stop(c) }
}
