package host

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// numaFacts: nodes, their distances, automatic NUMA balancing.
func numaFacts(ctx context.Context, e *env) []Fact {
	const dir = "/sys/devices/system/node"
	nodes := e.fileFact("numa.nodes", "numa", Setting, dir+"/online")
	out := []Fact{nodes}
	if !nodes.Known() {
		out = append(out, unknown("numa.distances", "numa", Setting, nodes.Reason))
	} else {
		ids, err := ParseCPUList(nodes.Value)
		var parts []string
		reason := ""
		if err != nil {
			reason = fmt.Sprintf("cannot parse %s/online %q: %v", dir, nodes.Value, err)
		}
		for _, id := range ids {
			d, r := e.r.read(fmt.Sprintf("%s/node%d/distance", dir, id))
			if r != "" {
				reason = r
				break
			}
			parts = append(parts, fmt.Sprintf("node%d: %s", id, strings.Join(strings.Fields(d), " ")))
		}
		out = append(out, mk("numa.distances", "numa", Setting, strings.Join(parts, "; "), reason))
	}
	bal := e.fileFact("kernel.numa_balancing", "numa", Setting, "/proc/sys/kernel/numa_balancing")
	if strings.HasPrefix(bal.Reason, "absent") {
		bal.Reason = "absent on this kernel (built without CONFIG_NUMA_BALANCING, or one node only)"
	}
	return append(out, bal)
}

// numaMaps is what /proc/PID/numa_maps says of a process's memory: the
// policy of most of its mappings and its resident pages per node.
type numaMaps struct {
	Policy string         // the policy most mappings have
	Pages  map[string]int // node ("N0") to pages
}

// parseNumaMaps reads /proc/PID/numa_maps: "ADDR POLICY key=value...".
func parseNumaMaps(s string) numaMaps {
	policies := map[string]int{}
	m := numaMaps{Pages: map[string]int{}}
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		policies[f[1]]++
		for _, kv := range f[2:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || len(k) < 2 || k[0] != 'N' || strings.Trim(k[1:], "0123456789") != "" {
				continue
			}
			if n, err := strconv.Atoi(v); err == nil && n > 0 && m.Pages[k] <= 1<<40 {
				m.Pages[k] += n
			}
		}
	}
	best := 0
	for p, n := range policies {
		if n > best || (n == best && p < m.Policy) {
			m.Policy, best = p, n
		}
	}
	return m
}

// Spread is the share of pages on each node, "N0=75% N1=25%".
func (m numaMaps) Spread() string {
	total := 0
	var nodes []string
	for n, p := range m.Pages {
		total += p
		nodes = append(nodes, n)
	}
	if total == 0 {
		return ""
	}
	sort.Slice(nodes, func(i, j int) bool {
		a, _ := strconv.Atoi(nodes[i][1:])
		b, _ := strconv.Atoi(nodes[j][1:])
		return a < b
	})
	parts := make([]string, len(nodes))
	for i, n := range nodes {
		parts[i] = fmt.Sprintf("%s=%d%%", n, (m.Pages[n]*100+total/2)/total)
	}
	return strings.Join(parts, " ")
}
