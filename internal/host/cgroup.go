package host

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
)

// cgroupFacts: the server's cgroup CPU quota, cpuset, memory limit and
// throttling counters. cgroup v2 files are read where the unified
// hierarchy has them; v1 files (cpu.cfs_quota_us, cpuset.effective_cpus,
// memory.limit_in_bytes, cpuacct.usage) where it does not, as on hosts
// that mount both.
func cgroupFacts(ctx context.Context, e *env) []Fact {
	settings := []string{"cgroup.cpu.max", "cgroup.cpuset.cpus.effective", "cgroup.memory.max"}
	counters := []string{"cgroup.cpu.nr_periods", "cgroup.cpu.nr_throttled", "cgroup.cpu.throttled_usec", "cgroup.cpu.usage_usec"}
	all := func(reason string) []Fact {
		return append(unknowns(settings, "cgroup", Setting, reason), unknowns(counters, "cgroup", Counter, reason)...)
	}
	if e.opts.PID <= 0 && e.r.remote == "" {
		return all(noProcess)
	}
	cgPath := fmt.Sprintf("/proc/%d/cgroup", e.opts.PID)
	cgText, reason := e.r.read(cgPath)
	if reason != "" {
		return all(reason)
	}
	mi, reason := e.r.read("/proc/self/mountinfo")
	if reason != "" {
		return all(reason)
	}
	cg := cgroups{lines: parseCgroupFile(cgText), mounts: parseMountinfo(mi), r: e.r}

	out := []Fact{cg.cpuMax(), cg.fact("cgroup.cpuset.cpus.effective", Setting, "cpuset.cpus.effective", "cpuset", "cpuset.effective_cpus", nil),
		cg.fact("cgroup.memory.max", Setting, "memory.max", "memory", "memory.limit_in_bytes", memoryMax)}
	// The unified hierarchy of a host that mounts both may hold a cpu.stat
	// with usage only, the cpu controller being bound to v1: each counter
	// comes from whichever version has it.
	v2stat, r2 := cg.read("cpu.stat", "", "")
	v1stat, r1 := cg.read("", "cpu", "cpu.stat")
	v2, v1 := parseKeyValues(v2stat, " "), parseKeyValues(v1stat, " ")
	reason = strings.Trim(r2+"; "+r1, "; ")
	for _, c := range []struct{ name, key, v1key string }{
		{"cgroup.cpu.nr_periods", "nr_periods", "nr_periods"},
		{"cgroup.cpu.nr_throttled", "nr_throttled", "nr_throttled"},
		{"cgroup.cpu.throttled_usec", "throttled_usec", "throttled_time"},
	} {
		val, ok := v2[c.key]
		if !ok {
			if val, ok = v1[c.v1key]; ok && c.v1key == "throttled_time" {
				val = nsToUsec(val) // v1 counts nanoseconds
			}
		}
		r := ""
		if !ok {
			r = "no " + c.key + " in the cgroup's cpu.stat (v2) nor " + c.v1key + " (v1)"
			if r1 != "" && r2 != "" {
				r = reason
			}
		}
		out = append(out, mk(c.name, "cgroup", Counter, val, r))
	}
	usage, ok := v2["usage_usec"]
	r := ""
	if !ok {
		var ns string
		ns, r = cg.read("", "cpuacct", "cpuacct.usage")
		usage = nsToUsec(ns)
	}
	return append(out, mk("cgroup.cpu.usage_usec", "cgroup", Counter, usage, r))
}

func nsToUsec(ns string) string {
	n, err := strconv.ParseUint(strings.TrimSpace(ns), 10, 64)
	if err != nil {
		return ns
	}
	return strconv.FormatUint(n/1000, 10)
}

// cgLine is one line of /proc/PID/cgroup: "ID:CONTROLLERS:PATH".
type cgLine struct {
	ID          string
	Controllers []string
	Path        string
}

// parseCgroupFile reads /proc/PID/cgroup.
func parseCgroupFile(s string) []cgLine {
	var out []cgLine
	for _, line := range strings.Split(s, "\n") {
		f := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(f) != 3 || !strings.HasPrefix(f[2], "/") {
			continue
		}
		var ctrl []string
		if f[1] != "" {
			ctrl = strings.Split(f[1], ",")
		}
		out = append(out, cgLine{ID: f[0], Controllers: ctrl, Path: f[2]})
	}
	return out
}

// mount is a cgroup file system from /proc/self/mountinfo.
type mount struct {
	Root, Point, FSType string
	Options             []string // super options: the v1 controllers
}

// parseMountinfo keeps the cgroup and cgroup2 mounts of a mountinfo file:
// "ID PARENT MAJ:MIN ROOT POINT OPTS [TAGS...] - FSTYPE SOURCE SUPEROPTS".
func parseMountinfo(s string) []mount {
	var out []mount
	for _, line := range strings.Split(s, "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		a, b := strings.Fields(pre), strings.Fields(post)
		if len(a) < 5 || len(b) < 1 || (b[0] != "cgroup" && b[0] != "cgroup2") {
			continue
		}
		m := mount{Root: a[3], Point: a[4], FSType: b[0]}
		if len(b) >= 3 {
			m.Options = strings.Split(b[2], ",")
		}
		out = append(out, m)
	}
	return out
}

// cgroups finds a process's cgroup directories.
type cgroups struct {
	lines  []cgLine
	mounts []mount
	r      reader
}

// dir returns the directory of the process's cgroup in the v2 hierarchy
// (controller "") or the v1 hierarchy of a controller.
func (c cgroups) dir(controller string) (string, bool) {
	for _, l := range c.lines {
		v2 := l.ID == "0" && len(l.Controllers) == 0
		if (controller == "") != v2 || (controller != "" && !slices.Contains(l.Controllers, controller)) {
			continue
		}
		for _, m := range c.mounts {
			if (controller == "" && m.FSType == "cgroup2") || (controller != "" && m.FSType == "cgroup" && slices.Contains(m.Options, controller)) {
				rel := strings.TrimPrefix(l.Path, m.Root)
				if m.Root != "/" && rel == l.Path {
					continue // the process's cgroup is not below this mount
				}
				return path.Join(m.Point, rel), true
			}
		}
	}
	return "", false
}

// read reads a file of the v2 cgroup (v2name), else of the v1 controller's
// cgroup (v1name); it says which version answered.
func (c cgroups) read(v2name, controller, v1name string) (string, string) {
	s, _, r := c.readV(v2name, controller, v1name)
	return s, r
}

// readV is read that also says which version answered (2 or 1).
func (c cgroups) readV(v2name, controller, v1name string) (string, int, string) {
	var reasons []string
	if d, ok := c.dir(""); ok && v2name != "" {
		if s, r := c.r.read(path.Join(d, v2name)); r == "" {
			return s, 2, ""
		} else {
			reasons = append(reasons, r)
		}
	}
	if d, ok := c.dir(controller); ok && controller != "" && v1name != "" {
		if s, r := c.r.read(path.Join(d, v1name)); r == "" {
			return s, 1, ""
		} else {
			reasons = append(reasons, r)
		}
	}
	if len(reasons) == 0 {
		return "", 0, fmt.Sprintf("the process is in no cgroup with %s (v2 file %s, v1 controller %s)", orNone(v2name, v1name), orNone(v2name, "-"), controller)
	}
	return "", 0, strings.Join(reasons, "; ")
}

func orNone(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// fact is a row read from a v2 file or its v1 counterpart, shaped by conv.
func (c cgroups) fact(name, kind, v2name, controller, v1name string, conv func(string) string) Fact {
	s, r := c.read(v2name, controller, v1name)
	if r == "" && conv != nil {
		s = conv(s)
	}
	return mk(name, "cgroup", kind, s, r)
}

// cpuMax is cpu.max ("QUOTA PERIOD", QUOTA "max" for none), from v1's
// cpu.cfs_quota_us (-1 for none) and cpu.cfs_period_us where v2 is absent.
func (c cgroups) cpuMax() Fact {
	const name = "cgroup.cpu.max"
	s, v, r := c.readV("cpu.max", "cpu", "cpu.cfs_quota_us")
	if r != "" {
		return unknown(name, "cgroup", Setting, r)
	}
	if v == 1 {
		period, r := c.read("", "cpu", "cpu.cfs_period_us")
		if r != "" {
			return unknown(name, "cgroup", Setting, r)
		}
		if strings.HasPrefix(s, "-") {
			s = "max"
		}
		s = s + " " + period
	}
	return mk(name, "cgroup", Setting, formatCPUMax(s), "")
}

// formatCPUMax adds the CPUs a quota amounts to: "200000 100000 (2 CPUs)".
func formatCPUMax(s string) string {
	f := strings.Fields(s)
	if len(f) != 2 || f[0] == "max" {
		return s
	}
	q, err1 := strconv.ParseFloat(f[0], 64)
	p, err2 := strconv.ParseFloat(f[1], 64)
	if err1 != nil || err2 != nil || p <= 0 {
		return s
	}
	return fmt.Sprintf("%s %s (%s CPUs)", f[0], f[1], strconv.FormatFloat(q/p, 'f', -1, 64))
}

// memoryMax writes v1's "no limit" (a page-rounded 2^63-1) as v2's "max".
func memoryMax(s string) string {
	n, err := strconv.ParseUint(s, 10, 64)
	if err == nil && n >= 1<<62 {
		return "max"
	}
	return s
}

// CgroupCounters reads the CPU counters of process pid's cgroup (the
// cgroup rows of kind Counter: nr_periods, nr_throttled, throttled_usec,
// usage_usec), keyed by their fact names, for a sampler to read once per
// interval. root is as Options.Root. It fails, saying why, only when none
// could be read.
func CgroupCounters(ctx context.Context, root string, pid int) (map[string]float64, error) {
	e := &env{opts: Options{Root: root, PID: pid}, r: reader{root: root}}
	out := map[string]float64{}
	var why []string
	for _, f := range cgroupFacts(ctx, e) {
		if f.Kind != Counter {
			continue
		}
		if !f.Known() {
			why = append(why, f.Name+": "+f.Reason)
			continue
		}
		if v, err := strconv.ParseFloat(f.Value, 64); err == nil {
			out[f.Name] = v
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("read cgroup counters: %s", strings.Join(why, "; "))
	}
	return out, nil
}
