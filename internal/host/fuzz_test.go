package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seeds adds the testdata files as seeds of a fuzz target.
func seeds(f *testing.F, names ...string) {
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("testdata", "proc", n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
}

// FuzzCgroup: /proc/PID/cgroup and mountinfo text never panic the parsers,
// and a found directory is below the mount it came from.
func FuzzCgroup(f *testing.F) {
	seeds(f, "cgroup_v1", "cgroup_v2", "mountinfo_hybrid", "mountinfo_v2")
	mi, err := os.ReadFile("testdata/proc/mountinfo_hybrid")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, m := range [][]mount{parseMountinfo(string(mi)), parseMountinfo(s)} {
			cg := cgroups{lines: parseCgroupFile(s), mounts: m}
			for _, c := range []string{"", "cpu", "cpuset", "memory"} {
				d, ok := cg.dir(c)
				if ok && !strings.HasPrefix(d, "/") && !strings.HasPrefix(d, ".") {
					t.Errorf("dir(%q) = %q: not a path", c, d)
				}
			}
		}
		_ = mountSource(s, "/var/lib/mysql")
	})
}

// FuzzProcText: the /proc and /sys text parsers never panic, and what they
// return holds together.
func FuzzProcText(f *testing.F) {
	seeds(f, "status", "limits", "numa_maps", "cpuinfo", "cpu.stat_v1", "cpu.stat_v2")
	f.Add("0-3,8,10-11")
	f.Add("always [madvise] never")
	f.Fuzz(func(t *testing.T, s string) {
		_ = parseKeyValues(s, ":")
		_ = parseKeyValues(s, " ")
		for k, v := range parseLimits(s) {
			if !strings.Contains(v, "/") || !strings.HasPrefix(k, "Max ") {
				t.Errorf("limit %q = %q: want Max ... = soft/hard", k, v)
			}
		}
		m := parseNumaMaps(s)
		if sp := m.Spread(); sp != "" && !strings.HasPrefix(sp, "N") {
			t.Errorf("spread %q: want N<node>=<pct>%%", sp)
		}
		_, _ = parseCPUInfo(s)
		if l, err := ParseCPUList(s); err == nil && len(l) > 1<<17 {
			t.Errorf("cpu list of %d items from %d bytes", len(l), len(s))
		}
		if v, ok := parseSelected(s); ok && (v == "" || strings.ContainsAny(v, "[]")) {
			t.Errorf("selected %q from %q", v, s)
		}
		_ = formatCPUMax(s)
		_ = memoryMax(s)
	})
}
