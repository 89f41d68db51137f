package result

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/shakedown/shakedown/internal/histogram"
	"github.com/shakedown/shakedown/internal/runner"
	"github.com/shakedown/shakedown/internal/stats"
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

// KeepHistograms adds the connect and per-statement histograms of o to r,
// which a merge of split runners needs.
func (r *Result) KeepHistograms(o *runner.Outcome) error {
	if r.Connect != nil && o.ConnectLatency != nil {
		s, err := o.ConnectLatency.Snapshot()
		if err != nil {
			return err
		}
		r.Connect.Histogram = &s
	}
	for i, st := range o.Statements {
		if i >= len(r.Statements) || st.Latency == nil {
			break
		}
		s, err := st.Latency.Snapshot()
		if err != nil {
			return err
		}
		r.Statements[i].Histogram = &s
	}
	return nil
}

// LatencyOf summarises h in milliseconds, with pct as the requested
// percentile.
func LatencyOf(h *histogram.Histogram, pct float64) Latency {
	return Latency{
		Min: msr(h.Min()), Avg: msr(h.Mean()), Max: msr(h.Max()), Sum: msr(h.Sum()),
		P50: msr(h.Percentile(50)), P95: msr(h.Percentile(95)), P99: msr(h.Percentile(99)),
		P999: msr(h.Percentile(99.9)), Pct: msr(h.Percentile(pct)),
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

func (r *Result) buildConnectAndStatements(o *runner.Outcome) error {
	sec := o.Elapsed.Seconds()
	per := func(n int64) float64 {
		if sec <= 0 {
			return 0
		}
		return stats.Round(float64(n)/sec, 2)
	}
	if o.ConnectMode != runner.Persistent || o.Connects > 0 {
		h := o.ConnectLatency
		if h == nil {
			h = histogram.New()
		}
		r.Connect = &ConnectStats{
			Mode:      o.ConnectMode.String(),
			Count:     o.Connects,
			PerSec:    per(o.Connects),
			LatencyMS: LatencyOf(h, r.Percentile),
		}
	}
	for _, s := range o.Statements {
		n := s.Latency.Count()
		r.Statements = append(r.Statements, StatementStats{
			Name:      s.Name,
			Count:     n,
			QPS:       per(n),
			Errors:    ErrorsOf(s.Errors),
			LatencyMS: LatencyOf(s.Latency, r.Percentile),
		})
	}
	return nil
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
		if c.Mode != runner.Persistent.String() {
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
			codes := make([]string, 0, len(s.Errors.ByCode))
			for c := range s.Errors.ByCode {
				codes = append(codes, c)
			}
			sort.Slice(codes, func(i, j int) bool {
				a, _ := strconv.Atoi(codes[i])
				b, _ := strconv.Atoi(codes[j])
				return a < b
			})
			parts := make([]string, len(codes))
			for i, c := range codes {
				parts[i] = fmt.Sprintf("%s: %d", c, s.Errors.ByCode[c])
			}
			fmt.Fprintf(w, "    %10s errors by code: %s\n", "", strings.Join(parts, ", "))
		}
	}
}
