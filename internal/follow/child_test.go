package follow

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/shakedown/shakedown/internal/target"
)

// childEnv, when set to "SOURCE TARGET", makes the test binary a follower
// process of its own that runs until it is killed or interrupted: the
// kill -9 tests start it, kill it and start it again.
const childEnv = "SHAKEDOWN_FOLLOW_CHILD"

func child() int {
	urls := strings.Fields(os.Getenv(childEnv))
	if len(urls) != 2 {
		fmt.Fprintln(os.Stderr, "child: want SOURCE TARGET in", childEnv)
		return 2
	}
	src, err := target.Parse(urls[0])
	if err == nil {
		var dst *target.Target
		if dst, err = target.Parse(urls[1]); err == nil {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			_, err = Run(ctx, src, dst, Options{AllowWrite: true, Workers: 3, Log: os.Stderr})
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	return 0
}
