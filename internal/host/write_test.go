package host

import (
	"bytes"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/golden"
)

// fixedFacts is a small fact set of a pinned server: every kind of row,
// and one unknown.
func fixedFacts() *Facts {
	return &Facts{Version: Version, Host: "db1", CollectedAt: fixedNow,
		Subject: Subject{PID: 4242, Sandbox: "pinned", DataDir: "/var/lib/mysql"},
		Facts: []Fact{
			{Name: "kernel.release", Group: "system", Kind: Setting, Value: "6.1.0-18-amd64"},
			{Name: "cpu.governor", Group: "cpu", Kind: Setting, Reason: "no cpufreq driver: the kernel does not scale CPU frequency here"},
			{Name: "process.cpus_allowed", Group: "process", Kind: Setting, Value: "0-3"},
			{Name: "cgroup.cpu.max", Group: "cgroup", Kind: Setting, Value: "max 100000"},
			{Name: "cgroup.cpuset.cpus.effective", Group: "cgroup", Kind: Setting, Value: "0-3"},
			{Name: "cgroup.cpu.nr_throttled", Group: "cgroup", Kind: Counter, Value: "0"},
			{Name: "mm.thp.enabled", Group: "memory", Kind: Setting, Value: "never"},
			{Name: "vm.swappiness", Group: "memory", Kind: Setting, Value: "1"},
			{Name: "disk.device", Group: "disk", Kind: Identity, Value: "nvme0n1"},
			{Name: "net.core.somaxconn", Group: "net", Kind: Setting, Value: "4096"},
		}}
}

// quotaFacts is fixedFacts with the server under a quota on every CPU
// instead of pinned to four.
func quotaFacts() *Facts {
	f := fixedFacts()
	f.Subject.Sandbox, f.Subject.PID = "quota", 4343
	f.Facts = append([]Fact(nil), f.Facts...)
	set := func(name, value, reason string) {
		for i := range f.Facts {
			if f.Facts[i].Name == name {
				f.Facts[i].Value, f.Facts[i].Reason = value, reason
			}
		}
	}
	set("process.cpus_allowed", "0-15", "")
	set("cgroup.cpuset.cpus.effective", "0-15", "")
	set("cgroup.cpu.max", "400000 100000 (4 CPUs)", "")
	set("cgroup.cpu.nr_throttled", "5120", "")
	set("mm.thp.enabled", "always", "")
	set("disk.device", "sda", "")
	set("net.core.somaxconn", "", "permission denied reading /proc/sys/net/core/somaxconn")
	return f
}

func TestWriteTextGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteText(&b, fixedFacts()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "facts.txt", b.Bytes())
}

func TestWriteDiffTextGolden(t *testing.T) {
	sets := []*Facts{fixedFacts(), quotaFacts()}
	var b bytes.Buffer
	if err := WriteDiffText(&b, sets, Compare(sets, false)); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "diff.txt", b.Bytes())
}

// TestCompareCpusetAndQuota: two servers, one pinned and one under a
// quota, differ in their cpuset and cpu.max, and the diff names both,
// explains them, and counts them; the throttling counter, the device name
// and a row one host could not read do not count.
func TestCompareCpusetAndQuota(t *testing.T) {
	diffs := Compare([]*Facts{fixedFacts(), quotaFacts()}, false)
	byName := map[string]Difference{}
	for _, d := range diffs {
		byName[d.Name] = d
	}
	cases := []struct {
		name    string
		counts  bool
		listed  bool
		explain string
	}{
		{"cgroup.cpu.max", true, true, "CPU quota"},
		{"cgroup.cpuset.cpus.effective", true, true, "CPUs the server's cgroup may use"},
		{"process.cpus_allowed", true, true, "CPUs the server may run on"},
		{"mm.thp.enabled", true, true, "transparent huge pages"},
		{"cgroup.cpu.nr_throttled", false, true, ""},
		{"net.core.somaxconn", false, true, ""},
		{"disk.device", false, false, ""},
		{"vm.swappiness", false, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := byName[tc.name]
			if ok != tc.listed {
				t.Fatalf("listed: got %v, want %v", ok, tc.listed)
			}
			if !ok {
				return
			}
			if d.Counts() != tc.counts {
				t.Errorf("counts as a difference: got %v, want %v", d.Counts(), tc.counts)
			}
			if tc.explain != "" && (d.Explanation == nil || !strings.Contains(d.Explanation.What, tc.explain)) {
				t.Errorf("explanation: got %+v, want one saying %q", d.Explanation, tc.explain)
			}
		})
	}
	if d := byName["mm.thp.enabled"]; d.Explanation == nil || !d.Explanation.Disputed {
		t.Errorf("THP: got %+v, want it marked as disputed", d.Explanation)
	}
	if d := byName["cgroup.cpu.max"]; d.Values[0] != "max 100000" || d.Values[1] != "400000 100000 (4 CPUs)" {
		t.Errorf("cpu.max values: got %q, want max against the 4-CPU quota", d.Values)
	}
	// The governor, unknown on both, has nothing to compare.
	if got := Compare([]*Facts{fixedFacts(), fixedFacts()}, false); len(got) != 0 {
		t.Errorf("a host against itself: got %+v, want no difference", got)
	}
}

// TestCompareLeavesOutUsage: the CPU time a cgroup used (the host's, when
// both servers sit in the root cgroup) differs on any two reads and is no
// difference of configuration: it is never listed, not even with all; a
// throttling counter still is.
func TestCompareLeavesOutUsage(t *testing.T) {
	a, b := fixedFacts(), quotaFacts()
	a.Facts = append(a.Facts, Fact{Name: "cgroup.cpu.usage_usec", Group: "cgroup", Kind: Counter, Value: "81234567"},
		Fact{Name: "cgroup.cpu.nr_periods", Group: "cgroup", Kind: Counter, Value: "10"})
	b.Facts = append(b.Facts, Fact{Name: "cgroup.cpu.usage_usec", Group: "cgroup", Kind: Counter, Value: "81299999"},
		Fact{Name: "cgroup.cpu.nr_periods", Group: "cgroup", Kind: Counter, Value: "12"})
	for _, all := range []bool{false, true} {
		listed := map[string]bool{}
		for _, d := range Compare([]*Facts{a, b}, all) {
			listed[d.Name] = true
		}
		for _, name := range []string{"cgroup.cpu.usage_usec", "cgroup.cpu.nr_periods"} {
			if listed[name] {
				t.Errorf("all=%v: got %s listed, want it left out (a usage counter)", all, name)
			}
		}
		if !listed["cgroup.cpu.nr_throttled"] {
			t.Errorf("all=%v: got cgroup.cpu.nr_throttled left out, want it listed", all)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, fixedFacts()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "facts.json", b.Bytes())
	f, err := ReadJSON(bytes.NewReader(b.Bytes()), "facts.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := Compare([]*Facts{fixedFacts(), f}, true); len(got) == 0 || !got[0].Equal {
		t.Errorf("read back: got %+v, want every fact equal", got)
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"other version", `{"version":2,"facts":[{"name":"a","value":"1"}]}`, "version 2, want 1"},
		{"no facts", `{"version":1,"facts":[]}`, "holds no facts"},
		{"not JSON", `hello`, "not a host facts file"},
		{"row without value", `{"version":1,"facts":[{"name":"a"}]}`, "neither value nor reason"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadJSON(strings.NewReader(tc.doc), "x.json")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "x.json") {
				t.Errorf("got %v, want an error naming x.json and saying %q", err, tc.want)
			}
		})
	}
}
