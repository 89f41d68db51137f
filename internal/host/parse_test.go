package host

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "proc", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseKeyValuesStatus(t *testing.T) {
	st := parseKeyValues(readTestdata(t, "status"), ":")
	for _, tc := range []struct{ key, want string }{
		{"Cpus_allowed_list", "0-3"},
		{"Mems_allowed_list", "0"},
		{"Name", "mariadbd"},
		{"voluntary_ctxt_switches", "512"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			if got := st[tc.key]; got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseCPUStat(t *testing.T) {
	cases := []struct {
		file, key, want string
	}{
		{"cpu.stat_v2", "nr_throttled", "1200"},
		{"cpu.stat_v2", "throttled_usec", "9876543"},
		{"cpu.stat_v2", "usage_usec", "81234567"},
		{"cpu.stat_v1", "nr_periods", "700"},
		{"cpu.stat_v1", "throttled_time", "3000000000"},
	}
	for _, tc := range cases {
		t.Run(tc.file+"/"+tc.key, func(t *testing.T) {
			if got := parseKeyValues(readTestdata(t, tc.file), " ")[tc.key]; got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseLimits(t *testing.T) {
	got := parseLimits(readTestdata(t, "limits"))
	for _, tc := range []struct{ name, want string }{
		{"Max open files", "32768/65536"},
		{"Max processes", "63413/63413"},
		{"Max cpu time", "unlimited/unlimited"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got[tc.name] != tc.want {
				t.Errorf("got %q, want %q", got[tc.name], tc.want)
			}
		})
	}
	if _, ok := got["Limit"]; ok {
		t.Errorf("the header line was read as a limit: %v", got)
	}
}

func TestParseNumaMaps(t *testing.T) {
	m := parseNumaMaps(readTestdata(t, "numa_maps"))
	if m.Policy != "interleave:0-1" {
		t.Errorf("policy: got %q, want interleave:0-1 (three of four mappings)", m.Policy)
	}
	// 600+1500+500 pages on N0, 2000 on N1.
	if got, want := m.Spread(), "N0=57% N1=43%"; got != want {
		t.Errorf("spread: got %q, want %q", got, want)
	}
	if got := parseNumaMaps("").Spread(); got != "" {
		t.Errorf("empty numa_maps: got spread %q, want none", got)
	}
}

func TestParseCPUInfo(t *testing.T) {
	model, flags := parseCPUInfo(readTestdata(t, "cpuinfo"))
	if model != "Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz" {
		t.Errorf("model: got %q", model)
	}
	if len(flags) != 8 || flags[6] != "hypervisor" {
		t.Errorf("flags: got %v, want the first CPU's eight, hypervisor among them", flags)
	}
}

func TestParseCgroupFile(t *testing.T) {
	cases := []struct {
		file string
		want []cgLine
	}{
		{"cgroup_v2", []cgLine{{ID: "0", Path: "/db.slice/mariadb.service"}}},
		{"cgroup_v1", []cgLine{
			{"12", []string{"pids"}, "/mysql"}, {"5", []string{"cpu", "cpuacct"}, "/mysql"},
			{"4", []string{"cpuset"}, "/mysql"}, {"3", []string{"memory"}, "/mysql"},
			{"1", []string{"name=systemd"}, "/mysql"}, {"0", nil, "/"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			if got := parseCgroupFile(readTestdata(t, tc.file)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestCgroupDir(t *testing.T) {
	cases := []struct {
		name, cgroup, mountinfo, controller, want string
	}{
		{"v2 only", "cgroup_v2", "mountinfo_v2", "", "/sys/fs/cgroup/db.slice/mariadb.service"},
		{"v2 has no v1 controller", "cgroup_v2", "mountinfo_v2", "cpu", ""},
		{"hybrid v1 cpu", "cgroup_v1", "mountinfo_hybrid", "cpu", "/sys/fs/cgroup/cpu,cpuacct/mysql"},
		{"hybrid v1 cpuset", "cgroup_v1", "mountinfo_hybrid", "cpuset", "/sys/fs/cgroup/cpuset/mysql"},
		{"hybrid unified", "cgroup_v1", "mountinfo_hybrid", "", "/sys/fs/cgroup/unified"},
		{"hybrid pids not mounted", "cgroup_v1", "mountinfo_hybrid", "pids", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cg := cgroups{lines: parseCgroupFile(readTestdata(t, tc.cgroup)), mounts: parseMountinfo(readTestdata(t, tc.mountinfo))}
			got, _ := cg.dir(tc.controller)
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestMountSource(t *testing.T) {
	mi := readTestdata(t, "mountinfo_v2")
	for _, tc := range []struct{ dir, want string }{
		{"/var/lib/mysql/data", "/dev/nvme0n1p2"},
		{"/var/lib/mysql", "/dev/nvme0n1p2"},
		{"/var/lib/mysqlx", "/dev/vda1"},
		{"/home", "/dev/vda1"},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			if got := mountSource(mi, tc.dir); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSmallParsers(t *testing.T) {
	cases := []struct {
		name string
		got  any
		want any
	}{
		{"selected thp", first(parseSelected("always madvise [never]")), "never"},
		{"selected scheduler", first(parseSelected("none [mq-deadline] kyber bfq")), "mq-deadline"},
		{"selected, innermost", first(parseSelected("] a [[b] c")), "b"},
		{"selected none", first(parseSelected("none")), ""},
		{"cpu list", mustList("0-2,5,7-8"), []int{0, 1, 2, 5, 7, 8}},
		{"cpu list single", mustList("0"), []int{0}},
		{"cpu max quota", formatCPUMax("250000 100000"), "250000 100000 (2.5 CPUs)"},
		{"cpu max none", formatCPUMax("max 100000"), "max 100000"},
		{"memory v1 unlimited", memoryMax("9223372036854771712"), "max"},
		{"memory limit", memoryMax("8589934592"), "8589934592"},
		{"ns to usec", nsToUsec("3000000000"), "3000000"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !reflect.DeepEqual(tc.got, tc.want) {
				t.Errorf("got %v, want %v", tc.got, tc.want)
			}
		})
	}
	for _, bad := range []string{"3-1", "a", "1,,2", "-1"} {
		if _, err := ParseCPUList(bad); err == nil {
			t.Errorf("ParseCPUList(%q): got no error, want one", bad)
		}
	}
}

func first(s string, _ bool) string { return s }

func mustList(s string) []int {
	l, err := ParseCPUList(s)
	if err != nil {
		return nil
	}
	return l
}
