package report

import (
	"fmt"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/stats"
	"github.com/shakedown/shakedown/internal/store"
)

// HostCounters is what the host counted while one target's runs measured
// (local servers only): the counters that tie a host setting to its
// effect, beside the settings that differ.
type HostCounters struct {
	Target string `json:"target"`
	// Runs is how many runs had the counters.
	Runs int `json:"runs"`
	// Kernel sums the runs' counters; its context switch rate is the mean
	// over their samples.
	Kernel result.KernelCounters `json:"kernel"`
	// ThrottledMS sums the time the server's cgroup was throttled; Quota is
	// set when some run's cgroup had a CPU quota to throttle it.
	ThrottledMS float64 `json:"throttled_ms"`
	Quota       bool    `json:"quota"`
}

// hostCounters totals each target's runs, control first, then in plan
// order; targets whose runs had no counters are left out.
func hostCounters(runs []store.Run, targets []store.Target, control string) []HostCounters {
	by := map[string]*HostCounters{}
	for _, run := range runs {
		if run.Result == nil || run.Result.Host == nil || run.Result.Host.Kernel == nil {
			continue
		}
		c := by[run.Target]
		if c == nil {
			c = &HostCounters{Target: run.Target}
			by[run.Target] = c
		}
		h, k := run.Result.Host, run.Result.Host.Kernel
		c.Runs++
		n := float64(c.Kernel.Samples)
		c.Kernel.ContextSwitchesPerS = (c.Kernel.ContextSwitchesPerS*n + k.ContextSwitchesPerS*float64(k.Samples)) / (n + float64(k.Samples))
		c.Kernel.Samples += k.Samples
		c.Kernel.SwapIns += k.SwapIns
		c.Kernel.SyncookiesSent += k.SyncookiesSent
		c.Kernel.ListenOverflows += k.ListenOverflows
		c.Kernel.ListenDrops += k.ListenDrops
		if t := h.Throttling; t != nil {
			c.ThrottledMS += t.ThrottledMS
			c.Quota = c.Quota || !t.NoQuota
		}
	}
	var out []HostCounters
	add := func(name string) {
		if c := by[name]; c != nil {
			c.Kernel.ContextSwitchesPerS = stats.Round(c.Kernel.ContextSwitchesPerS, 0)
			c.ThrottledMS = stats.Round(c.ThrottledMS, 0)
			out = append(out, *c)
			delete(by, name)
		}
	}
	add(control)
	for _, t := range targets {
		add(t.Name)
	}
	return out
}

// countersTable is one row per target.
func (e *HostEnv) countersTable() *table {
	t := &table{header: []string{"target", "runs", "ctx switches/s", "swap-ins", "SYN cookies", "listen overflows", "listen drops", "cgroup throttled"},
		right: []bool{false, true, true, true, true, true, true, true}}
	for _, c := range e.Counters {
		thr := "no quota"
		if c.Quota {
			thr = fmt.Sprintf("%.0f ms", c.ThrottledMS)
		}
		k := c.Kernel
		t.add(c.Target, fmt.Sprint(c.Runs), fmt.Sprintf("%.0f", k.ContextSwitchesPerS), fmt.Sprintf("%.0f", k.SwapIns),
			fmt.Sprintf("%.0f", k.SyncookiesSent), fmt.Sprintf("%.0f", k.ListenOverflows), fmt.Sprintf("%.0f", k.ListenDrops), thr)
	}
	return t
}

// countersNote heads the counters table.
const countersNote = "What the host counted while each target's runs measured (local servers): swapping, a full SYN backlog or accept queue, thread switching and the cgroup's CPU quota."
