package store

import (
	"time"

	"github.com/shakedown/shakedown/internal/result"
)

// NewRun is the row of a run made outside a sweep, built the same way for
// run --store and for each level of slap --store: status and why are what
// result.StatusOf decided, and why is kept beside a failed status only (an
// interrupted run says so by its status). command is the command line
// without what may carry a password; wallS is the run's wall time.
func NewRun(res *result.Result, status string, why error, workload string, threads int, command string, started time.Time, wallS float64) *Run {
	msg := ""
	if status == RunFailed && why != nil {
		msg = why.Error()
	}
	return &Run{
		Target:    res.Target.Name,
		Workload:  workload,
		Threads:   threads,
		Command:   command,
		Status:    status,
		Error:     msg,
		Degraded:  res.Degraded,
		StartedAt: started,
		WallS:     wallS,
		Result:    res,
	}
}
