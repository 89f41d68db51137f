package runner_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/client/fakeconn"
	"github.com/shakedown/shakedown/internal/clock"
	"github.com/shakedown/shakedown/internal/runner"
)

// A server that goes away mid-run: the run reconnects until --time, and
// says for how long the server could not be reached, how many attempts to
// reconnect failed, and the first failure. A connection that is lost but
// opens again at once is not an outage.
func TestServerDownIsDegraded(t *testing.T) {
	cases := []struct {
		name       string
		upAt       float64 // seconds; 0: never back
		degraded   bool
		down       [2]time.Duration // bounds of the time unavailable
		reconnects bool
	}{
		{"back at 3s", 3, true, [2]time.Duration{1500 * time.Millisecond, 2 * time.Second}, true},
		{"never back", 0, true, [2]time.Duration{2490 * time.Millisecond, 2500 * time.Millisecond}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			simulate(t, func(ctx context.Context, clk *clock.Fake) {
				srv := &fakeconn.Server{Latency: time.Millisecond}
				cfg := config(srv, clk, 2)
				cfg.Time = 4 * time.Second
				cfg.Interval = 500 * time.Millisecond
				cfg.OnInterval = func(iv runner.Interval) {
					switch {
					case iv.AtS == 1.5:
						srv.Down()
					case iv.AtS == tc.upAt:
						srv.Up()
					}
				}
				o, err := runner.Run(ctx, cfg, oneStatement{"SELECT 1"})
				if err != nil {
					t.Fatal(err)
				}
				a := o.Availability
				if o.Degraded() != tc.degraded || a.ReconnectFailures == 0 || a.ReconnectAttempts < a.ReconnectFailures {
					t.Errorf("got degraded %v with %d attempts, %d failed; want %v and failures counted", o.Degraded(), a.ReconnectAttempts, a.ReconnectFailures, tc.degraded)
				}
				if a.Unavailable < tc.down[0] || a.Unavailable > tc.down[1] {
					t.Errorf("unavailable for %v, want between %v and %v", a.Unavailable, tc.down[0], tc.down[1])
				}
				if a.FirstError == nil || !strings.Contains(a.FirstError.Error(), "refused") {
					t.Errorf("first error: got %v, want the refused connect", a.FirstError)
				}
				if (o.Reconnects > 0) != tc.reconnects {
					t.Errorf("got %d reconnects, want some: %v", o.Reconnects, tc.reconnects)
				}
				if o.Err != nil || o.Elapsed < 3900*time.Millisecond || o.Elapsed > 4*time.Second {
					t.Errorf("got err %v after %v, want the run to go on until --time, and no longer", o.Err, o.Elapsed)
				}
			})
		})
	}
}

func TestLostConnectionIsNotAnOutage(t *testing.T) {
	simulate(t, func(ctx context.Context, clk *clock.Fake) {
		cfg := config(&fakeconn.Server{Latency: time.Millisecond, Handle: failEvery(50, fakeconn.ErrLost)}, clk, 2)
		cfg.Time = time.Second
		o, err := runner.Run(ctx, cfg, oneStatement{"SELECT 1"})
		if err != nil {
			t.Fatal(err)
		}
		a := o.Availability
		if o.Degraded() || o.Reconnects == 0 || a.ReconnectAttempts != o.Reconnects || a.Unavailable != 0 {
			t.Errorf("got degraded %v, %d reconnects, %+v; want reconnects that all worked at once", o.Degraded(), o.Reconnects, a)
		}
	})
}

func TestPerEventConnectOutage(t *testing.T) {
	simulate(t, func(ctx context.Context, clk *clock.Fake) {
		srv := &fakeconn.Server{Latency: time.Millisecond}
		cfg := config(srv, clk, 1)
		cfg.Time = 2 * time.Second
		cfg.Interval = 500 * time.Millisecond
		cfg.ConnectMode = runner.PerEvent
		cfg.OnInterval = func(iv runner.Interval) {
			switch iv.AtS {
			case 0.5:
				srv.Down()
			case 1:
				srv.Up()
			}
		}
		o, err := runner.Run(ctx, cfg, oneStatement{"SELECT 1"})
		if err != nil {
			t.Fatal(err)
		}
		a := o.Availability
		if !o.Degraded() || a.Unavailable < 400*time.Millisecond || a.Unavailable > 700*time.Millisecond {
			t.Errorf("got degraded %v, unavailable %v; want about 0.5s", o.Degraded(), a.Unavailable)
		}
	})
}
