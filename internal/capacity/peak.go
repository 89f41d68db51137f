package capacity

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
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

// peakSuffixes may follow a peak given as a number: they say it is a rate
// and change nothing, as a plan's "1200 qps" or "1200/s".
var peakSuffixes = []string{"qps", "tps", "eps", "/s"}

// ReadPeak reads a production peak as capacity --peak and a rehearsal
// plan's production_peak take it: a number of events a second (a suffix
// of qps, tps, eps or /s allowed), or a file that watch --json wrote on
// production, whose highest figure that counts one event of the targets'
// workload (tps or qps) is the peak. A relative file name is taken from
// dir ("" the working directory), as a plan's files are from its
// directory. It returns the peak, where it came from (nil for a number or
// none), or bad input that begins with arg and says what to do; the
// caller puts the flag or the plan's line in front.
func ReadPeak(arg, dir string, targets []Target) (float64, *monitor.WatchPeak, error) {
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return 0, nil, nil
	}
	if v, ok := peakNumber(arg); ok {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, nil, usage.Errorf("%s: the production peak must be a number >= 0 of events a second, such as 1200 or 1200 qps, or a file that watch --json wrote", arg)
		}
		return v, nil, nil
	}
	path := arg
	if dir != "" && !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	wl, kind := "", workload.EventKind("")
	if len(targets) > 0 {
		wl, kind = targets[0].Workload, targets[0].Event
	}
	key, ok := figures[kind]
	if !ok {
		return 0, nil, usage.Errorf("%s: an event of %s is neither one transaction nor one statement, so neither watch's tps nor its qps counts its events: give the peak as a number of events a second, such as 1200", path, wl)
	}
	p, err := monitor.ReadWatchPeakFile(path, key)
	if err != nil {
		return 0, nil, usage.Errorf("%v; or give the peak as a number of events a second", err)
	}
	if p.Value <= 0 {
		// A peak of nothing would give no headroom, silently.
		return 0, nil, usage.Errorf("%s: %s is 0 in all its %d samples: the file recorded no %s; record the busiest hours, or give the peak as a number of events a second",
			path, key, p.Samples, map[string]string{"tps": "transactions", "qps": "statements"}[key])
	}
	return p.Value, &p, nil
}

// peakNumber reads s as a number of events a second, with or without one
// of peakSuffixes; false when s is not one (a file name, then).
func peakNumber(s string) (float64, bool) {
	for _, suffix := range peakSuffixes {
		if v, ok := strings.CutSuffix(s, suffix); ok {
			s = strings.TrimSpace(v)
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
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
