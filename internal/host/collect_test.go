package host

import (
	"context"
	"strings"
	"testing"
	"time"
)

var fixedNow = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// collectTree collects from the copied /proc and /sys under testdata/root.
func collectTree(t *testing.T, opts Options) *Facts {
	t.Helper()
	opts.Root, opts.Now, opts.Hostname = "testdata/root", fixedNow, "db1"
	return Collect(context.Background(), opts)
}

func TestCollectTree(t *testing.T) {
	cases := []struct {
		name string
		pid  int
		want map[string]string // fact: value, or "?" and a reason's start
	}{
		{"cgroup v2", 4242, map[string]string{
			"kernel.release":               "6.1.0-18-amd64",
			"virtualisation":               "virtual machine (xen)",
			"cpu.model":                    "Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz",
			"cpu.vulnerability.spectre_v2": "Mitigation: Enhanced IBRS",
			"cpu.governor":                 "performance,powersave",
			"numa.nodes":                   "0-1",
			"numa.distances":               "node0: 10 21; node1: 21 10",
			"kernel.numa_balancing":        "1",
			"process.cpus_allowed":         "0-3",
			"process.mems_allowed":         "0",
			"process.mempolicy":            "interleave:0-1",
			"process.numa_spread":          "N0=57% N1=43%",
			"process.limit.open_files":     "32768/65536",
			"process.limit.processes":      "63413/63413",
			"process.oom_score_adj":        "-600",
			"cgroup.cpu.max":               "200000 100000 (2 CPUs)",
			"cgroup.cpuset.cpus.effective": "0-3",
			"cgroup.memory.max":            "8589934592",
			"cgroup.cpu.nr_throttled":      "1200",
			"cgroup.cpu.throttled_usec":    "9876543",
			"cgroup.cpu.usage_usec":        "81234567",
			"mm.thp.enabled":               "never",
			"mm.thp.defrag":                "madvise",
			"vm.swappiness":                "1",
			"net.ipv4.tcp_rmem":            "4096 131072 6291456",
			"net.ipv4.ip_local_port_range": "32768 60999",
			"net.ipv4.tcp_syncookies":      "?absent on this kernel: no /proc/sys/net/ipv4/tcp_syncookies",
			"fs.aio-max-nr":                "1048576",
			"disk.scheduler":               "?datadir not known",
			"mysql.back_log":               "?no target",
		}},
		{"cgroup v1 beside an empty unified hierarchy", 4243, map[string]string{
			"cgroup.cpu.max":               "150000 100000 (1.5 CPUs)",
			"cgroup.cpuset.cpus.effective": "2-3",
			"cgroup.memory.max":            "max",
			"cgroup.cpu.nr_periods":        "700",
			"cgroup.cpu.nr_throttled":      "20",
			"cgroup.cpu.throttled_usec":    "3000000",
			"cgroup.cpu.usage_usec":        "5000",
		}},
		{"no process", 0, map[string]string{
			"process.cpus_allowed": "?no server process named",
			"cgroup.cpu.max":       "?no server process named",
			"vm.swappiness":        "1",
		}},
		{"process gone", 99999, map[string]string{
			"process.cpus_allowed": "?absent on this kernel: no /proc/99999/status",
			"cgroup.cpu.max":       "?absent on this kernel: no /proc/99999/cgroup",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := collectTree(t, Options{PID: tc.pid})
			for name, want := range tc.want {
				got, ok := f.Get(name)
				switch {
				case !ok:
					t.Errorf("%s: got no row, want %q", name, want)
				case strings.HasPrefix(want, "?"):
					if got.Known() || !strings.HasPrefix(got.Reason, want[1:]) {
						t.Errorf("%s: got value %q reason %q, want unknown because %q", name, got.Value, got.Reason, want[1:])
					}
				case got.Value != want:
					t.Errorf("%s: got %q (reason %q), want %q", name, got.Value, got.Reason, want)
				}
			}
		})
	}
}

// TestCollectRowsSayWhy: every row has a value or a reason, whatever is
// missing, and a remote server's host rows all say so.
func TestCollectRowsSayWhy(t *testing.T) {
	cases := []struct {
		name string
		opts Options
	}{
		{"tree", Options{PID: 4242}},
		{"empty root", Options{Root: "testdata/nothing", PID: 1, DataDir: "/nonexistent"}},
		{"remote", Options{Remote: "db.example.com"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.opts.Root == "" {
				tc.opts.Root = "testdata/root"
			}
			f := Collect(context.Background(), tc.opts)
			if len(f.Facts) < 50 {
				t.Fatalf("got %d rows, want every row listed (50 or more)", len(f.Facts))
			}
			for _, x := range f.Facts {
				if x.Value == "" && x.Reason == "" {
					t.Errorf("%s: neither value nor reason", x.Name)
				}
				if tc.opts.Remote != "" && x.Group != "sql" && !strings.HasPrefix(x.Reason, "not local: the server runs on db.example.com") {
					t.Errorf("%s: got %q %q, want it unknown as not local", x.Name, x.Value, x.Reason)
				}
			}
		})
	}
}
