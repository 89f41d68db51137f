package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/shakedown/shakedown/internal/stats"
)

// writeFindings writes what bears on trusting the verdicts: the noise an
// A/A pair measured, the control's drift, and unsteady runs.
// With brief set (the summary a sweep prints) the unsteady runs are cut to
// the first few.
func (r *Report) writeFindings(w io.Writer, brief bool) {
	for _, line := range r.aaLines() {
		fmt.Fprintln(w)
		wrap(w, line, 100, "")
	}
	for _, line := range r.warningLines() {
		fmt.Fprintln(w)
		wrap(w, line, 100, "")
	}
	if t := r.unsteadyTable(); len(t.rows) > 0 {
		fmt.Fprintf(w, "\nUnsteady runs (their per-second QPS moved beyond the %s noise threshold, or spread with a CV above %s)\n",
			pct0(r.Threshold), pct0(stats.HighCV))
		more := 0
		if brief && len(t.rows) > briefUnsteady {
			more = len(t.rows) - briefUnsteady
			t.rows = t.rows[:briefUnsteady]
		}
		t.writeText(w, "  ")
		if more > 0 {
			fmt.Fprintf(w, "  ... and %d more (shakedown report lists them all)\n", more)
		}
	}
}

// warningLines are the findings that weaken verdicts, in the order every
// format gives them: client-bound runs, runs driven differently, figures
// the machine moved, the control's drift and unsteady runs; none empty.
func (r *Report) warningLines() []string {
	var out []string
	for _, l := range []string{r.clientBoundLine(), r.drivenLine(), r.movedLine(), r.driftLine(), r.unsteadyLine()} {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// maxDriven is how many cells the driven-differently finding names.
const maxDriven = 8

// drivenCells are the compared cells in which the client drove the
// control's runs and the candidate's in different ways (see
// result.ClientIO.Kind), each with both ways; cells whose runs do not say
// how are left out.
func (r *Report) drivenCells() []string {
	// kinds is how a row's runs were driven, in a few words.
	kinds := func(row *Row) string {
		var ks []string
		for _, run := range row.Runs {
			if c := run.Result.Client; c != nil && c.IO != nil && !slices.Contains(ks, c.IO.Kind()) {
				ks = append(ks, c.IO.Kind())
			}
		}
		sort.Strings(ks)
		return strings.Join(ks, " or ")
	}
	var cells []string
	for _, w := range r.Workloads {
		for _, row := range w.Rows {
			if row.Compared == nil {
				continue
			}
			ctl := w.Row(row.Compared.Control, row.Threads)
			if ctl == nil {
				continue
			}
			if a, b := kinds(ctl), kinds(row); a != "" && b != "" && a != b {
				cells = append(cells, fmt.Sprintf("%s at %d threads, %s by %s and %s by %s", w.Name, row.Threads, ctl.Target, a, row.Target, b))
			}
		}
	}
	return cells
}

// drivenLine names the cells that the client drove differently on the two
// sides (drivenCells): their comparison measures the client's way to each
// server as well as the servers. "" when there are none.
func (r *Report) drivenLine() string {
	cells := r.drivenCells()
	n := len(cells)
	if n == 0 {
		return ""
	}
	more := ""
	if n > maxDriven {
		cells, more = cells[:maxDriven], fmt.Sprintf("; and %d more", n-maxDriven)
	}
	return fmt.Sprintf("DRIVEN DIFFERENTLY: in %d compared cell(s) the client drove the control's runs and the candidate's in different ways, "+
		"so those comparisons measure the client's way to each server as well as the servers: %s%s. "+
		"--client-io auto chooses by where each server runs (on the client's own cores or not); give both the same --client-io, or measure both from where neither shares the client's cores.",
		n, strings.Join(cells, "; "), more)
}

// movedLine says which figures moved against a baseline only because the
// machine did; "" when none.
func (r *Report) movedLine() string {
	if len(r.Moved) == 0 {
		return ""
	}
	return "THE MACHINE CHANGED: these figures moved against the baseline as far as every other target measured beside it did, " +
		"so the servers did not change, the machine did (load, CPU speed, another tenant): " + strings.Join(r.Moved, "; ") +
		". They are inconclusive, not slower or faster: measure again on a quiet machine, or save a new baseline on this one as it is now."
}

// minJudged is the fewest runs judged for steadiness that a warning about
// them needs.
const minJudged = 6

// maxClientBound is how many client-bound runs the finding names.
const maxClientBound = 8

// clientBoundLine names the runs that the client limited, with their
// figures: every comparison with them is inconclusive (client-bound). ""
// when there are none.
func (r *Report) clientBoundLine() string {
	var runs []string
	n := 0
	for _, w := range r.Workloads {
		for _, row := range w.Rows {
			for _, run := range row.ClientBound {
				n++
				if len(runs) < maxClientBound {
					runs = append(runs, fmt.Sprintf("%s %s at %d threads, repeat %d (%s)", run.Target, run.Workload, run.Threads, run.Repeat, run.Result.Client.Figures()))
				}
			}
		}
	}
	if n == 0 {
		return ""
	}
	more := ""
	if n > len(runs) {
		more = fmt.Sprintf("; and %d more", n-len(runs))
	}
	return fmt.Sprintf("CLIENT-BOUND: the client, not the server, limited %d run(s), so every comparison with them is inconclusive (client-bound): %s%s. "+
		"Give the client more cores, run fewer threads per client core, or split the load over several clients.",
		n, strings.Join(runs, "; "), more)
}

// briefUnsteady is how many unsteady runs a sweep's summary lists.
const briefUnsteady = 8

// unsteadyLine warns when most runs were unsteady: the machine was busy or
// the servers stalled, and the runs are less alike and independent than
// the intervals assume. "" otherwise.
func (r *Report) unsteadyLine() string {
	judged, unsteady := 0, 0
	for _, w := range r.Workloads {
		for _, row := range w.Rows {
			for _, run := range row.Runs {
				if len(run.Result.Intervals) >= stats.MinSeconds {
					judged++
				}
			}
			unsteady += len(row.Unsteady)
		}
	}
	if judged < minJudged || 2*unsteady <= judged {
		return ""
	}
	return fmt.Sprintf("UNSTEADY: %d of the %d runs long enough to judge (%d s or more) did not keep a steady pace: the machine was busy or the servers stalled. "+
		"The intervals assume runs that are alike and independent; treat verdicts near the threshold with care, and rerun on a quieter machine.",
		unsteady, judged, stats.MinSeconds)
}

// AANoise is what an A/A pair measured: the control against its own
// server, cell by cell.
type AANoise struct {
	Candidate string  `json:"candidate"`
	SameBy    string  `json:"same_server_by"`
	Cells     int     `json:"cells"`
	MaxDev    float64 `json:"max_deviation"`    // largest |ratio - 1|
	MedianDev float64 `json:"median_deviation"` // median |ratio - 1|
	// MaxHalfWidth is the widest interval's larger half, relative to 1.
	MaxHalfWidth float64 `json:"max_interval_half_width"`
	// MedianCV is the median of both sides' run-to-run CV over the cells.
	MedianCV float64 `json:"median_cv"`
	// Called counts the cells that came out faster or slower anyway.
	Called int `json:"called_faster_or_slower"`
}

// AA measures the noise of every A/A pair, in plan order.
func (r *Report) AA() []AANoise {
	var out []AANoise
	for _, cand := range r.Candidates() {
		how, ok := r.AAPairs[cand]
		if !ok {
			continue
		}
		n := AANoise{Candidate: cand, SameBy: how}
		var devs, cvs []float64
		for _, w := range r.Workloads {
			for _, c := range w.Comparisons() {
				if c.Candidate != cand || c.Ratio == 0 {
					continue
				}
				n.Cells++
				d := math.Abs(c.Ratio - 1)
				devs = append(devs, d)
				n.MaxDev = math.Max(n.MaxDev, d)
				if c.QPS.Interval {
					n.MaxHalfWidth = math.Max(n.MaxHalfWidth, math.Max(c.QPS.High-1, 1-c.QPS.Low))
				}
				if c.QPS.Control.N > 1 {
					cvs = append(cvs, c.QPS.Control.CV)
				}
				if c.QPS.Candidate.N > 1 {
					cvs = append(cvs, c.QPS.Candidate.CV)
				}
				if c.QPS.State == stats.Faster || c.QPS.State == stats.Slower {
					n.Called++
				}
			}
		}
		n.MedianDev, n.MedianCV = stats.Median(devs), stats.Median(cvs)
		out = append(out, n)
	}
	return out
}

func (r *Report) aaLines() []string {
	var out []string
	for _, n := range r.AA() {
		line := fmt.Sprintf("A/A: %s is the same server as %s (%s) and the same database, so every difference between them is noise.",
			n.Candidate, r.Control, n.SameBy)
		if n.Cells > 0 {
			line += fmt.Sprintf(" Measured over %d cells: |ratio - 1| up to %s (median %s)", n.Cells, pct1(n.MaxDev), pct1(n.MedianDev))
			if n.MaxHalfWidth > 0 {
				line += fmt.Sprintf(", intervals up to +/-%s", pct1(n.MaxHalfWidth))
			}
			if n.MedianCV > 0 {
				line += fmt.Sprintf(", run-to-run CV median %s", pct1(n.MedianCV))
			}
			line += fmt.Sprintf("; %d called faster or slower. Differences smaller than that cannot be told from noise here.", n.Called)
		}
		out = append(out, line)
	}
	return out
}

func pct1(x float64) string { return strconv.FormatFloat(x*100, 'f', 1, 64) + "%" }

// driftLine says when the control's repeats trend within workloads and
// thread levels across the sweep; "" when they do not.
func (r *Report) driftLine() string {
	if !r.Drift.Drifting(r.Threshold) {
		return ""
	}
	dir := "rose"
	if r.Drift.Change < 0 {
		dir = "fell"
	}
	return fmt.Sprintf("DRIFT: the control's QPS %s from its first repeat to its last by %s, typically, at each workload and thread level "+
		"(%d runs; Mann-Kendall p=%.3g): the machine or the server changed during the sweep, and verdicts near the threshold are suspect.",
		dir, pct1(math.Abs(r.Drift.Change)), r.Drift.N, r.Drift.P)
}

// unsteadyRuns lists the unsteady runs in step order.
func (r *Report) unsteadyRuns() []Unsteady {
	var out []Unsteady
	for _, w := range r.Workloads {
		for _, row := range w.Rows {
			out = append(out, row.Unsteady...)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Run.Step < out[j].Run.Step })
	return out
}

func (r *Report) unsteadyTable() *table {
	t := &table{header: []string{"step", "target", "workload", "threads", "repeat", "why"}, right: []bool{true, false, false, true, true, false}}
	for _, u := range r.unsteadyRuns() {
		t.add(strconv.Itoa(u.Run.Step), u.Run.Target, u.Run.Workload, strconv.Itoa(u.Run.Threads), strconv.Itoa(u.Run.Repeat), u.Steady.Why)
	}
	return t
}
