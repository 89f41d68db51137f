package host

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// MaxCPU bounds CPU numbers: it is far above any machine's and keeps a
// typo such as 0-99999999 from building a huge list.
const MaxCPU = 8191

// ParseCPUList reads a CPU list as the kernel, taskset -c and cpuset files
// write it: "0-3,6,8-9". It returns the CPUs in order without repeats.
func ParseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("empty CPU list: want CPU numbers and ranges, e.g. 0-3 or 0,2")
	}
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := cpuNumber(lo, part)
		if err != nil {
			return nil, err
		}
		b := a
		if isRange {
			if b, err = cpuNumber(hi, part); err != nil {
				return nil, err
			}
			if b < a {
				return nil, fmt.Errorf("range %q runs backwards: write it low-high, e.g. %d-%d", part, b, a)
			}
		}
		for c := a; c <= b; c++ {
			seen[c] = true
		}
	}
	out := make([]int, 0, len(seen))
	for c := range seen {
		out = append(out, c)
	}
	sort.Ints(out)
	return out, nil
}

func cpuNumber(s, part string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a CPU number or range (e.g. 0-3 or 0,2)", part)
	}
	if n > MaxCPU {
		return 0, fmt.Errorf("CPU %d in %q: no machine has that many", n, part)
	}
	return n, nil
}
