package result

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/shakedown/shakedown/internal/histogram"
)

// ConnectStats are the connections a run opened while measuring and how
// long opening them took (TCP, handshake, authentication). Event latency
// leaves this time out when a connection is opened for every event or
// statement.
type ConnectStats struct {
	// Mode is --connect-mode: persistent, transaction or query.
	Mode      string  `json:"mode"`
	Count     int64   `json:"count"`
	PerSec    float64 `json:"per_sec"`
	LatencyMS Latency `json:"latency_ms"`
	// Histogram is kept by the runners of a split load, so that their
	// connect latencies can be merged exactly.
	Histogram *histogram.Snapshot `json:"histogram,omitempty"`
}

// ConnectPersistent is ConnectStats.Mode of a run that kept one
// connection per thread (--connect-mode=persistent).
const ConnectPersistent = "persistent"

// StatementStats are one statement's figures in a workload that reports per
// statement.
type StatementStats struct {
	Name      string  `json:"name"`
	Count     int64   `json:"count"`
	QPS       float64 `json:"qps"`
	Errors    Errors  `json:"errors"`
	LatencyMS Latency `json:"latency_ms"`
	// Histogram is kept by the runners of a split load, so that their
	// statements' latencies can be merged exactly.
	Histogram *histogram.Snapshot `json:"histogram,omitempty"`
}

// LatencyOf summarises h in milliseconds, with pct as the requested
// percentile.
func LatencyOf(h *histogram.Histogram, pct float64) Latency {
	return Latency{
		Min: Millis(h.Min()), Avg: Millis(h.Mean()), Max: Millis(h.Max()), Sum: Millis(h.Sum()),
		P50: Millis(h.Percentile(50)), P95: Millis(h.Percentile(95)), P99: Millis(h.Percentile(99)),
		P999: Millis(h.Percentile(99.9)), Pct: Millis(h.Percentile(pct)),
	}
}

// ErrorsOf converts errors by code.
func ErrorsOf(m map[uint16]int64) Errors {
	e := Errors{ByCode: map[string]int64{}}
	for code, n := range m {
		e.ByCode[strconv.Itoa(int(code))] = n
		e.Total += n
	}
	return e
}

// writeConnect prints the connect figures, when the run has them.
func (r *Result) writeConnect(w io.Writer) {
	if c := r.Connect; c != nil {
		fmt.Fprintf(w, "    connect mode:                  %s\n", c.Mode)
		fmt.Fprintf(w, "    connections opened:            %d (%.2f per sec.)\n", c.Count, c.PerSec)
		if c.Count > 0 {
			fmt.Fprintf(w, "    connect latency (ms):          avg %.3f  p50 %.3f  p95 %.3f  p99 %.3f  max %.3f\n",
				c.LatencyMS.Avg, c.LatencyMS.P50, c.LatencyMS.P95, c.LatencyMS.P99, c.LatencyMS.Max)
		}
		if c.Mode != ConnectPersistent {
			fmt.Fprintln(w, "    (event latency above leaves connecting and disconnecting out)")
		}
	}
}

// WriteStatementTable prints one line per statement: count, rate, latency
// and errors.
func WriteStatementTable(w io.Writer, stmts []StatementStats) {
	fmt.Fprintln(w, "Per statement (latency in ms):")
	fmt.Fprintf(w, "    %10s %10s %9s %9s %9s %9s %9s %7s  %s\n", "count", "per sec", "avg", "p50", "p95", "p99", "max", "errors", "statement")
	for _, s := range stmts {
		fmt.Fprintf(w, "    %10d %10.2f %9.3f %9.3f %9.3f %9.3f %9.3f %7d  %s\n",
			s.Count, s.QPS, s.LatencyMS.Avg, s.LatencyMS.P50, s.LatencyMS.P95, s.LatencyMS.P99, s.LatencyMS.Max, s.Errors.Total, s.Name)
		if s.Errors.Total > 0 {
			codes := SortedCodes(s.Errors.ByCode)
			parts := make([]string, len(codes))
			for i, c := range codes {
				parts[i] = fmt.Sprintf("%s: %d", c, s.Errors.ByCode[c])
			}
			fmt.Fprintf(w, "    %10s errors by code: %s\n", "", strings.Join(parts, ", "))
		}
	}
}
