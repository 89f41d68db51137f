package monitor

import (
	"context"
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
