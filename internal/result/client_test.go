package result

import "testing"

// TestClientIOString: the words a run's header gives its client I/O, in
// the singular for one loop.
func TestClientIOString(t *testing.T) {
	for _, tc := range []struct {
		io   ClientIO
		want string
	}{
		{ClientIO{Asked: "blocking", Mode: "blocking"}, "blocking reads, a goroutine a thread (--client-io blocking)"},
		{ClientIO{Asked: "polled", Mode: "polled"}, "Go's poller, a goroutine a thread (--client-io polled)"},
		{ClientIO{Asked: "auto", Mode: "loop", Loops: 1, Held: true}, "1 I/O loop, holding its processor (--client-io auto)"},
		{ClientIO{Asked: "loop", Mode: "loop", Loops: 1, Held: true, BoundToCPUs: true}, "1 I/O loop, holding its processor, bound to a CPU (--client-io loop)"},
		{ClientIO{Asked: "auto", Mode: "loop", Loops: 16, Held: true, BoundToCPUs: true}, "16 I/O loops, holding their processors, each bound to a CPU (--client-io auto)"},
		{ClientIO{Asked: "auto", Mode: "loop", Loops: 2}, "2 I/O loops (--client-io auto)"},
		{ClientIO{Asked: "auto", Mode: "loop", Loops: 8, Held: true, Tuning: &IOTuning{Loops: 8, Bind: "off"}},
			"8 I/O loops, holding their processors (--client-io auto; tuned: loops 8, bind off)"},
		{ClientIO{Asked: "loop", Mode: "loop", Loops: 2, Held: true, Tuning: &IOTuning{Burst: 32, Watch: "on", Hold: "off"}},
			"2 I/O loops, holding their processors (--client-io loop; tuned: burst 32, watch on, hold off)"},
	} {
		if got := tc.io.String(); got != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.io, got, tc.want)
		}
	}
}
