package result

import "testing"

func TestKernelOf(t *testing.T) {
	smp := func(at, elapsed, cs, swp, ovf float64) Sample {
		return Sample{AtS: at, ElapsedS: elapsed, Values: map[string]float64{
			"ctx_switches": cs, "swap_ins": swp, "syncookies_sent": 0, "listen_overflows": ovf, "listen_drops": ovf}}
	}
	tests := []struct {
		name string
		s    *Series
		want *KernelCounters
		line string
	}{
		{"no series", nil, nil, ""},
		{"no counters", &Series{Samples: []Sample{{AtS: 1, ElapsedS: 1, Values: map[string]float64{"qps": 5}}}}, nil, ""},
		{"warm-up left out, rates times seconds", &Series{Samples: []Sample{smp(-1, 1, 9e6, 900, 900), smp(1, 1, 1000, 0, 4), smp(3, 2, 4000, 0, 3)}},
			&KernelCounters{ContextSwitchesPerS: 3000, ListenOverflows: 10, ListenDrops: 10, Samples: 2},
			"3000 context switches/s; 10 listen-queue overflows, 10 listen drops (2 samples)"},
		{"all quiet", &Series{Samples: []Sample{smp(1, 1, 500, 0, 0)}},
			&KernelCounters{ContextSwitchesPerS: 500, Samples: 1},
			"500 context switches/s; no swap-ins, SYN cookies or listen-queue overflows (1 samples)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := KernelOf(tt.s)
			if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			if got != nil && got.Line() != tt.line {
				t.Errorf("line: got %q, want %q", got.Line(), tt.line)
			}
		})
	}
}
