// Package report turns a stored sweep into the comparison people read: for
// each workload a table per target (throughput, latency, errors), every
// candidate against the control at each thread level with a ratio and a
// verdict, the peak throughput, and the spread across repeats. It writes
// text, Markdown, CSV, JSON or one self-contained HTML file with SVG charts.
// It reads what the store holds and never runs anything.
package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/vars"
)

// Verdicts of a candidate against the control.
const (
	Faster      = "faster"
	Slower      = "slower"
	Noise       = "within noise"
	NoData      = "no data"
	noiseSingle = 0.03
)

// Rule is the verdict rule, printed in every report that has verdicts.
const Rule = "ratio = candidate median QPS / control median QPS at the same workload and thread level. " +
	"With 2 or more successful repeats on both sides, the difference is within noise when |ratio - 1| <= 2 x the larger " +
	"coefficient of variation (CV = standard deviation / mean of QPS across repeats) of the two sides, or when each side's median " +
	"lies inside the other side's min..max range; with a single run on either side, within noise when |ratio - 1| < 3%. " +
	"Otherwise the candidate is faster (ratio > 1) or slower (ratio < 1). Failed and interrupted runs are left out of every figure."

// Stat summarises one figure across repeats.
type Stat struct {
	N      int
	Median float64
	Min    float64
	Max    float64
	// CV is the coefficient of variation (sample standard deviation / mean);
	// 0 with fewer than two values.
	CV float64
}

func newStat(xs []float64) Stat {
	if len(xs) == 0 {
		return Stat{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	st := Stat{N: len(s), Min: s[0], Max: s[len(s)-1], Median: median(s)}
	if len(s) > 1 {
		var sum float64
		for _, x := range s {
			sum += x
		}
		mean := sum / float64(len(s))
		var v float64
		for _, x := range s {
			v += (x - mean) * (x - mean)
		}
		if mean > 0 {
			st.CV = math.Sqrt(v/float64(len(s)-1)) / mean
		}
	}
	return st
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// Row is one target at one thread level of one workload.
type Row struct {
	Workload string
	Target   string
	Role     string
	Threads  int
	Failed   int // failed or interrupted runs, left out of the figures
	QPS      Stat
	TPS      float64 // median
	// Latency figures are medians across repeats, except Max, the largest.
	LatAvg, LatP95, LatP99, LatMax float64
	Errors                         int64 // summed over repeats
	// Compared is set for candidates.
	Compared *Comparison
	// Runs are the successful runs, in step order (for timelines).
	Runs []store.Run
}

// Comparison is one candidate against the control at one thread level.
type Comparison struct {
	Candidate string
	Control   string
	Threads   int
	Ratio     float64 // 0 when either side has no data
	Verdict   string
}

// Peak is where a target's QPS was highest.
type Peak struct {
	Target  string
	QPS     float64
	Threads int
}

// Workload is everything about one workload of the sweep.
type Workload struct {
	Name    string
	Threads []int
	// Rows are grouped by target in plan order, thread levels ascending.
	Rows  []*Row
	Peaks []Peak
}

// Row returns the row of target at threads, or nil.
func (w *Workload) Row(target string, threads int) *Row {
	for _, r := range w.Rows {
		if r.Target == target && r.Threads == threads {
			return r
		}
	}
	return nil
}

// Report is a sweep analysed.
type Report struct {
	Sweep     store.Sweep
	Targets   []store.Target
	Control   string
	Workloads []*Workload
	// Unfinished are the failed, interrupted and degraded runs.
	Unfinished []store.Run
	// Differing are the variables whose values differ between targets,
	// sorted by name.
	Differing []string
	// Connections say how each target's runs connected (client path and
	// TLS), for the targets whose results recorded it.
	Connections map[string]string
}

// Build analyses a stored sweep.
func Build(d *store.SweepData) *Report {
	r := &Report{Sweep: d.Sweep, Targets: d.Targets}
	for _, t := range d.Targets {
		if t.Role == "control" {
			r.Control = t.Name
		}
	}
	role := map[string]string{}
	order := map[string]int{}
	for i, t := range d.Targets {
		role[t.Name] = t.Role
		order[t.Name] = i
	}
	// Workloads in plan order, then any others in order of appearance.
	var names []string
	seenW := map[string]bool{}
	for _, n := range d.Sweep.Settings.Workloads {
		if !seenW[n] {
			seenW[n] = true
			names = append(names, n)
		}
	}
	for _, run := range d.Runs {
		if !seenW[run.Workload] {
			seenW[run.Workload] = true
			names = append(names, run.Workload)
		}
		if _, ok := order[run.Target]; !ok {
			order[run.Target] = len(order)
			role[run.Target] = run.Role
		}
	}
	targets := make([]string, len(order))
	for n, i := range order {
		targets[i] = n
	}
	for _, name := range names {
		w := &Workload{Name: name}
		levels := map[int]bool{}
		for _, t := range d.Sweep.Settings.Threads {
			levels[t] = true
		}
		type key struct {
			target  string
			threads int
		}
		groups := map[key][]store.Run{}
		for _, run := range d.Runs {
			if run.Workload != name {
				continue
			}
			levels[run.Threads] = true
			groups[key{run.Target, run.Threads}] = append(groups[key{run.Target, run.Threads}], run)
		}
		for t := range levels {
			w.Threads = append(w.Threads, t)
		}
		sort.Ints(w.Threads)
		for _, tg := range targets {
			for _, th := range w.Threads {
				w.Rows = append(w.Rows, newRow(name, tg, role[tg], th, groups[key{tg, th}]))
			}
		}
		for _, row := range w.Rows {
			if row.Role == "control" {
				continue
			}
			ctl := w.Row(r.Control, row.Threads)
			row.Compared = compare(row, ctl, r.Control)
		}
		for _, tg := range targets {
			p := Peak{Target: tg}
			for _, th := range w.Threads {
				if row := w.Row(tg, th); row != nil && row.QPS.N > 0 && row.QPS.Median > p.QPS {
					p.QPS, p.Threads = row.QPS.Median, th
				}
			}
			w.Peaks = append(w.Peaks, p)
		}
		r.Workloads = append(r.Workloads, w)
	}
	for _, run := range d.Runs {
		if run.Status != store.RunOK || run.Degraded {
			r.Unfinished = append(r.Unfinished, run)
		}
	}
	r.Differing = differing(d.Targets)
	r.Connections = connections(d.Runs)
	return r
}

func newRow(workload, target, role string, threads int, runs []store.Run) *Row {
	row := &Row{Workload: workload, Target: target, Role: role, Threads: threads}
	var qps, tps, avg, p95, p99 []float64
	for _, run := range runs {
		if run.Status != store.RunOK || run.Degraded || run.Result == nil {
			row.Failed++ // degraded: the server was away part of the time
			continue
		}
		res := run.Result
		row.Runs = append(row.Runs, run)
		qps = append(qps, res.QPS)
		tps = append(tps, res.TPS)
		avg = append(avg, res.LatencyMS.Avg)
		p95 = append(p95, res.LatencyMS.P95)
		p99 = append(p99, res.LatencyMS.P99)
		row.LatMax = math.Max(row.LatMax, res.LatencyMS.Max)
		row.Errors += res.Errors.Total
	}
	row.QPS = newStat(qps)
	row.TPS = newStat(tps).Median
	row.LatAvg = newStat(avg).Median
	row.LatP95 = newStat(p95).Median
	row.LatP99 = newStat(p99).Median
	return row
}

// compare applies Rule.
func compare(cand, ctl *Row, control string) *Comparison {
	c := &Comparison{Candidate: cand.Target, Control: control, Threads: cand.Threads, Verdict: NoData}
	if ctl == nil || ctl.QPS.N == 0 || cand.QPS.N == 0 || ctl.QPS.Median <= 0 {
		return c
	}
	a, b := cand.QPS, ctl.QPS
	c.Ratio = a.Median / b.Median
	diff := math.Abs(c.Ratio - 1)
	noise := false
	if a.N >= 2 && b.N >= 2 {
		noise = diff <= 2*math.Max(a.CV, b.CV) ||
			(a.Median >= b.Min && a.Median <= b.Max && b.Median >= a.Min && b.Median <= a.Max)
	} else {
		noise = diff < noiseSingle
	}
	switch {
	case noise:
		c.Verdict = Noise
	case c.Ratio > 1:
		c.Verdict = Faster
	default:
		c.Verdict = Slower
	}
	return c
}

// differing lists the variables whose values differ between the targets,
// ordered and filtered as "shakedown vars diff" does: those known to change
// performance first, per-instance values (paths, ports, ids) left out.
func differing(targets []store.Target) []string {
	if len(targets) < 2 {
		return nil
	}
	sets := make([]map[string]string, len(targets))
	for i, t := range targets {
		sets[i] = t.Variables
	}
	var out []string
	for _, d := range vars.Compare(sets, false) {
		out = append(out, d.Name)
	}
	return out
}

// Comparisons lists every comparison of the workload, by thread level then
// candidate.
func (w *Workload) Comparisons() []*Comparison {
	var out []*Comparison
	for _, th := range w.Threads {
		for _, r := range w.Rows {
			if r.Threads == th && r.Compared != nil {
				out = append(out, r.Compared)
			}
		}
	}
	return out
}

// Candidates are the candidate targets, in plan order.
func (r *Report) Candidates() []string {
	var out []string
	for _, t := range r.Targets {
		if t.Role != "control" {
			out = append(out, t.Name)
		}
	}
	return out
}

// Formats are the names Write accepts.
var Formats = []string{"text", "md", "csv", "json", "html"}

// Write writes r in format to w.
func Write(w io.Writer, format string, r *Report) error {
	var err error
	switch format {
	case "text":
		err = WriteText(w, r)
	case "md":
		err = WriteMarkdown(w, r)
	case "csv":
		err = WriteCSV(w, r)
	case "json":
		err = WriteJSON(w, r)
	case "html":
		err = WriteHTML(w, r)
	default:
		return fmt.Errorf("write report: unknown format %q; formats: %s", format, strings.Join(Formats, ", "))
	}
	if err != nil {
		return fmt.Errorf("write %s report: %w", format, err)
	}
	return nil
}
