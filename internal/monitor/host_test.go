package monitor

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestHostSourceReadsProc(t *testing.T) {
	r := &Reading{Values: map[string]float64{}}
	if err := (HostSource{Proc: "testdata/proc"}).Read(context.Background(), nil, r); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"host.cpu.user": 229602, "host.cpu.nice": 88, "host.cpu.system": 75691, "host.cpu.idle": 159121,
		"host.cpu.iowait": 1588, "host.cpu.irq": 10, "host.cpu.softirq": 21348, "host.cpu.steal": 176,
		// sda, nvme0n1 and vda; not their partitions, loop, dm or zram devices.
		"host.disk.reads": 1310, "host.disk.writes": 2420,
		"host.disk.read_bytes": 26100 * 512, "host.disk.write_bytes": 48200 * 512,
		// eth0 and eth1, not lo.
		"host.net.rx_bytes": 262690147, "host.net.tx_bytes": 670975,
	}
	for k, w := range want {
		if got, ok := r.Values[k]; !ok || got != w {
			t.Errorf("%s: got %g (present %v), want %g", k, got, ok, w)
		}
	}
}

func TestHostSourceReportsMissingFiles(t *testing.T) {
	r := &Reading{Values: map[string]float64{}}
	err := (HostSource{Proc: "testdata/no-such-proc"}).Read(context.Background(), nil, r)
	if err == nil {
		t.Fatalf("got no error, want one naming the unreadable files")
	}
	if len(r.Values) != 0 {
		t.Errorf("got values %v, want none", r.Values)
	}
}

func TestWholeDisk(t *testing.T) {
	all := map[string]bool{"sda": true, "sda1": true, "nvme0n1": true, "nvme0n1p2": true, "mmcblk0": true, "mmcblk0p1": true, "vda": true, "xvdb": true, "xvdb3": true}
	cases := []struct {
		name string
		want bool
	}{
		{"sda", true}, {"sda1", false}, {"nvme0n1", true}, {"nvme0n1p2", false},
		{"mmcblk0", true}, {"mmcblk0p1", false}, {"vda", true}, {"xvdb", true}, {"xvdb3", false},
		{"loop0", false}, {"dm-0", false}, {"zram0", false}, {"ram1", false}, {"sr0", false}, {"md127", false},
	}
	for _, tc := range cases {
		if got := wholeDisk(tc.name, all); got != tc.want {
			t.Errorf("wholeDisk(%q): got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestHostSourceReadsKernelCounters(t *testing.T) {
	// testdata/proc's vmstat and net/netstat are real files of a Linux 6
	// host, with pswpin and the three TcpExt fields set to distinct figures
	// so that a field read from the wrong column shows.
	r := &Reading{Values: map[string]float64{}}
	if err := (HostSource{Proc: "testdata/proc"}).readKernel(r); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{kSwapIns: 731, kSyncookiesSent: 17, kListenOverflows: 4242, kListenDrops: 4250}
	for k, w := range want {
		if got, ok := r.Values[k]; !ok || got != w {
			t.Errorf("%s: got %g (present %v), want %g", k, got, ok, w)
		}
	}
}

func TestParseNetstat(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want map[string]map[string]float64
	}{
		{"two protocols", "TcpExt: A B\nTcpExt: 1 2\nIpExt: C\nIpExt: 3\n",
			map[string]map[string]float64{"TcpExt": {"A": 1, "B": 2}, "IpExt": {"C": 3}}},
		{"lengths differ: skipped", "TcpExt: A B\nTcpExt: 1\n", map[string]map[string]float64{}},
		{"values line missing", "TcpExt: A B\nIpExt: C\nIpExt: 3\n", map[string]map[string]float64{"IpExt": {"C": 3}}},
		{"empty", "", map[string]map[string]float64{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := parseNetstat([]byte(tc.in))
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseCtxtAndVMStat(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want float64
		ok   bool
	}{
		{"present", "cpu 1 2\nctxt 42\nbtime 9\n", 42, true},
		{"absent", "cpu 1 2\n", 0, false},
		{"not a number", "ctxt x\n", 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseCtxt([]byte(tc.in))
			if got != tc.want || ok != tc.ok {
				t.Errorf("got %g %v, want %g %v", got, ok, tc.want, tc.ok)
			}
		})
	}
	if got := parseVMStat([]byte("pswpin 7\nbad\npswpout x\n")); len(got) != 1 || got["pswpin"] != 7 {
		t.Errorf("parseVMStat: got %v, want map[pswpin:7]", got)
	}
}

func FuzzParseNetstat(f *testing.F) {
	for _, p := range []string{"testdata/proc/net/netstat", "testdata/proc/vmstat", "testdata/proc/stat"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// Whatever the input, every protocol and field returned is one of its
		// words: the parser never makes names up or shifts them.
		for proto, m := range parseNetstat(b) {
			if !strings.Contains(string(b), proto+":") {
				t.Errorf("protocol %q: got it, want only protocols of the input", proto)
			}
			for n := range m {
				if !strings.Contains(string(b), n) {
					t.Errorf("field %q: got it, want only fields of the input", n)
				}
			}
		}
		for k := range parseVMStat(b) {
			if strings.ContainsAny(k, " \t\n") {
				t.Errorf("vmstat key %q: got white space, want none", k)
			}
		}
		if v, ok := parseCtxt(b); ok && !strings.Contains(string(b), "ctxt ") {
			t.Errorf("ctxt: got %g from input without a ctxt line", v)
		}
	})
}
