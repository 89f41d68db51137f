package runspec

import (
	"reflect"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sbflag"
)

func TestArgs(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Spec)
		want []string
	}{
		{"defaults", func(*Spec) {}, []string{"ping", "--threads=1", "--time=10"}},
		{"threads and time always, the rest when changed, in the help's order",
			func(s *Spec) {
				s.Threads, s.TimeS, s.Events, s.Rate, s.Monitor, s.Stall, s.StallCooldown = 8, 10, 50, 12.5, false, "qps<50%", time.Minute+time.Second
				s.Rand.Type, s.Split.Segment = "uniform", "1/2"
			},
			[]string{"ping", "--threads=8", "--time=10", "--events=50", "--rate=12.5", "--monitor=off", "--stall=qps<50%", "--stall-cooldown=1m1s", "--rand-type=uniform", "--segment=1/2"}},
		{"options by name last, as given",
			func(s *Spec) {
				s.Conn = []Option{{"target", "mysql://u@h/db"}}
				s.Options = []Option{{"tables", "4"}, {"percentile", "99"}}
			},
			[]string{"ping", "--threads=1", "--time=10", "--target=mysql://u@h/db", "--tables=4", "--percentile=99"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New("ping")
			tc.edit(&s)
			if got := s.Args(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestNewDefaults: New holds the options' defaults, and Bind sets them
// again whatever the Spec held.
func TestNewDefaults(t *testing.T) {
	s := New("ping")
	if s.Workload != "ping" || s.Threads != 1 || s.TimeS != 10 || s.Percentile != 95 || !s.Monitor || s.PSMode != "auto" || s.Rand.Type != "special" {
		t.Errorf("got %+v, want the defaults", s)
	}
	s.Stall, s.Threads = "default", 9
	s.typed(sbflag.NewFlagSet("t"))
	if s.Stall != "" || s.Threads != 1 {
		t.Errorf("got stall %q threads %d after Bind, want the defaults", s.Stall, s.Threads)
	}
}
