package progress

import (
	"strings"
	"testing"
	"time"
)

func TestLine(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		live  bool
		steps func(l *Line, at *time.Time)
		want  string
	}{
		{"live rewrites in place and clears", true, func(l *Line, at *time.Time) {
			l.Set("a")
			l.Set("b")
			l.Println("kept")
			l.Set("c")
			l.Clear()
		}, "\r\033[Ka\r\033[Kb\r\033[Kkept\n\r\033[Kc\r\033[K"},
		{"plain writes at most once per interval", false, func(l *Line, at *time.Time) {
			l.Set("too soon")
			*at = at.Add(10 * time.Second)
			l.Set("first")
			*at = at.Add(time.Second)
			l.Set("skipped")
			l.Println("kept")
			*at = at.Add(9 * time.Second)
			l.Set("second")
			l.Clear()
		}, "first\nkept\nsecond\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			at := t0
			l := New(&b, tc.live, 10*time.Second, func() time.Time { return at })
			tc.steps(l, &at)
			if got := b.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	var nothing *Line
	nothing.Set("x") // a nil line is silent, not a panic
	nothing.Println("x")
	nothing.Clear()
}

func TestClock(t *testing.T) {
	tests := []struct {
		name string
		d    time.Duration
		want string
	}{
		{"zero", 0, "0:00"},
		{"a minute and a second", 61 * time.Second, "1:01"},
		{"rounds up to the hour", 59*time.Minute + 59600*time.Millisecond, "1:00:00"},
		{"hours", 2*time.Hour + 3*time.Minute + 4*time.Second, "2:03:04"},
		{"negative is zero", -5 * time.Second, "0:00"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Clock(tc.d); got != tc.want {
				t.Errorf("Clock(%s): got %s, want %s", tc.d, got, tc.want)
			}
		})
	}
}

func TestLeftAndClock(t *testing.T) {
	tests := []struct {
		name        string
		done, total int64
		elapsed     time.Duration
		want        string
		ok          bool
	}{
		{"a quarter in 10s", 25, 100, 10 * time.Second, "0:30", true},
		{"nothing done", 0, 100, 10 * time.Second, "0:00", false},
		{"all done", 100, 100, time.Minute, "0:00", true},
		{"hours", 1, 3, time.Hour, "2:00:00", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := Left(tc.done, tc.total, tc.elapsed)
			if got := Clock(d); got != tc.want || ok != tc.ok {
				t.Errorf("got %s, %v; want %s, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
