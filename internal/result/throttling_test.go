package result

import "testing"

func TestThrottlingOf(t *testing.T) {
	smp := func(at, elapsed, ms, pct float64) Sample {
		return Sample{AtS: at, ElapsedS: elapsed, Values: map[string]float64{"throttled_ms": ms, "throttled_pct": pct}}
	}
	tests := []struct {
		name string
		s    *Series
		want *Throttling
	}{
		{"no series", nil, nil},
		{"no counters", &Series{Samples: []Sample{{AtS: 1, ElapsedS: 1, Values: map[string]float64{"qps": 5}}}}, nil},
		{"warm-up left out", &Series{Samples: []Sample{smp(-1, 1, 900, 90), smp(1, 1, 300, 50), smp(2.5, 1.5, 200, 30)}},
			&Throttling{ThrottledMS: 600, PeriodsPct: 40, Samples: 2}},
		{"no quota counts no periods", &Series{Samples: []Sample{{AtS: 1, ElapsedS: 1, Values: map[string]float64{"throttled_ms": 0}}}},
			&Throttling{Samples: 1, NoQuota: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ThrottlingOf(tt.s)
			if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
