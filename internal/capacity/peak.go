package capacity

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/shakedown/shakedown/internal/monitor"
	"github.com/shakedown/shakedown/internal/usage"
	"github.com/shakedown/shakedown/internal/workload"
)

// figures is the watch figure that counts one event of each kind: a
// server's transactions a second are a transaction workload's events a
// second, its statements a second a statement workload's.
var figures = map[workload.EventKind]string{
	workload.EventTransaction: "tps",
	workload.EventStatement:   "qps",
}

// ReadPeak reads --peak: a number of events a second, or a file that
// watch --json wrote on production, whose highest figure that counts one
// event of the targets' workload (tps or qps) is the peak. It returns the
// peak, where it came from (nil for a number or none), or bad input that
// says what to do.
func ReadPeak(arg string, targets []Target) (float64, *monitor.WatchPeak, error) {
	if arg == "" {
		return 0, nil, nil
	}
	if v, err := strconv.ParseFloat(arg, 64); err == nil {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, nil, usage.Errorf("capacity: --peak %s: the production peak must be a number >= 0 of events a second, or a file that watch --json wrote", arg)
		}
		return v, nil, nil
	}
	wl, kind := "", workload.EventKind("")
	if len(targets) > 0 {
		wl, kind = targets[0].Workload, targets[0].Event
	}
	key, ok := figures[kind]
	if !ok {
		return 0, nil, usage.Errorf("capacity: --peak %s: an event of %s is neither one transaction nor one statement, so neither watch's tps nor its qps counts its events: give the peak as a number of events a second, e.g. --peak 1200", arg, wl)
	}
	p, err := monitor.ReadWatchPeakFile(arg, key)
	if err != nil {
		return 0, nil, usage.Errorf("capacity: --peak %v; or give the peak as a number of events a second", err)
	}
	if p.Value <= 0 {
		// A peak of nothing would give no headroom, silently.
		return 0, nil, usage.Errorf("capacity: --peak %s: %s is 0 in all its %d samples: the file recorded no %s; record the busiest hours, or give the peak as a number of events a second",
			arg, key, p.Samples, map[string]string{"tps": "transactions", "qps": "statements"}[key])
	}
	return p.Value, &p, nil
}

// PeakText says where the production peak came from; "" when it was given
// as a number or not at all.
func (r *Report) PeakText() string {
	p := r.PeakFrom
	if p == nil {
		return ""
	}
	what := map[string]string{"tps": "transactions", "qps": "statements"}[p.Key]
	return fmt.Sprintf("Production peak %.1f/s: the highest %s (%s a second, one an event of %s) of the %d samples in %s, at %s (line %d)",
		p.Value, p.Key, what, r.Workload, p.Samples, p.File, p.At.UTC().Format(time.DateTime+" UTC"), p.Line)
}
