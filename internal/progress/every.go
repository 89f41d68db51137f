package progress

import (
	"context"
	"time"
)

// Every calls f every d on a goroutine of its own, so that a status line
// moves while the work it describes is quiet, until stop is called or ctx
// ends. stop returns once the goroutine has ended: f does not run after it.
func Every(ctx context.Context, d time.Duration, f func()) (stop func()) {
	quit, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				f()
			}
		}
	}()
	return func() { close(quit); <-ended }
}
