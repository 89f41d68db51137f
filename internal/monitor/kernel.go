package monitor

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The kernel counters that tie a host setting to its effect: swap-ins
// (swappiness, memory limits), SYN cookies sent and listen-queue overflows
// and drops (somaxconn, tcp_max_syn_backlog, back_log under short
// connections), and context switches (thread counts against cores).
const (
	kSwapIns         = "host.kernel.pswpin"
	kCtxt            = "host.kernel.ctxt"
	kSyncookiesSent  = "host.kernel.syncookies_sent"
	kListenOverflows = "host.kernel.listen_overflows"
	kListenDrops     = "host.kernel.listen_drops"
)

// netstatKeys maps the TcpExt fields of /proc/net/netstat to reading keys.
var netstatKeys = map[string]string{
	"SyncookiesSent":  kSyncookiesSent,
	"ListenOverflows": kListenOverflows,
	"ListenDrops":     kListenDrops,
}

// readKernel reads /proc/vmstat and /proc/net/netstat into r; one that
// cannot be read is reported and the other still counts. The context
// switches come from /proc/stat, read with the CPU times.
func (h HostSource) readKernel(r *Reading) error {
	var errs []error
	if b, err := os.ReadFile(filepath.Join(h.Proc, "vmstat")); err != nil {
		errs = append(errs, fmt.Errorf("read host swap-ins: %w", err))
	} else if v, ok := parseVMStat(b)["pswpin"]; ok {
		r.Values[kSwapIns] = v
	} else {
		errs = append(errs, errors.New("read host swap-ins: no pswpin in vmstat"))
	}
	if b, err := os.ReadFile(filepath.Join(h.Proc, "net", "netstat")); err != nil {
		errs = append(errs, fmt.Errorf("read host TCP counters: %w", err))
	} else {
		ext := parseNetstat(b)["TcpExt"]
		for field, key := range netstatKeys {
			if v, ok := ext[field]; ok {
				r.Values[key] = v
			}
		}
		if len(ext) == 0 {
			errs = append(errs, errors.New("read host TCP counters: no TcpExt lines in net/netstat"))
		}
	}
	return errors.Join(errs...)
}

// parseVMStat reads /proc/vmstat's "name value" lines; lines that do not
// parse are skipped.
func parseVMStat(b []byte) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		if v, err := strconv.ParseFloat(f[1], 64); err == nil {
			out[f[0]] = v
		}
	}
	return out
}

// parseNetstat reads /proc/net/netstat (and /proc/net/snmp, which has the
// same shape): each protocol is two lines, "Proto: names..." then
// "Proto: values...". A pair whose lengths differ is skipped whole, since
// its fields cannot be matched to its values.
func parseNetstat(b []byte) map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	var names []string
	var proto string
	for _, line := range strings.Split(string(b), "\n") {
		p, rest, ok := strings.Cut(line, ":")
		if !ok {
			names, proto = nil, ""
			continue
		}
		f := strings.Fields(rest)
		if names == nil || p != proto {
			names, proto = f, p
			continue
		}
		if len(f) == len(names) {
			m := out[p]
			if m == nil {
				m = map[string]float64{}
				out[p] = m
			}
			for i, n := range names {
				if v, err := strconv.ParseFloat(f[i], 64); err == nil {
					m[n] = v
				}
			}
		}
		names, proto = nil, ""
	}
	return out
}

// parseCtxt finds /proc/stat's "ctxt N" line.
func parseCtxt(b []byte) (float64, bool) {
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "ctxt "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v, err == nil
		}
	}
	return 0, false
}
