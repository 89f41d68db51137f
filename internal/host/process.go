package host

import (
	"context"
	"fmt"
	"strings"
)

// noProcess is the reason of every process row when no server was named.
const noProcess = "no server process named: give --pid, --sandbox or a local target"

// processFacts: the server process's CPUs, memory nodes, memory policy and
// page spread, limits and OOM score.
func processFacts(ctx context.Context, e *env) []Fact {
	rows := []struct{ name, kind string }{
		{"process.cpus_allowed", Setting}, {"process.mems_allowed", Setting},
		{"process.mempolicy", Setting}, {"process.numa_spread", Counter},
		{"process.limit.open_files", Setting}, {"process.limit.processes", Setting},
		{"process.oom_score_adj", Setting}, {"process.oom_score", Counter},
	}
	if e.opts.PID <= 0 && e.r.remote == "" {
		out := make([]Fact, len(rows))
		for i, r := range rows {
			out[i] = unknown(r.name, "process", r.kind, noProcess)
		}
		return out
	}
	dir := fmt.Sprintf("/proc/%d", e.opts.PID)
	status, reason := e.r.read(dir + "/status")
	st := parseKeyValues(status, ":")
	get := func(key string) (string, string) {
		if reason != "" {
			return "", reason
		}
		v, ok := st[key]
		if !ok {
			return "", "no " + key + " in " + dir + "/status"
		}
		return v, ""
	}
	cpus, r1 := get("Cpus_allowed_list")
	mems, r2 := get("Mems_allowed_list")
	out := []Fact{
		mk("process.cpus_allowed", "process", Setting, cpus, r1),
		mk("process.mems_allowed", "process", Setting, mems, r2),
	}
	maps, reason := e.r.read(dir + "/numa_maps")
	nm := parseNumaMaps(maps)
	if reason == "" && nm.Policy == "" {
		reason = dir + "/numa_maps lists no mappings"
	}
	spreadReason := reason
	if reason == "" && nm.Spread() == "" {
		spreadReason = "no resident pages counted per node in " + dir + "/numa_maps"
	}
	out = append(out, mk("process.mempolicy", "process", Setting, nm.Policy, reason),
		mk("process.numa_spread", "process", Counter, nm.Spread(), spreadReason))

	limits, reason := e.r.read(dir + "/limits")
	lim := parseLimits(limits)
	for _, l := range []struct{ name, key string }{
		{"process.limit.open_files", "Max open files"}, {"process.limit.processes", "Max processes"},
	} {
		r := reason
		v, ok := lim[l.key]
		if r == "" && !ok {
			r = "no " + l.key + " in " + dir + "/limits"
		}
		out = append(out, mk(l.name, "process", Setting, v, r))
	}
	out = append(out, e.fileFact("process.oom_score_adj", "process", Setting, dir+"/oom_score_adj"),
		e.fileFact("process.oom_score", "process", Counter, dir+"/oom_score"))
	return out
}

// parseKeyValues reads "Key<sep> value" lines (/proc/PID/status,
// cpu.stat with sep " ").
func parseKeyValues(s, sep string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(line, sep)
		if !ok {
			continue
		}
		if k = strings.TrimSpace(k); k != "" {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

// parseLimits reads /proc/PID/limits into "soft/hard" by limit name:
// "Max open files            1024                 524288               files".
func parseLimits(s string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(line, "Max ") {
			continue
		}
		// The name runs up to the first run of two spaces.
		i := strings.Index(line, "  ")
		if i < 0 {
			continue
		}
		f := strings.Fields(line[i:])
		if len(f) < 2 {
			continue
		}
		name := strings.TrimSpace(line[:i])
		if !strings.HasPrefix(name, "Max ") {
			continue // "Max" alone names no limit
		}
		out[name] = f[0] + "/" + f[1]
	}
	return out
}
