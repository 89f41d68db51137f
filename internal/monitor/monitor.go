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
	"github.com/shakedown/shakedown/internal/result"
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

// Timelines are the columns a report draws by default beside the client's
// throughput and latency: load, concurrency, cache, redo, purge and CPU.
var Timelines = []string{"qps", "tps", "threads_running", "bp_hit", "log_fsyncs", "history_list_length", "cpu_user", "server_cpu"}

// addSample appends a sample and notes its columns.
func addSample(s *result.Series, smp result.Sample) {
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
