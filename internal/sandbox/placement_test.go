package sandbox

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestFormatCPUList(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []int
		want string
	}{
		{"none", nil, ""},
		{"one", []int{3}, "3"},
		{"range", []int{0, 1, 2, 3}, "0-3"},
		{"mixed", []int{0, 1, 2, 3, 6, 8, 9}, "0-3,6,8-9"},
		{"pair", []int{4, 5}, "4-5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := FormatCPUList(tc.in); got != tc.want {
				t.Errorf("FormatCPUList(%v): got %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseCPUQuota(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     int
		wantErr  string
	}{
		{"percent", "200%", 200, ""},
		{"half", "50%", 50, ""},
		{"cpus", "2", 200, ""},
		{"fraction of a cpu", "0.5", 50, ""},
		{"fractional percent rounds", "12.6%", 13, ""},
		{"spaces", " 150 % ", 150, ""},
		{"smallest", "1%", 1, ""},
		{"zero", "0%", 0, "below the smallest quota"},
		{"below one percent", "0.001", 0, "below the smallest quota"},
		{"negative", "-50%", 0, "below the smallest quota"},
		{"word", "lots", 0, `"lots" is not a quota`},
		{"empty", "", 0, `"" is not a quota`},
		{"nan", "NaN", 0, "is not a quota"},
		{"too much", "1e9%", 0, "more CPU time than any machine has"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCPUQuota(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseCPUQuota(%q): got %d, %v; want error with %q", tc.in, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseCPUQuota(%q): got %d, %v; want %d", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestParsePlacement(t *testing.T) {
	good := machine{cpus: []int{0, 1, 2, 3}, numaNodes: 2, numactl: "/usr/bin/numactl", cgroup: func() error { return nil }}
	noCgroup := good
	noCgroup.cgroup = func() error {
		return errors.New("cannot create cgroup /sys/fs/cgroup/cpu/shakedown: permission denied")
	}
	oneNode := good
	oneNode.numaNodes = 1
	noNumactl := good
	noNumactl.numactl = ""
	for _, tc := range []struct {
		name              string
		cpus, quota, numa string
		m                 machine
		want              Placement
		wantErr           string
	}{
		{"nothing", "", "", "", good, Placement{}, ""},
		{"all three", "3,0-1", "200%", "interleave", good, Placement{CPUs: "0-1,3", CPUQuota: 200, NUMA: "interleave"}, ""},
		{"numa case", "", "", "Interleave", good, Placement{NUMA: "interleave"}, ""},
		{"cpu the machine lacks", "2-5", "", "", good, Placement{}, "--cpus 2-5: this machine has no CPU 4-5 that shakedown may use (it may use 0-3)"},
		{"cpus that do not parse", "0-", "", "", good, Placement{}, "--cpus 0-:"},
		{"quota that does not parse", "", "2 cores", "", good, Placement{}, "--cpu-quota: \"2 cores\" is not a quota"},
		{"no writable cgroup", "", "50%", "", noCgroup, Placement{}, "--cpu-quota 50%: cannot create cgroup /sys/fs/cgroup/cpu/shakedown: permission denied"},
		{"one numa node", "", "", "interleave", oneNode, Placement{}, "--numa interleave: this machine has 1 NUMA node(s)"},
		{"no numactl", "", "", "interleave", noNumactl, Placement{}, "--numa interleave: numactl is not installed"},
		{"unknown policy", "", "", "bind", good, Placement{}, "--numa bind: want interleave"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parsePlacement(tc.cpus, tc.quota, tc.numa, tc.m)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrInvalid) {
					t.Fatalf("got %+v, %v; want an ErrInvalid with %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestPlacementDifferences(t *testing.T) {
	i := &Instance{Placement: Placement{CPUs: "0-1", CPUQuota: 50}}
	for _, tc := range []struct {
		name string
		ask  Placement
		want []string
	}{
		{"nothing asked", Placement{}, nil},
		{"same", Placement{CPUs: "0-1", CPUQuota: 50}, nil},
		{"other cpus", Placement{CPUs: "0"}, []string{"--cpus 0 (it has 0-1)"}},
		{"other quota", Placement{CPUQuota: 200}, []string{"--cpu-quota 200% (it has 50%)"}},
		{"numa it lacks", Placement{NUMA: "interleave"}, []string{"--numa interleave (it has the default policy)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := i.PlacementDifferences(tc.ask); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestReadCPUStat(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       CPUStat
	}{
		{"v1", "nr_periods 210\nnr_throttled 13\nthrottled_time 173173715\nnr_bursts 0\n", CPUStat{Periods: 210, Throttled: 13, ThrottledTime: 173173715}},
		{"v2", "usage_usec 9\nnr_periods 7\nnr_throttled 2\nthrottled_usec 1500\n", CPUStat{Periods: 7, Throttled: 2, ThrottledTime: 1500000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := writeFile(dir, "cpu.stat", tc.file); err != nil {
				t.Fatal(err)
			}
			got, err := ReadCPUStat(dir)
			if err != nil || got != tc.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
