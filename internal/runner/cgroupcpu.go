package runner

import (
	"bufio"
	"bytes"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/host"
)

// cpuThrottle is one reading of a cgroup's cpu.stat: its quota's
// enforcement periods, those in which the quota ran out, and the time its
// threads were held off the CPU for it.
type cpuThrottle struct {
	periods, throttledPeriods int64
	throttled                 time.Duration
}

// cgroupThrottles reads cpu.stat of the process's cgroup and of each of
// its ancestors (a quota may be set on any: a container's, above the
// process's own), by directory; empty where none can be read. Both cgroup
// v2 (the "0::" line of /proc/self/cgroup, throttled_usec) and v1 (the cpu
// controller's line, throttled_time in nanoseconds) are read.
func cgroupThrottles(fsys fs.FS) map[string]cpuThrottle {
	b, err := fs.ReadFile(fsys, "proc/self/cgroup")
	if err != nil {
		return nil
	}
	out := map[string]cpuThrottle{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), ":", 3)
		if len(f) != 3 {
			continue
		}
		root := ""
		switch {
		case f[0] == "0" && f[1] == "":
			root = "sys/fs/cgroup"
		case hasController(f[1], "cpu"):
			root = "sys/fs/cgroup/" + f[1]
		default:
			continue
		}
		for dir := path.Clean("/" + f[2]); ; dir = path.Dir(dir) {
			name := path.Clean(root + dir)
			if t, ok := readCPUStat(fsys, name+"/cpu.stat"); ok {
				out[name] = t
			}
			if dir == "/" {
				break
			}
		}
	}
	return out
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// readCPUStat reads one cpu.stat; false when it cannot be read or holds
// no periods field (no cpu controller there).
func readCPUStat(fsys fs.FS, name string) (cpuThrottle, bool) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return cpuThrottle{}, false
	}
	c := host.ParseCPUStat(string(b))
	return cpuThrottle{periods: c.Periods, throttledPeriods: c.Throttled, throttled: c.ThrottledTime}, c.HasPeriods
}

// throttledSince is the throttling between two readings: that of the
// cgroup that was held off the CPU longest.
func throttledSince(before, after map[string]cpuThrottle) (throttled time.Duration, periods, throttledPeriods int64) {
	for name, a := range after {
		b, ok := before[name]
		if !ok {
			continue
		}
		if d := a.throttled - b.throttled; d > throttled || throttled == 0 && a.periods > b.periods && periods == 0 {
			throttled, periods, throttledPeriods = max(d, 0), max(a.periods-b.periods, 0), max(a.throttledPeriods-b.throttledPeriods, 0)
		}
	}
	return throttled, periods, throttledPeriods
}
