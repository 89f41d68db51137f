package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/clock"
)

func serverErr(code uint16) error { return &mysql.MySQLError{Number: code, Message: "m"} }

var errRefused = fmt.Errorf("dial tcp: %w", syscall.ECONNREFUSED)

func TestParseIgnore(t *testing.T) {
	cases := []struct {
		in      string
		all     bool
		codes   []uint16
		wantErr string
	}{
		{"", false, nil, ""},
		{"none", false, nil, ""},
		{"all", true, nil, ""},
		{" ALL ", true, nil, ""},
		{"1213,1205", false, []uint16{1213, 1205}, ""},
		{"1213, 1020 ,1205", false, []uint16{1213, 1020, 1205}, ""},
		{"deadlock", false, nil, `--x: "deadlock" is not an error code`},
		{"70000", false, nil, `"70000" is not an error code`},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			p, err := ParseIgnore("--x", tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.IgnoreAll != tc.all || len(p.Ignore) != len(tc.codes) {
				t.Errorf("got all %v codes %v, want %v %v", p.IgnoreAll, p.Ignore, tc.all, tc.codes)
			}
			for _, c := range tc.codes {
				if !p.Ignored(c) {
					t.Errorf("code %d: got not ignored, want ignored", c)
				}
			}
		})
	}
}

func TestOnStatement(t *testing.T) {
	run := Policy{Ignore: map[uint16]bool{1213: true}, ReconnectLost: true}
	slap := Policy{Ignore: map[uint16]bool{1213: true, 2013: true}}
	strict := Policy{}
	cases := []struct {
		name   string
		p      Policy
		err    error
		broken bool
		want   Action
	}{
		{"run: ignored", run, serverErr(1213), false, Retry},
		{"run: ignored on a broken connection", run, serverErr(1213), true, Reconnect},
		{"run: not ignored", run, serverErr(1146), false, Fail},
		{"run: lost", run, serverErr(2013), true, Reconnect},
		{"run: reset", run, syscall.ECONNRESET, true, Reconnect},
		{"run: missing tables", run, ErrMissingTables, false, Fail},
		{"run: not a server error", run, errors.New("wire: more placeholders than arguments"), false, Fail},
		{"slap: lost, ignored", slap, serverErr(2013), true, Reconnect},
		{"slap: lost, not ignored", strict, serverErr(2013), true, Fail},
		{"all: code 0 is not ignored", Policy{IgnoreAll: true}, errors.New("boom"), false, Fail},
		// A Galera node out of the primary component: the client goes on
		// through another connection, under either tool's rules.
		{"run: not in the primary component", run, &mysql.MySQLError{Number: 1180, Message: "Got error 6 \"No such device or address\" during COMMIT: Not connected to Primary Component"}, false, Reconnect},
		{"slap: not in the primary component", strict, &mysql.MySQLError{Number: 1180, Message: "Not connected to Primary Component"}, false, Reconnect},
		{"slap: node not yet synced", strict, serverErr(1047), false, Reconnect},
		{"slap: another failed commit", strict, &mysql.MySQLError{Number: 1180, Message: "Got error 4 during COMMIT"}, false, Fail},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.OnStatement(tc.err, tc.broken); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestOnConnect(t *testing.T) {
	run := Policy{Ignore: map[uint16]bool{1040: true}}
	slap := Policy{RetryConnect: true}
	cases := []struct {
		name string
		p    Policy
		err  error
		want Action
	}{
		{"refused", run, errRefused, Retry},
		{"access denied", Policy{IgnoreAll: true, RetryConnect: true}, serverErr(1045), Fail},
		{"no database", slap, serverErr(1049), Fail},
		{"too many connections, ignored", run, serverErr(1040), Retry},
		{"too many connections", Policy{}, serverErr(1040), Fail},
		{"too many connections, mysqlslap", slap, serverErr(1040), Retry},
		{"missing tables", slap, fmt.Errorf("thread 1: %w", ErrMissingTables), Fail},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.OnConnect(tc.err); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRedial(t *testing.T) {
	cases := []struct {
		name     string
		p        Policy
		b        Backoff
		fails    int   // attempts that fail before one succeeds
		err      error // how they fail
		attempts int
		spent    time.Duration // in milliseconds
		want     string        // "" connected, or part of the error
	}{
		{"at once", Policy{}, Backoff{First: time.Second, Max: time.Second}, 0, errRefused, 1, 0, ""},
		{"after pauses", Policy{}, Backoff{First: 10 * time.Millisecond, Max: 40 * time.Millisecond}, 4, errRefused, 5, 10 + 20 + 40 + 40, ""},
		{"attempts used up", Policy{RetryConnect: true}, Backoff{First: 100 * time.Millisecond, Max: 100 * time.Millisecond, Attempts: 10}, 99, serverErr(1040), 10, 900, "could not connect in 10 attempts over 900ms"},
		{"time used up", Policy{}, Backoff{First: time.Second, Max: time.Second, Within: 5 * time.Second}, 99, errRefused, 6, 5000, "could not connect in 6 attempts"},
		{"final at once", Policy{}, Backoff{First: time.Second, Max: time.Second}, 99, serverErr(1045), 1, 0, "Error 1045"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				clk := clock.Real{} // inside the bubble, time is synctest's
				start := clk.Now()
				n, failed := 0, 0
				err := tc.p.Redial(context.Background(), clk, tc.b, nil, func(context.Context) error {
					if n++; n <= tc.fails {
						return tc.err
					}
					return nil
				}, func(error) { failed++ })
				if n != tc.attempts || failed != min(tc.fails, tc.attempts) {
					t.Errorf("got %d attempts (%d failed), want %d", n, failed, tc.attempts)
				}
				if spent := clk.Now().Sub(start); spent != tc.spent*time.Millisecond {
					t.Errorf("spent %v, want %v", spent, tc.spent*time.Millisecond)
				}
				switch {
				case tc.want == "" && err != nil:
					t.Errorf("got %v, want connected", err)
				case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
					t.Errorf("got %v, want %q", err, tc.want)
				}
			})
		})
	}
}

func TestRedialStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		n := 0
		err := Policy{}.Redial(ctx, clock.Real{}, Backoff{First: time.Second, Max: time.Second}, nil, func(context.Context) error {
			if n++; n == 3 {
				cancel()
			}
			return errRefused
		}, nil)
		if !errors.Is(err, ErrStopped) || n != 3 {
			t.Errorf("got %v after %d attempts, want ErrStopped after 3", err, n)
		}
		stop := true
		if err := (Policy{}).Redial(context.Background(), clock.Real{}, Backoff{}, func() bool { return stop }, nil, nil); !errors.Is(err, ErrStopped) {
			t.Errorf("stopped before the first attempt: got %v, want ErrStopped", err)
		}
	})
}

// A timed run stops reconnecting at its end, not a pause later.
func TestRedialUntil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real{}
		start := clk.Now()
		n := 0
		err := Policy{}.Redial(context.Background(), clk, Backoff{First: time.Second, Max: time.Second, Until: start.Add(2500 * time.Millisecond)}, nil,
			func(context.Context) error { n++; return errRefused }, nil)
		if !errors.Is(err, ErrStopped) || n != 3 {
			t.Errorf("got %v after %d attempts, want ErrStopped after 3", err, n)
		}
		if spent := clk.Now().Sub(start); spent != 2500*time.Millisecond {
			t.Errorf("stopped after %v, want 2.5s", spent)
		}
	})
}
