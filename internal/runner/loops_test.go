package runner_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/client/fakeconn"
	"github.com/shakedown/shakedown/internal/clock"
	"github.com/shakedown/shakedown/internal/ioloop"
	"github.com/shakedown/shakedown/internal/runner"
	"github.com/shakedown/shakedown/internal/wire"
	"github.com/shakedown/shakedown/internal/workload"
)

// TestThreadsRunAsThePlanSays: under a plan with loops every thread is a
// task of a loop from its connection on, and its pauses wait in the loop;
// under a plan without, a goroutine.
func TestThreadsRunAsThePlanSays(t *testing.T) {
	for _, tc := range []struct {
		name  string
		set   func(*runner.Config)
		tasks int64
	}{
		{"a plan with loops", func(c *runner.Config) {
			c.IO = client.IOPlan{Mode: "loop", IO: wire.Options{Looped: true}, Loops: 2}
		}, 3},
		{"a plan without loops", func(c *runner.Config) {
			c.IO = client.IOPlan{Mode: "blocking", IO: wire.Options{Blocking: true}}
		}, 0},
	} {
		srv := &fakeconn.Server{Latency: 100 * time.Microsecond}
		cfg := config(srv, clock.Real{}, 3)
		cfg.Events = 60
		tc.set(&cfg)
		var tasks atomic.Int64
		cfg.Connect = func(ctx context.Context, i int, counts *workload.Counts) (workload.Conn, error) {
			if ioloop.From(ctx) != nil {
				tasks.Add(1)
			}
			return srv.Connect(ctx, i, counts)
		}
		o, err := runner.Run(context.Background(), cfg, oneStatement{"SELECT 1"})
		if err != nil {
			t.Fatal(err)
		}
		if o.Events != 60 || tasks.Load() != tc.tasks {
			t.Errorf("%s: got %d events and %d threads dialled as tasks, want 60 and %d", tc.name, o.Events, tasks.Load(), tc.tasks)
		}
		if o.Err != nil {
			t.Errorf("%s: got %v, want no error", tc.name, o.Err)
		}
	}
}
