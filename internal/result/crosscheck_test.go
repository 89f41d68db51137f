package result

import (
	"strings"
	"testing"
	"time"
)

func steadyIntervals(n int, qps float64) []Rate {
	ivs := make([]Rate, n)
	for i := range ivs {
		ivs[i] = Rate{At: time.Duration(i+1) * time.Second, QPS: qps}
	}
	return ivs
}

// swingingIntervals alternate between 0.6 and 1.4 times qps.
func swingingIntervals(n int, qps float64) []Rate {
	ivs := make([]Rate, n)
	for i := range ivs {
		f := 0.6
		if i%2 == 1 {
			f = 1.4
		}
		ivs[i] = Rate{At: time.Duration(i+1) * time.Second, QPS: qps * f}
	}
	return ivs
}

func seriesOf(start, step float64, qps ...float64) *Series {
	s := &Series{}
	for i, q := range qps {
		s.Samples = append(s.Samples, Sample{AtS: start + float64(i+1)*step, ElapsedS: step, Values: map[string]float64{"qps": q}})
	}
	return s
}

func TestCheckQPS(t *testing.T) {
	cases := []struct {
		name       string
		series     *Series
		intervals  []Rate
		mismatch   bool
		wantServer float64
		wantFrom   float64
		wantTo     float64
		wantNote   string // a part of the note, when set
	}{
		// Samples at -0.3+1k: the first and last straddle the edges and are
		// left out; the ramp (low figures) does not count.
		{"agree", seriesOf(-0.3, 1, 10, 1000, 1010, 990, 1000, 20), steadyIntervals(5, 1000), false, 1000, 0.7, 4.7, ""},
		{"within noise", seriesOf(0, 1, 1030, 1030), steadyIntervals(2, 1000), false, 1030, 0, 2, ""},
		{"another client", seriesOf(0, 1, 1300, 1300, 1300), steadyIntervals(3, 1000), true, 1300, 0, 3, ""},
		{"a proxy answers some", seriesOf(0, 1, 500, 500, 500), steadyIntervals(3, 1000), true, 500, 0, 3, ""},
		// Near idle, the two rates are too small to compare: not
		// "agree within 25%" when they are 0.01 and 0.57 a second.
		{"idle", seriesOf(0, 1, 1, 1), steadyIntervals(2, 0), false, 1, 0, 2, "too few statements"},
		{"near idle, far apart", seriesOf(0, 1, 0.57, 0.57), steadyIntervals(2, 0.01), false, 0.57, 0, 2, "too few statements"},
		// A load whose rate swings from second to second (CV about 40%):
		// 12% apart is within the blur of the sample edges, ...
		{"unsteady, 12% apart", seriesOf(0, 1, 1120, 1120, 1120, 1120), swingingIntervals(4, 1000), false, 1120, 0, 4, ""},
		// ... but a proxy answering half is not.
		{"unsteady, half missing", seriesOf(0, 1, 500, 500, 500, 500), swingingIntervals(4, 1000), true, 500, 0, 4, ""},
		// A steady load 12% apart is a mismatch.
		{"steady, 12% apart", seriesOf(0, 1, 1120, 1120, 1120), steadyIntervals(3, 1000), true, 1120, 0, 3, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cc := CheckQPS(tc.series, tc.intervals)
			if cc == nil {
				t.Fatal("got nil")
			}
			if cc.Mismatch != tc.mismatch || cc.ServerQPS != tc.wantServer || cc.FromS != tc.wantFrom || cc.ToS != tc.wantTo {
				t.Errorf("got %+v, want mismatch=%v server=%g over %g-%g", cc, tc.mismatch, tc.wantServer, tc.wantFrom, tc.wantTo)
			}
			if cc.Note == "" || !strings.Contains(cc.Note, tc.wantNote) {
				t.Errorf("got note %q, want one with %q", cc.Note, tc.wantNote)
			}
		})
	}
	if cc := CheckQPS(seriesOf(-0.5, 1, 100), steadyIntervals(1, 100)); cc == nil || cc.ClientQPS != 0 || cc.Mismatch {
		t.Errorf("too short: got %+v, want a note and no figures", cc)
	}
	if cc := CheckQPS(nil, steadyIntervals(1, 100)); cc != nil {
		t.Errorf("no series: got %+v, want nil", cc)
	}
}
