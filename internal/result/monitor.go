package result

import (
	"fmt"
	"io"
)

// AddMonitor stores what watching the server added to the run: the server
// series, the host's CPU figures, the client/server cross-check and the
// warnings. A nil report adds nothing.
func (r *Result) AddMonitor(rep *Monitor) {
	if rep == nil {
		return
	}
	r.Server = rep.Server
	r.Host = rep.Host
	r.CrossCheck = rep.CrossCheck
	r.Checks = append(r.Checks, rep.Checks...)
	r.Stalls, r.StallsSkipped = rep.Stalls, rep.StallsSkipped
	r.HostFacts, r.ClientFacts = rep.HostFacts, rep.ClientFacts
}

// writeMonitor prints the monitor's lines of the "Beyond sysbench" section.
func (r *Result) writeMonitor(w io.Writer) {
	if cc := r.CrossCheck; cc != nil {
		switch {
		case cc.ClientQPS == 0 && cc.ServerQPS == 0:
			fmt.Fprintf(w, "    client vs server QPS:          not checked: %s\n", cc.Note)
		case cc.Counter != "" && !cc.Mismatch:
			fmt.Fprintf(w, "    client vs server QPS:          client %.2f, server %s %.2f/s (ratio %.3f, %.0fs-%.0fs): %s\n",
				cc.ClientQPS, cc.Counter, cc.ServerQPS, cc.Ratio, cc.FromS, cc.ToS, cc.Note)
		case cc.Mismatch:
			fmt.Fprintf(w, "    client vs server QPS:          MISMATCH client %.2f, server %.2f (ratio %.3f, %.0fs-%.0fs): %s\n",
				cc.ClientQPS, cc.ServerQPS, cc.Ratio, cc.FromS, cc.ToS, cc.Note)
		default:
			fmt.Fprintf(w, "    client vs server QPS:          client %.2f, server %.2f (ratio %.3f, %.0fs-%.0fs): %s\n",
				cc.ClientQPS, cc.ServerQPS, cc.Ratio, cc.FromS, cc.ToS, cc.Note)
		}
	}
	if h := r.Host; h != nil {
		line := fmt.Sprintf("%.2f us client", h.ClientCPUPerQueryUS)
		if h.ServerCPUPerQueryUS > 0 {
			line += fmt.Sprintf(", %.2f us server process", h.ServerCPUPerQueryUS)
		}
		fmt.Fprintf(w, "    CPU per query:                 %s (%d cores here)\n", line, h.Cores)
	}
	if t := r.Host.throttling(); t != nil && t.NoQuota {
		fmt.Fprintf(w, "    cgroup CPU throttling:         none: the server's cgroup has no CPU quota (%d samples)\n", t.Samples)
	} else if t != nil {
		fmt.Fprintf(w, "    cgroup CPU throttling:         %.0f ms throttled, in %.1f%% of the quota's periods (server's cgroup, %d samples)\n",
			t.ThrottledMS, t.PeriodsPct, t.Samples)
	}
	if h := r.Host; h != nil && h.Kernel != nil {
		fmt.Fprintf(w, "    host kernel counters:          %s\n", h.Kernel.Line())
	}
	if s := r.Server; s != nil {
		fmt.Fprintf(w, "    server samples:                %d (every %gs, %d statements of the sampler's own left out)\n",
			len(s.Samples), s.IntervalS, s.OwnStatements)
	}
	for _, c := range r.Checks {
		fmt.Fprintf(w, "    CHECK:                         %s\n", c)
	}
}

func (h *HostSummary) throttling() *Throttling {
	if h == nil {
		return nil
	}
	return h.Throttling
}
