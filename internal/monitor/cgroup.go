package monitor

import (
	"context"

	"github.com/shakedown/shakedown/internal/host"
)

// CgroupSource reads the CPU counters of the server process's cgroup:
// periods, throttled periods and throttled time, which show a CPU quota
// biting (a cpuset does not throttle).
type CgroupSource struct {
	// ServerPID is the server's process.
	ServerPID int
}

// Name is "cgroup".
func (CgroupSource) Name() string { return "cgroup" }

// Read reads the cgroup's cpu.stat (v2, or v1's cpu and cpuacct).
func (c CgroupSource) Read(ctx context.Context, _ *OwnQuerier, r *Reading) error {
	v, err := host.CgroupCounters(ctx, "", c.ServerPID)
	if err != nil {
		return err
	}
	for k, x := range v {
		r.Values[k] = x
	}
	return nil
}
