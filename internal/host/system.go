package host

import (
	"context"
	"sort"
	"strings"
)

// systemFacts: kernel, CPU model, virtualisation, mitigations, governor.
func systemFacts(ctx context.Context, e *env) []Fact {
	out := []Fact{e.fileFact("kernel.release", "system", Setting, "/proc/sys/kernel/osrelease")}
	info, reason := e.r.read("/proc/cpuinfo")
	model, flags := parseCPUInfo(info)
	if reason == "" && model == "" {
		reason = "no model name in /proc/cpuinfo"
	}
	out = append(out, e.virtualisation(info, flags, reason))
	out = append(out, mk("cpu.model", "cpu", Setting, model, reason))
	out = append(out, e.fileFact("cpu.online", "cpu", Setting, "/sys/devices/system/cpu/online"))
	out = append(out, e.vulnerabilities()...)
	out = append(out, e.governor())
	return out
}

// parseCPUInfo returns the first CPU's model name and flags.
func parseCPUInfo(s string) (model string, flags []string) {
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case k == "model name" && model == "":
			model = v
		case (k == "flags" || k == "Features") && flags == nil:
			flags = strings.Fields(v)
		}
	}
	return model, flags
}

// virtualisation says whether the kernel runs under a hypervisor (the CPU's
// hypervisor flag) and which one when /sys tells, and whether in a
// container.
func (e *env) virtualisation(info string, flags []string, reason string) Fact {
	const name = "virtualisation"
	if reason != "" {
		return unknown(name, "system", Setting, reason)
	}
	v := "none found (no hypervisor flag)"
	for _, f := range flags {
		if f == "hypervisor" {
			v = "virtual machine"
			if t, r := e.r.read("/sys/hypervisor/type"); r == "" && t != "" {
				v += " (" + t + ")"
			} else if p, r := e.r.read("/sys/class/dmi/id/product_name"); r == "" && p != "" {
				v += " (" + p + ")"
			}
		}
	}
	if flags == nil {
		v = "unknown (/proc/cpuinfo lists no flags on this architecture)"
	}
	for _, c := range []string{"/.dockerenv", "/run/.containerenv"} {
		if e.r.exists(c) {
			v += "; in a container (" + c + ")"
		}
	}
	return mk(name, "system", Setting, v, "")
}

// vulnerabilities gives one row per CPU vulnerability the kernel reports.
func (e *env) vulnerabilities() []Fact {
	const dir = "/sys/devices/system/cpu/vulnerabilities"
	names, reason := e.r.list(dir)
	if reason != "" {
		return []Fact{unknown("cpu.vulnerabilities", "cpu", Setting, reason)}
	}
	sort.Strings(names)
	out := make([]Fact, 0, len(names))
	for _, n := range names {
		out = append(out, e.fileFact("cpu.vulnerability."+n, "cpu", Setting, dir+"/"+n))
	}
	return out
}

// governor is the cpufreq governor of every CPU: one value when all agree.
func (e *env) governor() Fact {
	const name = "cpu.governor"
	cpus, reason := e.r.list("/sys/devices/system/cpu")
	if reason != "" {
		return unknown(name, "cpu", Setting, reason)
	}
	seen := map[string]bool{}
	var vals []string
	lastReason := ""
	for _, c := range cpus {
		if !strings.HasPrefix(c, "cpu") || strings.Trim(c[3:], "0123456789") != "" || len(c) == 3 {
			continue
		}
		v, r := e.r.read("/sys/devices/system/cpu/" + c + "/cpufreq/scaling_governor")
		if r != "" {
			lastReason = r
			continue
		}
		if !seen[v] {
			seen[v] = true
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		if lastReason == "" || strings.HasPrefix(lastReason, "absent") {
			lastReason = "no cpufreq driver: the kernel does not scale CPU frequency here (usual in virtual machines, where the hypervisor decides)"
		}
		return unknown(name, "cpu", Setting, lastReason)
	}
	sort.Strings(vals)
	return mk(name, "cpu", Setting, strings.Join(vals, ","), "")
}
