// Package monitor watches a server while load runs against it: a sampler
// that reads SHOW GLOBAL STATUS (and what only SHOW ENGINE INNODB STATUS
// gives) once per interval and turns consecutive readings into per-second
// figures, host figures from /proc when the server runs on this machine, the
// cross-check of client against server throughput, pre-flight checks before
// a run, and a Prometheus exposition of client and server figures.
//
// Facts come from sources shaped like prometheus/mysqld_exporter's
// collectors: one file per source, each reads its raw values into a Reading;
// a source that fails is reported in the sample's Failed map and the others
// go on. Columns (columns.go) turn two Readings into one Sample.
//
// Nothing here prints to the process's standard streams or reads its
// environment: writers and settings are handed in.
package monitor

import (
	"context"
	"database/sql"
	"math"
	"sort"
	"time"
)

// Querier runs a query; *sql.DB and *sql.Conn are Queriers. The sampler's
// queries carry no arguments, so they go as plain text statements and each
// counts exactly once in the server's Questions.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Reading is the raw values of every source at one instant: cumulative
// counters and current gauges alike, keyed by the source's names (status
// variables as the server spells them, host values prefixed "host.",
// process values prefixed "proc.").
type Reading struct {
	At     time.Time
	Values map[string]float64
	// Failed maps a source's name to why it could not be read this time.
	Failed map[string]string
}

// Sample is the figures of one interval: per-second rates over the real
// time between two readings, and gauges as of the later one.
type Sample struct {
	// AtS is the end of the interval in seconds from the series' origin
	// (for a run, the start of measurement; negative before it).
	AtS float64 `json:"t_s"`
	// ElapsedS is the real length of the interval in seconds.
	ElapsedS float64 `json:"elapsed_s"`
	// Values holds one figure per column key (see Columns); a column the
	// server or host does not provide is absent.
	Values map[string]float64 `json:"v"`
	// Attention maps a column key to why its figure needs attention
	// ("hit ratio below 99%").
	Attention map[string]string `json:"attention,omitempty"`
	// Failed maps a source's name to why it could not be read.
	Failed map[string]string `json:"failed,omitempty"`

	at time.Time
}

// At is the wall-clock end of the interval (zero for a sample read back
// from JSON).
func (s Sample) At() time.Time { return s.at }

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

// Timelines are the columns a report draws by default beside the client's
// throughput and latency: load, concurrency, cache, redo, purge and CPU.
var Timelines = []string{"qps", "tps", "threads_running", "bp_hit", "log_fsyncs", "history_list_length", "cpu_user", "server_cpu"}

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
		if !s.Samples[i].at.IsZero() {
			s.Samples[i].AtS = round3(s.Samples[i].at.Sub(start).Seconds())
		}
	}
	s.Start = start
}

// add appends a sample and notes its columns.
func (s *Series) add(smp Sample) {
	s.Samples = append(s.Samples, smp)
	have := map[string]bool{}
	for _, k := range s.Keys {
		have[k] = true
	}
	added := false
	for k := range smp.Values {
		if !have[k] {
			s.Keys = append(s.Keys, k)
			added = true
		}
	}
	if added {
		sortKeys(s.Keys)
	}
}

// sortKeys puts keys in column order; unknown keys go last, by name.
func sortKeys(keys []string) {
	sort.SliceStable(keys, func(i, j int) bool {
		a, b := columnIndex(keys[i]), columnIndex(keys[j])
		if a != b {
			return a < b
		}
		return keys[i] < keys[j]
	})
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
