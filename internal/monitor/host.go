package monitor

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// HostSource reads the host's CPU, disk, network and kernel counters from
// /proc: the cpu and ctxt lines of stat, the whole disks of diskstats
// (partitions, loop, ram and device-mapper devices left out so nothing
// counts twice), every interface of net/dev but loopback, pswpin of vmstat
// and TcpExt's SYN cookie and listen-queue counters of net/netstat. It is only meaningful when the server
// runs on this host.
type HostSource struct {
	// Proc is the proc file system's root, normally "/proc".
	Proc string
}

// Name is "host".
func (HostSource) Name() string { return "host" }

// Read reads the five files; one that cannot be read is reported and the
// others still count.
func (h HostSource) Read(_ context.Context, _ *OwnQuerier, r *Reading) error {
	return errors.Join(
		h.readStat(r),
		h.readDisks(r),
		h.readNet(r),
		h.readKernel(r),
	)
}

func (h HostSource) readStat(r *Reading) error {
	b, err := os.ReadFile(filepath.Join(h.Proc, "stat"))
	if err != nil {
		return fmt.Errorf("read host cpu: %w", err)
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 1+len(cpuStates) || f[0] != "cpu" {
		return fmt.Errorf("read host cpu: unexpected first line %q", line)
	}
	for i, s := range cpuStates {
		v, err := strconv.ParseFloat(f[1+i], 64)
		if err != nil {
			return fmt.Errorf("read host cpu: %s: %w", s, err)
		}
		r.Values["host.cpu."+s] = v
	}
	if v, ok := parseCtxt(b); ok {
		r.Values[kCtxt] = v
	}
	return nil
}

// sectorSize is the unit of diskstats' sector counts, whatever the device's.
const sectorSize = 512

func (h HostSource) readDisks(r *Reading) error {
	f, err := os.Open(filepath.Join(h.Proc, "diskstats"))
	if err != nil {
		return fmt.Errorf("read host disks: %w", err)
	}
	defer f.Close()
	type dev struct {
		name                        string
		reads, rsect, writes, wsect float64
	}
	var devs []dev
	names := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 10 {
			continue
		}
		var d dev
		d.name = fs[2]
		nums := make([]float64, 0, 7)
		for _, s := range fs[3:10] {
			v, _ := strconv.ParseFloat(s, 64)
			nums = append(nums, v)
		}
		d.reads, d.rsect, d.writes, d.wsect = nums[0], nums[2], nums[4], nums[6]
		devs = append(devs, d)
		names[d.name] = true
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read host disks: %w", err)
	}
	var reads, rbytes, writes, wbytes float64
	for _, d := range devs {
		if !wholeDisk(d.name, names) {
			continue
		}
		reads += d.reads
		writes += d.writes
		rbytes += d.rsect * sectorSize
		wbytes += d.wsect * sectorSize
	}
	r.Values["host.disk.reads"] = reads
	r.Values["host.disk.writes"] = writes
	r.Values["host.disk.read_bytes"] = rbytes
	r.Values["host.disk.write_bytes"] = wbytes
	return nil
}

// wholeDisk reports whether a diskstats device is a physical disk: not a
// virtual device, and not a partition of another listed device (sda1 of
// sda, nvme0n1p1 of nvme0n1, mmcblk0p1 of mmcblk0).
func wholeDisk(name string, all map[string]bool) bool {
	for _, p := range []string{"loop", "ram", "zram", "dm-", "sr", "fd", "md", "nbd"} {
		if strings.HasPrefix(name, p) {
			return false
		}
	}
	for i := len(name) - 1; i > 0; i-- {
		c := name[i]
		if c >= '0' && c <= '9' {
			continue
		}
		base := name[:i+1]
		if c == 'p' && all[name[:i]] {
			return false
		}
		if i < len(name)-1 && all[base] {
			return false
		}
		break
	}
	return true
}

func (h HostSource) readNet(r *Reading) error {
	b, err := os.ReadFile(filepath.Join(h.Proc, "net", "dev"))
	if err != nil {
		return fmt.Errorf("read host network: %w", err)
	}
	var rx, tx float64
	for _, line := range strings.Split(string(b), "\n") {
		iface, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		iface = strings.TrimSpace(iface)
		fs := strings.Fields(rest)
		if iface == "lo" || len(fs) < 9 {
			continue
		}
		a, err1 := strconv.ParseFloat(fs[0], 64)
		c, err2 := strconv.ParseFloat(fs[8], 64)
		if err1 != nil || err2 != nil {
			continue
		}
		rx += a
		tx += c
	}
	r.Values["host.net.rx_bytes"] = rx
	r.Values["host.net.tx_bytes"] = tx
	return nil
}
