package host

import (
	"testing"
	"time"
)

func TestParseCgroupCPUStat(t *testing.T) {
	v2 := ParseCPUStat("usage_usec 100\nnr_periods 40\nnr_throttled 12\nthrottled_usec 3500\n")
	if v2 != (CPUStat{Periods: 40, Throttled: 12, ThrottledTime: 3500 * time.Microsecond, HasPeriods: true}) {
		t.Errorf("v2: got %+v", v2)
	}
	v1 := ParseCPUStat("nr_periods 7\nnr_throttled 2\nthrottled_time 5000\n")
	if v1 != (CPUStat{Periods: 7, Throttled: 2, ThrottledTime: 5000, HasPeriods: true}) {
		t.Errorf("v1: got %+v", v1)
	}
	if none := ParseCPUStat("usage_usec 9\n"); none.HasPeriods {
		t.Errorf("no cpu controller: got %+v, want no periods", none)
	}
}
