package slap

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/histogram"
)

// timing returns mysqlslap's figures in whole milliseconds: the average,
// the minimum and the maximum time of an iteration.
func (lv *levelStats) timing() (avg, lo, hi int64) {
	var sum int64
	for i, t := range lv.times {
		ms := t.Milliseconds()
		sum += ms
		if i == 0 || ms < lo {
			lo = ms
		}
		if ms > hi {
			hi = ms
		}
	}
	return sum / int64(len(lv.times)), lo, hi
}

func secs(ms int64) string { return fmt.Sprintf("%d.%03d", ms/1000, ms%1000) }

// printLevel prints mysqlslap's summary of one concurrency, then what
// mysqlslap does not say.
func (s *session) printLevel(lv *levelStats) {
	w := s.env.Out
	avg, lo, hi := lv.timing()
	fmt.Fprintln(w, "Benchmark")
	if lv.engine != "" {
		fmt.Fprintf(w, "\tRunning for engine %s\n", lv.engine)
	}
	fmt.Fprintf(w, "\tAverage number of seconds to run all queries: %s seconds\n", secs(avg))
	fmt.Fprintf(w, "\tMinimum number of seconds to run all queries: %s seconds\n", secs(lo))
	fmt.Fprintf(w, "\tMaximum number of seconds to run all queries: %s seconds\n", secs(hi))
	fmt.Fprintf(w, "\tNumber of clients running queries: %d\n", lv.clients)
	fmt.Fprintf(w, "\tAverage number of queries per client: %d\n", lv.limit)
	fmt.Fprintln(w)

	var total time.Duration
	for _, t := range lv.times {
		total += t
	}
	qps := 0.0
	if total > 0 {
		qps = float64(lv.queries) / total.Seconds()
	}
	stmts := lv.outcome()
	all := histogram.New()
	errs := map[uint16]int64{}
	for _, st := range stmts {
		all.Merge(st.Latency)
		for c, n := range st.Errors {
			errs[c] += n
		}
	}
	for c, n := range lv.errors {
		errs[c] += n
	}
	fmt.Fprintln(w, "\tBeyond mysqlslap:")
	fmt.Fprintf(w, "\tQueries per second: %.2f (%d queries in %.3f s, %d iteration(s))\n", qps, lv.queries, total.Seconds(), len(lv.times))
	if c := lv.client; c != nil {
		fmt.Fprintf(w, "\tClient I/O: %s\n", c.IO)
		if c.Bound {
			fmt.Fprintf(w, "\tCLIENT-BOUND: %s\n", c.BoundNote("level"))
		}
	}
	if lv.connects > 0 {
		c := lv.connLat
		fmt.Fprintf(w, "\tConnections: %d, connect latency (ms): avg %.3f  p50 %.3f  p95 %.3f  p99 %.3f  max %.3f\n",
			lv.connects, ms(c.Mean()), ms(c.Percentile(50)), ms(c.Percentile(95)), ms(c.Percentile(99)), ms(c.Max()))
	}
	if all.Count() > 0 {
		fmt.Fprintf(w, "\tLatency (ms), all statements: min %.3f  avg %.3f  p50 %.3f  p95 %.3f  p99 %.3f  p99.9 %.3f  max %.3f\n",
			ms(all.Min()), ms(all.Mean()), ms(all.Percentile(50)), ms(all.Percentile(95)), ms(all.Percentile(99)), ms(all.Percentile(99.9)), ms(all.Max()))
		fmt.Fprintln(w, "\tPer statement (latency in ms):")
		fmt.Fprintf(w, "\t%10s %9s %9s %9s %9s %9s %7s  %s\n", "count", "avg", "p50", "p95", "p99", "max", "errors", "statement")
		for _, st := range stmts {
			h := st.Latency
			var ne int64
			for _, n := range st.Errors {
				ne += n
			}
			if h.Count() == 0 && ne == 0 {
				continue
			}
			fmt.Fprintf(w, "\t%10d %9.3f %9.3f %9.3f %9.3f %9.3f %7d  %s\n",
				h.Count(), ms(h.Mean()), ms(h.Percentile(50)), ms(h.Percentile(95)), ms(h.Percentile(99)), ms(h.Max()), ne, st.Name)
		}
	}
	fmt.Fprintf(w, "\tErrors by code: %s\n", errorList(errs))
	if c := lv.dataCheck; c != nil {
		if c.OK() {
			fmt.Fprintf(w, "\tHot-row check: %s changed by %d, as the %d rows the updates changed account for\n", c.What, c.Observed, c.Committed)
		} else {
			fmt.Fprintf(w, "\t%s\n", c.Finding())
		}
	}
	if lv.stopped != nil {
		fmt.Fprintf(w, "\tSTOPPED: %v\n", lv.stopped)
	}
	fmt.Fprintln(w)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func errorList(m map[uint16]int64) string {
	if len(m) == 0 {
		return "none"
	}
	codes := make([]int, 0, len(m))
	for c := range m {
		codes = append(codes, int(c))
	}
	sort.Ints(codes)
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = fmt.Sprintf("%d: %d", c, m[uint16(c)])
	}
	return strings.Join(parts, ", ")
}

// printCSV writes mysqlslap's CSV line: engine, load type, average,
// minimum and maximum seconds, clients, queries per client.
func (s *session) printCSV(lv *levelStats) {
	avg, lo, hi := lv.timing()
	fmt.Fprintf(s.csv, "%s,%s,%s,%s,%s,%d,%d\n", lv.engine, s.b.o.LoadType, secs(avg), secs(lo), secs(hi), lv.clients, lv.limit)
}
