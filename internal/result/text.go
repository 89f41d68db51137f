package result

import (
	"fmt"
	"io"
	"strings"

	"github.com/shakedown/shakedown/internal/histogram"
)

// WriteInterval prints one interval line the way sysbench does.
func WriteInterval(w io.Writer, iv Interval, pct float64) {
	fmt.Fprintf(w, "[ %.0fs ] thds: %d tps: %.2f qps: %.2f (r/w/o: %.2f/%.2f/%.2f) lat (ms,%s%%): %.2f err/s: %.2f reconn/s: %.2f\n",
		iv.AtS, iv.Threads, iv.TPS, iv.QPS, iv.ReadQPS, iv.WriteQPS, iv.OtherQPS,
		trimFloat(pct), iv.LatencyPct, iv.ErrorsPS, iv.ReconnPS)
}

func trimFloat(f float64) string {
	s := fmt.Sprintf("%.2f", f)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// WriteSummary prints the final statistics in sysbench's layout, then the
// figures sysbench does not print.
func (r *Result) WriteSummary(w io.Writer) {
	sec := r.TimeS
	per := func(n int64) float64 {
		if sec <= 0 {
			return 0
		}
		return float64(n) / sec
	}
	fmt.Fprintln(w, "SQL statistics:")
	fmt.Fprintln(w, "    queries performed:")
	fmt.Fprintf(w, "        read:                            %d\n", r.Queries.Read)
	fmt.Fprintf(w, "        write:                           %d\n", r.Queries.Write)
	fmt.Fprintf(w, "        other:                           %d\n", r.Queries.Other)
	fmt.Fprintf(w, "        total:                           %d\n", r.Queries.Total)
	fmt.Fprintf(w, "    transactions:                        %-6d (%.2f per sec.)\n", r.Transactions, per(r.Transactions))
	fmt.Fprintf(w, "    queries:                             %-6d (%.2f per sec.)\n", r.Queries.Total, per(r.Queries.Total))
	fmt.Fprintf(w, "    ignored errors:                      %-6d (%.2f per sec.)\n", r.Errors.Total, per(r.Errors.Total))
	fmt.Fprintf(w, "    reconnects:                          %-6d (%.2f per sec.)\n", r.Reconnects, per(r.Reconnects))
	fmt.Fprintln(w)
	fmt.Fprintln(w, "General statistics:")
	fmt.Fprintf(w, "    total time:                          %.4fs\n", r.TimeS)
	fmt.Fprintf(w, "    total number of events:              %d\n", r.Transactions)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Latency (ms):")
	fmt.Fprintf(w, "         min:                              %10.2f\n", r.LatencyMS.Min)
	fmt.Fprintf(w, "         avg:                              %10.2f\n", r.LatencyMS.Avg)
	fmt.Fprintf(w, "         max:                              %10.2f\n", r.LatencyMS.Max)
	fmt.Fprintf(w, "         %-34s%10.2f\n", ordinal(r.Percentile)+" percentile:", r.LatencyMS.Pct)
	fmt.Fprintf(w, "         sum:                              %10.2f\n", r.LatencyMS.Sum)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Threads fairness:")
	fmt.Fprintf(w, "    events (avg/stddev):           %.4f/%.2f\n", r.Fairness.EventsAvg, r.Fairness.EventsStddev)
	fmt.Fprintf(w, "    execution time (avg/stddev):   %.4f/%.2f\n", r.Fairness.TimeAvgS, r.Fairness.TimeStddevS)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Beyond sysbench:")
	fmt.Fprintf(w, "    latency percentiles (ms):      p50 %.3f  p95 %.3f  p99 %.3f  p99.9 %.3f\n",
		r.LatencyMS.P50, r.LatencyMS.P95, r.LatencyMS.P99, r.LatencyMS.P999)
	if r.Errors.Total > 0 {
		parts := make([]string, 0, len(r.Errors.ByCode))
		for _, c := range r.ErrorCodes() {
			parts = append(parts, fmt.Sprintf("%s: %d", c, r.Errors.ByCode[c]))
		}
		fmt.Fprintf(w, "    errors by code:                %s\n", strings.Join(parts, ", "))
	}
	r.writeConnect(w)
	r.writeMonitor(w)
	if r.WarmupS > 0 {
		fmt.Fprintf(w, "    warm-up:                       %.0fs, excluded from every figure above\n", r.WarmupS)
	}
	if a := r.Availability; a != nil {
		fmt.Fprintf(w, "    reconnect attempts:            %d, %d failed\n", a.ReconnectAttempts, a.ReconnectFailures)
	}
	if r.Degraded {
		fmt.Fprintf(w, "    DEGRADED:                      the server could not be reached for %.2fs of the run (first: %s); figures are not comparable\n",
			r.Availability.UnavailableS, r.Availability.FirstError)
	}
	r.writeClient(w)
	r.writeDataCheck(w)
	if r.Interrupted {
		fmt.Fprintln(w, "    INTERRUPTED:                   the run was stopped before its limit; figures cover what ran")
	}
	if r.Error != "" {
		fmt.Fprintf(w, "    FAILED:                        %s\n", r.Error)
	}
	// The table comes last: the lines above all belong to "Beyond sysbench".
	if len(r.Statements) > 0 {
		fmt.Fprintln(w)
		WriteStatementTable(w, r.Statements)
	}
	r.WriteStalls(w)
}

func ordinal(p float64) string {
	s := trimFloat(p)
	switch {
	case strings.HasSuffix(s, "11"), strings.HasSuffix(s, "12"), strings.HasSuffix(s, "13"):
		return s + "th"
	case strings.HasSuffix(s, "1"):
		return s + "st"
	case strings.HasSuffix(s, "2"):
		return s + "nd"
	case strings.HasSuffix(s, "3"):
		return s + "rd"
	}
	return s + "th"
}

// WriteHistogram prints the latency distribution as sysbench's --histogram does.
func WriteHistogram(w io.Writer, h *histogram.Histogram) {
	bars := h.Bars()
	var most int64
	for _, b := range bars {
		if b.Count > most {
			most = b.Count
		}
	}
	fmt.Fprintln(w, "Latency histogram (values are in milliseconds)")
	fmt.Fprintln(w, "       value  ------------- distribution ------------- count")
	for _, b := range bars {
		n := 0
		if most > 0 {
			n = int(b.Count * 40 / most)
		}
		if n == 0 {
			n = 1
		}
		fmt.Fprintf(w, "%12.3f |%-40s %d\n", float64(b.Value)/1e6, strings.Repeat("*", n), b.Count)
	}
	fmt.Fprintln(w)
}
