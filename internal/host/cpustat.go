package host

import (
	"strconv"
	"strings"
	"time"
)

// CPUStat is one reading of a cgroup's cpu.stat: its CPU quota's
// enforcement periods, those in which the quota ran out, and the time its
// threads were held off the CPU for it. HasPeriods is false where the file
// has no nr_periods (no cpu controller there).
type CPUStat struct {
	Periods, Throttled int64
	ThrottledTime      time.Duration
	HasPeriods         bool
}

// ParseCPUStat reads cpu.stat's text, cgroup v1 (throttled_time in ns) or
// v2 (throttled_usec); lines it does not know are left out.
func ParseCPUStat(text string) CPUStat {
	var s CPUStat
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "nr_periods":
			s.Periods, s.HasPeriods = n, true
		case "nr_throttled":
			s.Throttled = n
		case "throttled_time":
			s.ThrottledTime = time.Duration(n)
		case "throttled_usec":
			s.ThrottledTime = time.Duration(n) * time.Microsecond
		}
	}
	return s
}
