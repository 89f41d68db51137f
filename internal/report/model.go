// Package report turns a stored sweep into the comparison people read: for
// each workload a table per target (throughput, latency, errors), every
// candidate against the control at each thread level with the ratio of
// medians, its interval and its state (internal/stats), the peak
// throughput, the spread across repeats, unsteady runs, drift of the
// control, and the noise an A/A pair measured. It writes
// text, Markdown, CSV, JSON or one self-contained HTML file with SVG charts.
// It reads what the store holds and never runs anything.
package report

import (
	"fmt"
	"github.com/shakedown/shakedown/internal/result"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/stats"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/vars"
)

// Stat summarises one figure across repeats.
type Stat = stats.Summary

// Method says in plain words how every comparison of a report is made;
// the report prints it with its own threshold and confidence.
func Method(threshold, confidence float64) string {
	return fmt.Sprintf("Each repeat of a step is one sample. ratio = candidate median / control median at the same workload and thread "+
		"level, for QPS, TPS and the p95 and p99 latency. Its %s interval is the exact distribution-free one that goes with the "+
		"Mann-Whitney U test (every candidate run divided by every control run; the interval runs from the k-th smallest of those ratios "+
		"to the k-th largest, k from the exact distribution of U), so the same runs always give the same report. "+
		"faster or slower: the whole interval lies beyond the noise threshold of %s (for latency, lower is faster); "+
		"same: the whole interval lies within +/-%s; inconclusive: neither, with an estimate of the runs per side that would settle it. "+
		"With 1 run on either side there is no verdict, and fewer than 4 runs a side (3 against 5) are too few for a 95%% interval: inconclusive. "+
		"Failed and interrupted runs are left out of every figure.",
		pct0(confidence), pct0(threshold), pct0(threshold))
}

func pct0(x float64) string {
	return strconv.FormatFloat(x*100, 'f', -1, 64) + "%"
}

// Row is one target at one thread level of one workload.
type Row struct {
	Workload    string
	Target      string
	Role        string
	Threads     int
	Failed      int // failed runs, left out of the figures
	Interrupted int // interrupted runs, left out of the figures
	// LostUpdates counts the runs, failed and so among Failed, whose
	// data check found lost updates: a comparison with the row is Wrong.
	LostUpdates int
	QPS         Stat
	TPS         float64 // median
	// Latency figures are medians across repeats, except Max, the largest.
	LatAvg, LatP95, LatP99, LatMax float64
	Errors                         int64 // summed over repeats
	// ErrorsByCode is Errors by MySQL error number, summed over repeats.
	ErrorsByCode map[string]int64
	// Compared is set for candidates.
	Compared *Comparison
	// Runs are the successful runs, in step order (for timelines).
	Runs []store.Run
	// Unsteady are the runs among Runs whose pace was not steady.
	Unsteady []Unsteady
	// ClientBound are the runs among Runs that the client limited: a
	// comparison with this row is inconclusive.
	ClientBound []store.Run

	qps, tps, p95, p99 []float64 // one sample per run, in step order
}

// Unsteady is a run whose per-second QPS was not steady.
type Unsteady struct {
	Run    store.Run
	Steady stats.Steadiness
}

// Comparison is one candidate against the control at one thread level.
type Comparison struct {
	Candidate string
	Control   string
	Threads   int
	// QPS, TPS, P95 and P99 are the comparisons of each figure.
	QPS, TPS, P95, P99 stats.Comparison
	Ratio              float64 // of QPS; 0 when either side has no data
	// Verdict is the state of the QPS comparison, or stats.NoData.
	Verdict stats.State
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
	// Scaling is the Universal Scalability Law fitted to each target's
	// QPS, in target order; empty below stats.MinUSLLevels thread levels.
	Scaling []Scaling
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
	// Unfinished are the failed, interrupted, partial and degraded runs.
	Unfinished []store.Run
	// RunAgain are the runs of a step that a later run of the same step
	// replaced (a resume ran it again): kept in the store, left out here.
	RunAgain []store.Run
	// Notes are what the sweep did to the data besides its steps:
	// prepares, drops, data kept or made again on resume, levels
	// restarted, targets skipped.
	Notes []store.Note
	// Splits are the steps merged from the runners of a split load.
	Splits []store.Run
	// Differing are the variables whose values differ between targets,
	// sorted by name.
	Differing []string
	// Connections say how each target's runs connected (client path and
	// TLS), for the targets whose results recorded it.
	Connections map[string]string
	// Host is the targets' host facts and the settings that differ; nil
	// when no run recorded host facts.
	Host *HostEnv
	// Stalls are the runs' stall captures (--stall), in run order.
	Stalls []StallRun
	// Threshold and Confidence are what the comparisons used.
	Threshold, Confidence float64
	// AAPairs maps each candidate that is the same server and database as
	// the control to how that was told (server_uuid or hostname:port).
	AAPairs map[string]string
	// Drift is how the control's repeats moved within each workload and
	// thread level across the sweep.
	Drift stats.Trend
	// Moved, in a comparison with a baseline (JudgeBaseline), lists the
	// figures that moved as far as every other target beside them: the
	// machine changed.
	Moved []string
	// Bisect, when set, is a vars bisect between two of the servers: which
	// of the differing variables make the difference (see bisect.go).
	Bisect *result.Bisect
}

// Counted says whether a run's figures count; store.Counted decides.
func Counted(run store.Run) bool { return store.Counted(run) }

// Latest keeps the last run of each step; store.Latest decides.
func Latest(runs []store.Run) []store.Run { return store.Latest(runs) }

// Build analyses a stored sweep.
func Build(d *store.SweepData) *Report {
	r := &Report{Sweep: d.Sweep, Targets: d.Targets, Threshold: d.Sweep.Settings.NoiseThreshold, Confidence: stats.DefaultConfidence,
		Notes: d.Notes}
	if d.Sweep.ID != 0 {
		shallow := *d
		shallow.Runs, r.RunAgain = store.SplitLatest(d.Runs)
		d = &shallow
	}
	if r.Threshold <= 0 {
		r.Threshold = stats.DefaultThreshold
	}
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
		// Runs made one by one planned nothing: only the levels they ran.
		if !r.loose() {
			for _, t := range d.Sweep.Settings.Threads {
				levels[t] = true
			}
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
				runs := groups[key{tg, th}]
				if r.loose() && len(runs) == 0 {
					continue
				}
				w.Rows = append(w.Rows, r.newRow(name, tg, role[tg], th, runs))
			}
		}
		for _, row := range w.Rows {
			if row.Role == "control" {
				continue
			}
			ctl := w.Row(r.Control, row.Threads)
			row.Compared = r.compare(row, ctl)
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
		w.Scaling = scalingOf(w, targets)
		r.Workloads = append(r.Workloads, w)
	}
	for _, run := range d.Runs {
		if !Counted(run) {
			r.Unfinished = append(r.Unfinished, run)
		}
	}
	r.Splits = splitRuns(d.Runs)
	r.Differing = differing(d.Targets)
	r.Connections = connections(d.Runs)
	r.Host = hostEnv(d.Runs, d.Targets, r.Control)
	r.Stalls = stallRuns(d.Runs)
	r.AAPairs = sameServers(d.Targets, r.Control)
	var series [][]float64
	for _, w := range r.Workloads {
		for _, row := range w.Rows {
			if row.Target == r.Control {
				series = append(series, row.qps)
			}
		}
	}
	r.Drift = stats.Drift(series)
	return r
}

func (r *Report) newRow(workload, target, role string, threads int, runs []store.Run) *Row {
	row := &Row{Workload: workload, Target: target, Role: role, Threads: threads}
	var avg []float64
	for _, run := range runs {
		if lostUpdates(run) {
			row.LostUpdates++
		}
		if !Counted(run) {
			if run.Status == store.RunInterrupted {
				row.Interrupted++
			} else {
				row.Failed++ // degraded too: the server was away part of the time
			}
			continue
		}
		res := run.Result
		row.Runs = append(row.Runs, run)
		row.qps = append(row.qps, res.QPS)
		row.tps = append(row.tps, res.TPS)
		avg = append(avg, res.LatencyMS.Avg)
		row.p95 = append(row.p95, res.LatencyMS.P95)
		row.p99 = append(row.p99, res.LatencyMS.P99)
		row.LatMax = math.Max(row.LatMax, res.LatencyMS.Max)
		row.Errors += res.Errors.Total
		for code, n := range res.Errors.ByCode {
			if row.ErrorsByCode == nil {
				row.ErrorsByCode = map[string]int64{}
			}
			row.ErrorsByCode[code] += n
		}
		if res.ClientBound() {
			row.ClientBound = append(row.ClientBound, run)
		}
		per := make([]float64, len(res.Intervals))
		for i, iv := range res.Intervals {
			per[i] = iv.QPS
		}
		if s := stats.Steady(per, r.Threshold); s.Unsteady {
			row.Unsteady = append(row.Unsteady, Unsteady{Run: run, Steady: s})
		}
	}
	row.QPS = stats.Summarize(row.qps)
	row.TPS = stats.Median(row.tps)
	row.LatAvg = stats.Median(avg)
	row.LatP95 = stats.Median(row.p95)
	row.LatP99 = stats.Median(row.p99)
	return row
}

// compare compares a candidate's row with the control's, figure by figure.
func (r *Report) compare(cand, ctl *Row) *Comparison {
	c := &Comparison{Candidate: cand.Target, Control: r.Control, Threads: cand.Threads, Verdict: stats.NoData}
	if ctl == nil {
		ctl = &Row{}
	}
	o := stats.Options{Threshold: r.Threshold, Confidence: r.Confidence}
	lo := o
	lo.LowerIsBetter = true
	c.QPS = stats.Compare(ctl.qps, cand.qps, o)
	c.TPS = stats.Compare(ctl.tps, cand.tps, o)
	c.P95 = stats.Compare(ctl.p95, cand.p95, lo)
	c.P99 = stats.Compare(ctl.p99, cand.p99, lo)
	if ctl.LostUpdates > 0 || cand.LostUpdates > 0 {
		c.wrong()
		return c
	}
	if ctl.QPS.N == 0 || cand.QPS.N == 0 || ctl.QPS.Median <= 0 {
		return c
	}
	if len(ctl.ClientBound) > 0 || len(cand.ClientBound) > 0 {
		// A run the client limited measured the client: no figure of
		// this pair says anything about the servers.
		for _, f := range []*stats.Comparison{&c.QPS, &c.TPS, &c.P95, &c.P99} {
			*f = f.ClientBound()
		}
	}
	c.Ratio = c.QPS.Ratio
	c.Verdict = c.QPS.State
	return c
}

// sameServers finds the candidates that are the same server and database
// as the control: the same server_uuid (MySQL), else the same hostname and
// port, and the same database in the URL. Each is mapped to how it was
// told.
func sameServers(targets []store.Target, control string) map[string]string {
	var ctl *store.Target
	for i := range targets {
		if targets[i].Name == control {
			ctl = &targets[i]
		}
	}
	if ctl == nil {
		return nil
	}
	out := map[string]string{}
	for _, t := range targets {
		if t.Name == control {
			continue
		}
		if same, how := vars.SameServer(ctl.Variables, t.Variables); same && dbOf(ctl.URL) == dbOf(t.URL) {
			out[t.Name] = how
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// dbOf is the database a target URL names.
func dbOf(url string) string {
	rest := url
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	i := strings.Index(rest, "/")
	if i < 0 {
		return ""
	}
	db := rest[i+1:]
	if j := strings.IndexAny(db, "?#"); j >= 0 {
		db = db[:j]
	}
	return db
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

// formats are the ways Write writes a report, in the order Formats names
// them.
var formats = []outfile.Format[*Report]{
	{Name: "text", Write: WriteText},
	{Name: "md", Write: WriteMarkdown},
	{Name: "csv", Write: WriteCSV},
	{Name: "json", Write: WriteJSON},
	{Name: "html", Write: WriteHTML},
}

// Formats are the names Write accepts.
var Formats = outfile.FormatNames(formats)

// Write writes r in format to w.
func Write(w io.Writer, format string, r *Report) error {
	return outfile.WriteFormat(w, "report", format, formats, r)
}
