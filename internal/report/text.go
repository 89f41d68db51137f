package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shakedown/shakedown/internal/stats"
	"github.com/shakedown/shakedown/internal/store"
)

// table is rows of cells, printed aligned (text) or as a Markdown table.
type table struct {
	header []string
	right  []bool // right-align column i
	rows   [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) writeText(w io.Writer, indent string) {
	widths := make([]int, len(t.header))
	for i, h := range t.header {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, r := range t.rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		b.WriteString(indent)
		for i, c := range cells {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if t.right[i] {
				b.WriteString(pad + c)
			} else if i == len(cells)-1 {
				b.WriteString(c)
			} else {
				b.WriteString(c + pad)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	line(t.header)
	for _, r := range t.rows {
		line(r)
	}
}

// writeMarkdownSection writes the table as a "## title" section of the
// Markdown report, after its lead paragraph when it has one.
func (t *table) writeMarkdownSection(w io.Writer, title, lead string) {
	fmt.Fprintf(w, "\n## %s\n\n", title)
	if lead != "" {
		fmt.Fprintf(w, "%s\n\n", lead)
	}
	t.writeMarkdown(w)
}

func (t *table) writeMarkdown(w io.Writer) {
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	var b strings.Builder
	b.WriteString("|")
	for _, h := range t.header {
		b.WriteString(" " + cell(h) + " |")
	}
	b.WriteString("\n|")
	for i := range t.header {
		if t.right[i] {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.rows {
		b.WriteString("|")
		for _, c := range r {
			b.WriteString(" " + cell(c) + " |")
		}
		b.WriteString("\n")
	}
	fmt.Fprint(w, b.String())
}

func f1(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
func f2(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }
func f3(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }
func ratioText(c *Comparison) string {
	if c.Verdict == stats.NoData || c.Verdict == Wrong {
		return "-"
	}
	return f3(c.Ratio)
}

// intervalText is a comparison's interval, or "-" when there is none.
func intervalText(c stats.Comparison) string {
	if !c.Interval {
		return "-"
	}
	return f3(c.Low) + ".." + f3(c.High)
}

// verdictText is the QPS verdict as a table shows it.
func verdictText(c *Comparison) string {
	if c.Verdict == stats.NoData {
		return string(stats.NoData)
	}
	return c.QPS.Note()
}

// latencyText is a latency comparison in one short cell: ratio and state.
func latencyText(c stats.Comparison) string {
	if c.Ratio == 0 || c.State == Wrong {
		return "-"
	}
	st := string(c.State)
	if c.State == stats.NoVerdict {
		st = "no verdict"
	}
	return f2(c.Ratio) + " " + st
}

// rule is the method with this report's threshold and confidence.
func (r *Report) rule() string { return Method(r.Threshold, r.Confidence) }

// candidateName is a candidate as tables show it: marked when it is the
// control's own server (A/A).
func (r *Report) candidateName(name string) string {
	if _, ok := r.AAPairs[name]; ok {
		return name + " (A/A)"
	}
	return name
}
func pct(x float64) string { return strconv.FormatFloat(x*100, 'f', 1, 64) + "%" }

// hasSpread reports whether any figure is over more than one run, so that
// min, max and CV say something.
func (r *Report) hasSpread() bool {
	for _, w := range r.Workloads {
		for _, row := range w.Rows {
			if row.QPS.N > 1 {
				return true
			}
		}
	}
	return false
}

// targetTable is one target's figures for one workload.
func (r *Report) targetTable(w *Workload, target string) *table {
	spread := r.hasSpread()
	t := &table{header: []string{"threads", "qps", "tps", "avg ms", "p95 ms", "p99 ms", "max ms", "errors"}}
	if spread {
		t.header = []string{"threads", "runs", "qps", "qps min", "qps max", "qps CV", "tps", "avg ms", "p95 ms", "p99 ms", "max ms", "errors"}
	}
	t.right = make([]bool, len(t.header))
	for i := range t.right {
		t.right[i] = true
	}
	for _, th := range w.Threads {
		row := w.Row(target, th)
		if row == nil {
			continue
		}
		if row.QPS.N == 0 {
			cells := []string{strconv.Itoa(th)}
			if spread {
				cells = append(cells, "0")
			}
			cells = append(cells, qpsCell(row))
			for len(cells) < len(t.header) {
				cells = append(cells, "-")
			}
			t.add(cells...)
			continue
		}
		cells := []string{strconv.Itoa(th)}
		if spread {
			runs := strconv.Itoa(row.QPS.N)
			var left []string
			if row.Failed > 0 {
				left = append(left, fmt.Sprintf("+%d failed", row.Failed))
			}
			if row.Interrupted > 0 {
				left = append(left, fmt.Sprintf("+%d interrupted", row.Interrupted))
			}
			if len(left) > 0 {
				runs += " (" + strings.Join(left, ", ") + ")"
			}
			cells = append(cells, runs, f1(row.QPS.Median), f1(row.QPS.Min), f1(row.QPS.Max), pct(row.QPS.CV))
		} else {
			cells = append(cells, f1(row.QPS.Median))
		}
		cells = append(cells, f1(row.TPS), f2(row.LatAvg), f2(row.LatP95), f2(row.LatP99), f2(row.LatMax), strconv.FormatInt(row.Errors, 10))
		t.add(cells...)
	}
	return t
}

// comparisonTable is every candidate against the control for one workload.
func (r *Report) comparisonTable(w *Workload) *table {
	t := &table{
		header: []string{"threads", "candidate", "control qps", "candidate qps", "ratio", r.ciHeader(), "verdict", "p95 ratio", "p99 ratio"},
		right:  []bool{true, false, true, true, true, true, false, false, false},
	}
	for _, c := range w.Comparisons() {
		ctl, cand := w.Row(c.Control, c.Threads), w.Row(c.Candidate, c.Threads)
		t.add(strconv.Itoa(c.Threads), r.candidateName(c.Candidate), qpsCell(ctl), qpsCell(cand), ratioText(c), intervalText(c.QPS),
			verdictText(c), latencyText(c.P95), latencyText(c.P99))
	}
	return t
}

func (r *Report) ciHeader() string { return pct0(r.Confidence) + " interval" }

func qpsCell(row *Row) string {
	switch {
	case row == nil || row.QPS.N == 0 && row.Failed == 0 && row.Interrupted == 0:
		return "not run"
	case row.QPS.N == 0 && row.Failed == 0:
		return "interrupted"
	case row.QPS.N == 0:
		return "failed"
	}
	return f1(row.QPS.Median)
}

// SummaryTable is every comparison of the sweep in one table: what the demo
// prints.
func (r *Report) summaryTable() *table {
	t := &table{
		header: []string{"workload", "threads", "candidate", r.Control + " qps", "candidate qps", "ratio", r.ciHeader(), "verdict", "p95 ratio", "p99 ratio"},
		right:  []bool{false, true, false, true, true, true, true, false, false, false},
	}
	for _, w := range r.Workloads {
		for _, c := range w.Comparisons() {
			t.add(w.Name, strconv.Itoa(c.Threads), r.candidateName(c.Candidate), qpsCell(w.Row(c.Control, c.Threads)), qpsCell(w.Row(c.Candidate, c.Threads)),
				ratioText(c), intervalText(c.QPS), verdictText(c), latencyText(c.P95), latencyText(c.P99))
		}
	}
	return t
}

// WriteSummary writes the one table of every candidate against the control,
// then the verdict rule.
func WriteSummary(w io.Writer, r *Report) error {
	bw := bufio.NewWriter(w)
	if len(r.Candidates()) == 0 {
		// Nothing to compare: the control's own figures.
		t := &table{header: []string{"workload", "threads", "target", "qps", "p95 ms", "errors"}, right: []bool{false, true, false, true, true, true}}
		for _, wl := range r.Workloads {
			for _, row := range wl.Rows {
				if row.QPS.N == 0 {
					t.add(wl.Name, strconv.Itoa(row.Threads), row.Target, qpsCell(row), "-", "-")
					continue
				}
				t.add(wl.Name, strconv.Itoa(row.Threads), row.Target, f1(row.QPS.Median), f2(row.LatP95), strconv.FormatInt(row.Errors, 10))
			}
		}
		fmt.Fprintln(bw, "Median figures (no candidates to compare):")
		fmt.Fprintln(bw)
		t.writeText(bw, "")
		return bw.Flush()
	}
	fmt.Fprintf(bw, "Candidates against the control (%s), median QPS:\n\n", r.Control)
	r.summaryTable().writeText(bw, "")
	if s := r.plainSummary(); s != "" {
		fmt.Fprintln(bw)
		wrap(bw, "In short: "+s, 100, "")
	}
	r.writeFindings(bw, true)
	fmt.Fprintln(bw)
	wrap(bw, "How verdicts are reached: "+r.rule(), 100, "")
	return bw.Flush()
}

func (r *Report) targetsTable() *table {
	t := &table{header: []string{"target", "role", "server", "url"}, right: []bool{false, false, false, false}}
	// The connection column appears once any result recorded it.
	withConn := len(r.Connections) > 0
	if withConn {
		t.header = append(t.header, "connection")
		t.right = append(t.right, false)
	}
	for _, tg := range r.Targets {
		cells := []string{tg.Name, tg.Role, strings.TrimSpace(tg.Flavour + " " + tg.Version), tg.URL}
		if withConn {
			cells = append(cells, r.connection(tg.Name))
		}
		t.add(cells...)
	}
	return t
}

func (r *Report) differingTable() *table {
	t := &table{header: []string{"variable"}, right: []bool{false}}
	for _, tg := range r.Targets {
		t.header = append(t.header, tg.Name)
		t.right = append(t.right, false)
	}
	for _, k := range r.Differing {
		cells := []string{k}
		for _, tg := range r.Targets {
			v, ok := tg.Variables[k]
			if !ok {
				v = "(none)"
			}
			cells = append(cells, v)
		}
		t.add(cells...)
	}
	return t
}

func (r *Report) unfinishedTable() *table {
	t := &table{header: []string{"step", "target", "workload", "threads", "repeat", "status", "error"},
		right: []bool{true, false, false, true, true, false, false}}
	for _, run := range r.Unfinished {
		status := run.Status
		if run.Degraded {
			status += ", DEGRADED" // the server could not be reached for part of it
		}
		t.add(strconv.Itoa(run.Step), run.Target, run.Workload, strconv.Itoa(run.Threads), strconv.Itoa(run.Repeat), status, oneLine(run.Error))
	}
	return t
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func (r *Report) peaksText(w *Workload) string {
	var parts []string
	for _, p := range w.Peaks {
		if p.QPS == 0 {
			parts = append(parts, p.Target+" no data")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s at %d threads", p.Target, f1(p.QPS), p.Threads))
	}
	return strings.Join(parts, "; ")
}

// loose says whether the report is of runs made one by one (FromRuns)
// rather than of a sweep.
func (r *Report) loose() bool { return r.Sweep.ID == 0 }

// heading names what is reported: the sweep, or where the runs came from.
func (r *Report) heading() string {
	if r.loose() {
		return fmt.Sprintf("runs %q", r.Sweep.Name)
	}
	return fmt.Sprintf("sweep %d %q: %s", r.Sweep.ID, r.Sweep.Name, r.Sweep.Status)
}

// madeBy is the client host and shakedown's version, as far as known.
func (r *Report) madeBy() string {
	if r.Sweep.ClientHost == "" {
		return r.Sweep.Tool
	}
	return "client host " + r.Sweep.ClientHost + ", " + r.Sweep.Tool
}

func (r *Report) stepsLine() string {
	s := r.Sweep.Settings
	if r.loose() {
		line := "each a run of its own, with its own options and warm-up"
		if s.TimeS > 0 {
			line += fmt.Sprintf(", %d s each", s.TimeS)
		}
		return line + "; runs of one workload, target and thread level count as repeats"
	}
	var limit string
	switch {
	case s.Events > 0 && s.TimeS > 0:
		limit = fmt.Sprintf("%d s or %d events", s.TimeS, s.Events)
	case s.Events > 0:
		limit = fmt.Sprintf("%d events", s.Events)
	default:
		limit = fmt.Sprintf("%d s", s.TimeS)
	}
	rep := strconv.Itoa(s.Repeats) + " repeats"
	switch {
	case s.AutoRepeats:
		rep = fmt.Sprintf("repeats auto (%d, more where inconclusive, up to %d)", s.Repeats, s.MaxRepeats)
	case s.Repeats == 1:
		rep = "1 repeat"
	}
	return fmt.Sprintf("each step %s after a %d s warm-up (excluded), %s, %d s cool-down, order %s", limit, s.WarmupS, rep, s.CooldownS, s.Order)
}

func (r *Report) countLine() string {
	ok := 0
	var failed, interrupted int
	for _, w := range r.Workloads {
		for _, row := range w.Rows {
			ok += row.QPS.N
		}
	}
	var partial int
	for _, run := range r.Unfinished {
		switch run.Status {
		case store.RunInterrupted:
			interrupted++
		case store.RunPartial:
			partial++
		default:
			failed++
		}
	}
	unit := "steps"
	if r.loose() {
		unit = "runs"
	}
	s := fmt.Sprintf("%d of %d %s ok", ok, r.Sweep.Steps, unit)
	if failed > 0 {
		s += fmt.Sprintf(", %d failed", failed)
	}
	if interrupted > 0 {
		s += fmt.Sprintf(", %d interrupted", interrupted)
	}
	if partial > 0 {
		s += fmt.Sprintf(", %d partial (a runner missing)", partial)
	}
	if rest := r.Sweep.Steps - ok - failed - interrupted - partial; rest > 0 {
		s += fmt.Sprintf(", %d not run", rest)
	}
	if n := len(r.RunAgain); n > 0 {
		s += fmt.Sprintf("; %d earlier %s of steps run again left out", n, plural(n, "run", "runs"))
	}
	return s
}

func timeLine(sw store.Sweep) string {
	s := "started " + sw.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC")
	if !sw.FinishedAt.IsZero() {
		s += ", took " + sw.FinishedAt.Sub(sw.StartedAt).Round(time.Second).String()
	}
	return s
}

// wrap writes s in lines of at most width characters.
func wrap(w io.Writer, s string, width int, indent string) {
	line := indent
	for _, word := range strings.Fields(s) {
		if len(line) > len(indent) && len(line)+1+len(word) > width {
			fmt.Fprintln(w, line)
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += word
	}
	if len(line) > len(indent) {
		fmt.Fprintln(w, line)
	}
}

// WriteText writes the report as plain text.
func WriteText(w io.Writer, r *Report) error {
	bw := bufio.NewWriter(w)
	sw := r.Sweep
	fmt.Fprintf(bw, "shakedown %s\n", r.heading())
	fmt.Fprintf(bw, "%s; %s\n", timeLine(sw), r.countLine())
	fmt.Fprintln(bw, r.stepsLine())
	if m := r.madeBy(); m != "" {
		fmt.Fprintln(bw, m)
	}
	if s := r.plainSummary(); s != "" {
		fmt.Fprintln(bw)
		wrap(bw, "In short: "+s, 100, "")
	}
	fmt.Fprintln(bw)
	fmt.Fprintln(bw, "Targets")
	r.targetsTable().writeText(bw, "  ")
	for _, wl := range r.Workloads {
		fmt.Fprintf(bw, "\n== %s\n", wl.Name)
		for _, tg := range r.Targets {
			fmt.Fprintf(bw, "\n%s (%s)\n", tg.Name, tg.Role)
			r.targetTable(wl, tg.Name).writeText(bw, "  ")
		}
		if len(wl.Comparisons()) > 0 {
			fmt.Fprintf(bw, "\nAgainst the control (%s), median QPS\n", r.Control)
			r.comparisonTable(wl).writeText(bw, "  ")
		}
		fmt.Fprintf(bw, "\nPeak QPS: %s\n", r.peaksText(wl))
		r.writeScalingText(bw, wl)
	}
	if r.hasErrors() {
		fmt.Fprintln(bw, "\nErrors by code")
		r.errorsTable().writeText(bw, "  ")
		wrap(bw, errorsNote, 100, "  ")
	}
	r.writeFindings(bw, false)
	if len(r.Differing) > 0 {
		fmt.Fprintln(bw, "\nServer variables that differ")
		r.differingTable().writeText(bw, "  ")
	}
	if r.Bisect != nil {
		r.writeBisectText(bw)
	}
	r.writeHostText(bw)
	if len(r.Unfinished) > 0 {
		fmt.Fprintln(bw, "\nFailed, interrupted and partial steps (left out of every figure)")
		r.unfinishedTable().writeText(bw, "  ")
	}
	if lines := r.dataLines(); len(lines) > 0 {
		fmt.Fprintln(bw, "\nData and resumes")
		for _, l := range lines {
			wrap(bw, l, 100, "  ")
		}
	}
	if len(r.Splits) > 0 {
		fmt.Fprintln(bw, "\nSplit loads (each step merged from its runners: counts and histograms added)")
		r.splitTable().writeText(bw, "  ")
		for _, w := range r.splitWarnings() {
			fmt.Fprintf(bw, "  WARNING: %s\n", w)
		}
	}
	fmt.Fprintln(bw)
	wrap(bw, "How verdicts are reached: "+r.rule(), 100, "")
	return bw.Flush()
}

// WriteMarkdown writes the report as Markdown.
func WriteMarkdown(w io.Writer, r *Report) error {
	bw := bufio.NewWriter(w)
	sw := r.Sweep
	if r.loose() {
		fmt.Fprintf(bw, "# shakedown runs: %s\n\n", mdEscape(sw.Name))
		fmt.Fprintf(bw, "%s; %s.  \n", capitalize(timeLine(sw)), r.countLine())
	} else {
		fmt.Fprintf(bw, "# shakedown sweep %d: %s\n\n", sw.ID, mdEscape(sw.Name))
		fmt.Fprintf(bw, "Status **%s**; %s; %s.  \n", sw.Status, timeLine(sw), r.countLine())
	}
	fmt.Fprintf(bw, "%s.  \n", capitalize(r.stepsLine()))
	if m := r.madeBy(); m != "" {
		fmt.Fprintf(bw, "%s.\n", mdEscape(capitalize(m)))
	}
	if s := r.plainSummary(); s != "" {
		fmt.Fprintf(bw, "\n**In short:** %s\n", mdEscape(s))
	}
	r.targetsTable().writeMarkdownSection(bw, "Targets", "")
	if len(r.Candidates()) > 0 {
		r.summaryTable().writeMarkdownSection(bw, "Candidates against the control ("+mdEscape(r.Control)+")", "")
	}
	for _, wl := range r.Workloads {
		fmt.Fprintf(bw, "\n## %s\n", mdEscape(wl.Name))
		for _, tg := range r.Targets {
			fmt.Fprintf(bw, "\n### %s (%s)\n\n", mdEscape(tg.Name), tg.Role)
			r.targetTable(wl, tg.Name).writeMarkdown(bw)
		}
		fmt.Fprintf(bw, "\nPeak QPS: %s.\n", mdEscape(r.peaksText(wl)))
		r.writeScalingMarkdown(bw, wl)
	}
	if r.hasErrors() {
		r.errorsTable().writeMarkdownSection(bw, "Errors by code", "")
		fmt.Fprintf(bw, "\n%s\n", mdEscape(errorsNote))
	}
	if len(r.Differing) > 0 {
		r.differingTable().writeMarkdownSection(bw, "Server variables that differ", "")
	}
	if r.Bisect != nil {
		r.writeBisectMarkdown(bw)
	}
	r.writeHostMarkdown(bw)
	if len(r.Unfinished) > 0 {
		r.unfinishedTable().writeMarkdownSection(bw, "Failed, interrupted and partial steps", "They are left out of every figure.")
	}
	if lines := r.dataLines(); len(lines) > 0 {
		fmt.Fprintln(bw, "\n## Data and resumes")
		fmt.Fprintln(bw)
		for _, l := range lines {
			fmt.Fprintf(bw, "- %s\n", mdEscape(l))
		}
	}
	if len(r.Splits) > 0 {
		r.splitTable().writeMarkdownSection(bw, "Split loads", "Each step merged from its runners: counts and histograms added.")
		for _, w := range r.splitWarnings() {
			fmt.Fprintf(bw, "\n**Warning:** %s\n", mdEscape(w))
		}
	}
	if lines := append(r.aaLines(), r.warningLines()...); len(lines) > 0 || len(r.unsteadyRuns()) > 0 {
		fmt.Fprintln(bw, "\n## Noise, drift and unsteady runs")
		for _, l := range lines {
			fmt.Fprintf(bw, "\n%s\n", mdEscape(l))
		}
		if t := r.unsteadyTable(); len(t.rows) > 0 {
			fmt.Fprintln(bw)
			t.writeMarkdown(bw)
		}
	}
	fmt.Fprintf(bw, "\n## How verdicts are reached\n\n%s\n", mdEscape(r.rule()))
	return bw.Flush()
}

func mdEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, "*", `\*`, "`", "\\`", "|", `\|`, "<", "&lt;")
	return r.Replace(s)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
