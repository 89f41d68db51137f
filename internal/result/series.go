package result

import (
	"math"
	"time"

	"github.com/shakedown/shakedown/internal/host"
	"github.com/shakedown/shakedown/internal/stats"
)

// Sample is the figures of one interval: per-second rates over the real
// time between two readings, and gauges as of the later one.
type Sample struct {
	// AtS is the end of the interval in seconds from the series' origin
	// (for a run, the start of measurement; negative before it).
	AtS float64 `json:"t_s"`
	// ElapsedS is the real length of the interval in seconds.
	ElapsedS float64 `json:"elapsed_s"`
	// Values holds one figure per column key (see monitor.Columns); a
	// column the server or host does not provide is absent.
	Values map[string]float64 `json:"v"`
	// Attention maps a column key to why its figure needs attention
	// ("hit ratio below 99%").
	Attention map[string]string `json:"attention,omitempty"`
	// Failed maps a source's name to why it could not be read.
	Failed map[string]string `json:"failed,omitempty"`

	// Wall is the wall-clock end of the interval, not stored.
	Wall time.Time `json:"-"`
}

// At is the wall-clock end of the interval (zero for a sample read back
// from JSON).
func (s Sample) At() time.Time { return s.Wall }

// Series is a run's per-second server (and host) figures, stored in the
// result document beside the client's intervals.
type Series struct {
	// IntervalS is the sampling interval asked for, in seconds.
	IntervalS float64 `json:"interval_s"`
	// Start is the origin of the samples' AtS, as wall-clock time.
	Start time.Time `json:"start"`
	// Keys lists the column keys present in at least one sample, in display
	// order.
	Keys []string `json:"keys"`
	// Samples are in time order.
	Samples []Sample `json:"samples"`
	// Sources says how each source fared over the whole series.
	Sources []SourceStatus `json:"sources"`
	// OwnStatements counts the statements the sampler sent; they are
	// subtracted from the qps figures.
	OwnStatements int64 `json:"own_statements"`
	// ServerPID is the server process whose CPU was sampled (0 when none).
	ServerPID int `json:"server_pid,omitempty"`
}

// SourceStatus is how one source fared.
type SourceStatus struct {
	Name     string `json:"name"`
	Reads    int    `json:"reads"`
	Failures int    `json:"failures"`
	// LastError is the latest failure, if any.
	LastError string `json:"last_error,omitempty"`
}

// Point is one value of a timeline.
type Point struct {
	T float64 // seconds from the series' origin
	V float64
}

// Points returns the timeline of one column, skipping samples without it.
// It is what a report draws beside the client's per-interval figures.
func (s *Series) Points(key string) []Point {
	if s == nil {
		return nil
	}
	var pts []Point
	for _, smp := range s.Samples {
		if v, ok := smp.Values[key]; ok {
			pts = append(pts, Point{T: smp.AtS, V: v})
		}
	}
	return pts
}

// Mean returns the time-weighted mean of a column over the samples whose
// interval lies within [from, to] seconds of the origin, counting partly
// covered intervals by the covered share. ok is false when nothing is
// covered.
func (s *Series) Mean(key string, from, to float64) (mean float64, covered float64, ok bool) {
	if s == nil {
		return 0, 0, false
	}
	var sum float64
	for _, smp := range s.Samples {
		v, has := smp.Values[key]
		if !has || smp.ElapsedS <= 0 {
			continue
		}
		lo, hi := math.Max(smp.AtS-smp.ElapsedS, from), math.Min(smp.AtS, to)
		if hi <= lo {
			continue
		}
		sum += v * (hi - lo)
		covered += hi - lo
	}
	if covered <= 0 {
		return 0, 0, false
	}
	return sum / covered, covered, true
}

// Shift moves the origin of the samples to start.
func (s *Series) Shift(start time.Time) {
	for i := range s.Samples {
		if !s.Samples[i].Wall.IsZero() {
			s.Samples[i].AtS = stats.Round(s.Samples[i].Wall.Sub(start).Seconds(), 3)
		}
	}
	s.Start = start
}

// Monitor is what watching the server adds to a run's result.
type Monitor struct {
	Server     *Series
	Host       *HostSummary
	CrossCheck *CrossCheck
	// Checks are one-line warnings: pre-flight findings and a mismatch.
	Checks []string
	// Stalls are the stall captures (--stall); StallsSkipped counts the
	// times a trigger held and no capture was taken.
	Stalls        []Stall
	StallsSkipped int
	// HostFacts and ClientFacts are the host facts read at the start.
	HostFacts, ClientFacts *host.Facts
}

// HostSummary is the run's CPU cost on this host.
type HostSummary struct {
	// Local is set when the server runs on this host (host figures and the
	// server's CPU are then in the series).
	Local bool `json:"local"`
	// Cores is this host's number of CPUs.
	Cores     int `json:"cores"`
	ServerPID int `json:"server_pid,omitempty"`
	// ClientCPUS is shakedown's own CPU time (user + system) from the start
	// of the run (the threads connecting included) or, after a warm-up, of
	// measurement, to its end; ClientCPUPerQueryUS is that per measured
	// statement.
	ClientCPUS          float64 `json:"client_cpu_s"`
	ClientCPUPerQueryUS float64 `json:"client_cpu_us_per_query"`
	// ServerCPUPerQueryUS is the server process's CPU per statement over the
	// cross-checked span (local servers only).
	ServerCPUPerQueryUS float64 `json:"server_cpu_us_per_query,omitempty"`
	// Throttling is what the server's cgroup CPU quota did while measuring
	// (local servers whose cgroup counters could be read).
	Throttling *Throttling `json:"throttling,omitempty"`
	// Kernel is what the host's kernel counted while measuring: swap-ins,
	// SYN cookies, listen-queue overflows, context switches (local servers).
	Kernel *KernelCounters `json:"kernel,omitempty"`
}

// Throttling sums the server cgroup's throttling over the measured samples.
type Throttling struct {
	// ThrottledMS is the time the cgroup was throttled, in milliseconds.
	ThrottledMS float64 `json:"throttled_ms"`
	// PeriodsPct is the share of the quota's periods in which it was
	// throttled, averaged over the samples that counted periods; NoQuota
	// is set when none did (no quota: nothing to throttle).
	PeriodsPct float64 `json:"throttled_periods_pct"`
	NoQuota    bool    `json:"no_quota,omitempty"`
	// Samples is how many samples had the counters.
	Samples int `json:"samples"`
}

// ThrottlingOf sums the throttling columns of the measured samples (t_s >
// 0), or returns nil when the series has none.
func ThrottlingOf(s *Series) *Throttling {
	if s == nil {
		return nil
	}
	t := &Throttling{}
	var pct float64
	n := 0
	for _, smp := range s.Samples {
		ms, ok := smp.Values["throttled_ms"]
		if !ok || smp.AtS <= 0 {
			continue
		}
		t.Samples++
		t.ThrottledMS += ms * smp.ElapsedS
		if p, ok := smp.Values["throttled_pct"]; ok {
			pct += p
			n++
		}
	}
	if t.Samples == 0 {
		return nil
	}
	t.ThrottledMS = stats.Round(t.ThrottledMS, 3)
	if n == 0 {
		t.NoQuota = true
	} else {
		t.PeriodsPct = stats.Round(pct/float64(n), 3)
	}
	return t
}
