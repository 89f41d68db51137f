package monitor

import "github.com/shakedown/shakedown/internal/result"

// The figures a run's watching stores live in result, with the stored
// document that holds them; these names keep monitor's own spelling.
type (
	Report       = result.Monitor
	Series       = result.Series
	Sample       = result.Sample
	SourceStatus = result.SourceStatus
	Point        = result.Point
	HostSummary  = result.HostSummary
	CrossCheck   = result.CrossCheck
)

// NoCounter is RunConfig.Counter for a workload whose statements no
// server counter matches: the cross-check does not apply.
const NoCounter = result.NoCounter
