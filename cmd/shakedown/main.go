// Command shakedown proves a MySQL-compatible database before you move to it.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/shakedown/shakedown/internal/cli"
	_ "github.com/shakedown/shakedown/internal/workload/all"
)

func main() {
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
