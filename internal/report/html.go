package report

import (
	"bufio"
	"fmt"
	"github.com/shakedown/shakedown/internal/result"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/shakedown/shakedown/internal/render"
	"github.com/shakedown/shakedown/internal/stats"
)

// esc escapes text for HTML by the pages' one rule (render.Esc): no
// URL-looking text lands in the file as a link.
func esc(s string) string { return render.Esc(s) }

// htmlWriter writes the page; fmt errors surface from the bufio.Writer.
type htmlWriter struct {
	*bufio.Writer
	r *Report
}

func (h *htmlWriter) p(format string, args ...any) { fmt.Fprintf(h, format, args...) }

// WriteHTML writes the report as one self-contained HTML page: styles,
// charts (inline SVG) and a small check script are all in the file, which
// refers to nothing outside itself.
func WriteHTML(w io.Writer, r *Report) error {
	page := render.Page{Title: "shakedown: " + r.Sweep.Name, Class: "report", Scripts: true}
	return render.Write(w, page, func(w io.Writer) error { return writeHTMLContent(w, r) })
}

// writeHTMLContent writes what lies inside the page's shell.
func writeHTMLContent(w io.Writer, r *Report) error {
	h := &htmlWriter{Writer: bufio.NewWriter(w), r: r}
	sw := r.Sweep
	h.p("<h1>shakedown: %s</h1>\n", esc(sw.Name))
	if r.loose() {
		h.p("<p class=\"meta\">Runs &middot; %s &middot; %s</p>\n", esc(timeLine(sw)), esc(r.countLine()))
	} else {
		h.p("<p class=\"meta\">Sweep %d <span class=\"badge %s\">%s</span> &middot; %s &middot; %s</p>\n",
			sw.ID, esc(sw.Status), esc(sw.Status), esc(timeLine(sw)), esc(r.countLine()))
	}
	h.p("<p class=\"meta\">%s</p>\n", esc(capitalize(r.stepsLine())))
	h.targetsLegend()
	if s := r.plainSummary(); s != "" {
		h.p("<p class=\"plain\" id=\"in-short\"><b>In short:</b> %s</p>\n", esc(s))
	}

	if len(r.Candidates()) > 0 {
		h.p("<h2 id=\"verdicts\">Candidates against the control</h2>\n")
		h.ratioTable()
		h.findings()
		h.p("<p class=\"rule\"><b>How the verdict is reached.</b> %s</p>\n", esc(r.rule()))
	}
	for i, wl := range r.Workloads {
		h.workload(i, wl)
	}
	if r.hasErrors() {
		h.p("<h2 id=\"errors\">Errors by code</h2>\n")
		h.table(r.errorsTable(), nil)
		h.p("<p>%s</p>\n", esc(errorsNote))
	}
	h.timelines()
	h.environment()
	h.stallsHTML()
	if len(r.Unfinished) > 0 {
		h.p("<h2 id=\"unfinished\">Failed, interrupted and partial steps</h2>\n<p>They are left out of every figure and chart.</p>\n")
		h.table(r.unfinishedTable(), map[int]string{6: "err"})
	}
	if lines := r.dataLines(); len(lines) > 0 {
		h.p("<h2 id=\"data\">Data and resumes</h2>\n<ul>\n")
		for _, l := range lines {
			h.p("<li>%s</li>\n", esc(l))
		}
		h.p("</ul>\n")
	}
	if len(r.Splits) > 0 {
		h.p("<h2 id=\"splits\">Split loads</h2>\n<p>Each step merged from its runners: counts and histograms added.</p>\n")
		h.table(r.splitTable(), nil)
		for _, w := range r.splitWarnings() {
			h.p("<p class=\"err\">Warning: %s</p>\n", esc(w))
		}
	}
	from := "the results store"
	if r.loose() {
		from = sw.Name
	}
	h.p("<footer>Made by %s from %s; the charts are drawn in the page itself and need no network.</footer>\n", esc(sw.Tool), esc(from))
	return h.Flush()
}

func (h *htmlWriter) targetsLegend() {
	h.p("<p class=\"meta\">")
	for i, t := range h.r.Targets {
		if i > 0 {
			h.p(" &middot; ")
		}
		h.p("<span class=\"swatch\" style=\"background:%s\"></span><b>%s</b> (%s, %s)", colour(i), esc(t.Name), esc(t.Role), esc(strings.TrimSpace(t.Flavour+" "+t.Version)))
	}
	h.p("</p>\n")
}

// table writes t; classes names extra classes for cells of a column.
func (h *htmlWriter) table(t *table, classes map[int]string) {
	h.p("<table>\n<tr>")
	for i, c := range t.header {
		h.p("<th%s>%s</th>", align(t.right[i], ""), esc(c))
	}
	h.p("</tr>\n")
	for _, row := range t.rows {
		h.p("<tr>")
		for i, c := range row {
			h.p("<td%s>%s</td>", align(t.right[i], classes[i]), esc(c))
		}
		h.p("</tr>\n")
	}
	h.p("</table>\n")
}

func align(right bool, class string) string {
	if !right {
		class = strings.TrimSpace("l " + class)
	}
	if class == "" {
		return ""
	}
	return ` class="` + class + `"`
}

// ratioTable is every workload and thread level against every candidate,
// coloured by verdict.
func (h *htmlWriter) ratioTable() {
	r := h.r
	cands := r.Candidates()
	h.p("<div class=\"scroll\"><table>\n<tr><th class=\"l\">workload</th><th>threads</th><th>%s (control) qps</th>", esc(r.Control))
	for _, c := range cands {
		name := r.candidateName(c)
		h.p("<th>%s qps</th><th class=\"l\">%s vs control: QPS ratio [%s interval]</th><th class=\"l\">p95 / p99 ratio</th>",
			esc(name), esc(name), esc(pct0(r.Confidence)))
	}
	h.p("</tr>\n")
	for _, wl := range r.Workloads {
		for _, th := range wl.Threads {
			h.p("<tr><td class=\"l\">%s</td><td>%d</td><td>%s</td>", esc(wl.Name), th, esc(qpsCell(wl.Row(r.Control, th))))
			for _, c := range cands {
				row := wl.Row(c, th)
				h.p("<td>%s</td>", esc(qpsCell(row)))
				if row != nil && row.Compared != nil && row.Compared.Verdict == Wrong {
					h.p("<td class=\"l slower strong\">%s</td><td class=\"l nodata\">-</td>", esc(row.Compared.QPS.Note())) // red: no verdict stands
					continue
				}
				if row == nil || row.Compared == nil || row.Compared.Verdict == stats.NoData {
					h.p("<td class=\"l nodata\">no data</td><td class=\"l nodata\">-</td>")
					continue
				}
				cmp := row.Compared
				h.p("<td class=\"l %s\">%s&times;", stateClass(cmp.QPS), strconv.FormatFloat(cmp.Ratio, 'f', 3, 64))
				if cmp.QPS.Interval {
					h.p(" <small>[%s&ndash;%s]</small>", f3(cmp.QPS.Low), f3(cmp.QPS.High))
				}
				h.p(" &nbsp;%s</td>", esc(cmp.QPS.Note()))
				h.p("<td class=\"l %s\">%s<br>%s</td>", stateClass(cmp.P95), esc(latencyText(cmp.P95)), esc(latencyText(cmp.P99)))
			}
			h.p("</tr>\n")
		}
	}
	h.p("</table></div>\n")
}

// stateClass is the CSS class of a comparison's cell: strong beyond a
// fifth either way.
func stateClass(c stats.Comparison) string {
	return render.StateClass(c.State, c.Ratio >= 1.2 || c.Ratio <= 0.8)
}

// findings writes the A/A noise, the control's drift and the unsteady
// runs.
func (h *htmlWriter) findings() {
	r := h.r
	for _, line := range r.aaLines() {
		h.p("<p class=\"finding aa\">%s</p>\n", esc(line))
	}
	for _, line := range r.warningLines() {
		h.p("<p class=\"finding drift\">%s</p>\n", esc(line))
	}
	if t := r.unsteadyTable(); len(t.rows) > 0 {
		h.p("<h3>Unsteady runs</h3>\n<p>Their per-second QPS moved beyond the %s noise threshold between the halves of the run, or spread with a CV above %s: warm-up, flush storms, a noisy neighbour. Their timelines are below.</p>\n",
			esc(pct0(r.Threshold)), esc(pct0(stats.HighCV)))
		h.table(t, nil)
	}
}

func threadTicks(levels []int) []tick {
	t := make([]tick, len(levels))
	for i, l := range levels {
		t[i] = tick{Label: strconv.Itoa(l)}
	}
	return t
}

func (h *htmlWriter) workload(i int, wl *Workload) {
	r := h.r
	h.p("<h2 id=\"w%d\">%s</h2>\n", i, esc(wl.Name))
	qps := chart{Title: wl.Name + ": QPS by threads", XLabel: "threads", YLabel: "queries per second (median)", XTicks: threadTicks(wl.Threads), Markers: true}
	p95 := chart{Title: wl.Name + ": p95 latency by threads", XLabel: "threads", YLabel: "p95 latency, ms (median)", XTicks: threadTicks(wl.Threads), Markers: true}
	for ti, t := range r.Targets {
		sq := series{Name: t.Name, Colour: colour(ti), Legend: true}
		sl := sq
		for xi, th := range wl.Threads {
			row := wl.Row(t.Name, th)
			if row == nil || row.QPS.N == 0 {
				continue
			}
			sq.Points = append(sq.Points, xy{X: float64(xi), Y: row.QPS.Median, Tip: fmt.Sprintf("%s, %d threads: %s qps", t.Name, th, f1(row.QPS.Median))})
			sl.Points = append(sl.Points, xy{X: float64(xi), Y: row.LatP95, Tip: fmt.Sprintf("%s, %d threads: p95 %s ms", t.Name, th, f2(row.LatP95))})
		}
		qps.Series = append(qps.Series, sq)
		p95.Series = append(p95.Series, sl)
	}
	for ti, t := range r.Targets {
		for _, s := range wl.Scaling {
			if s.Target == t.Name && s.Refused == "" {
				qps.Series = append(qps.Series, uslCurve(wl, s, colour(ti)))
			}
		}
	}
	h.p("<div class=\"charts\"><figure>%s</figure><figure>%s</figure></div>\n", qps.svg(), p95.svg())
	for _, t := range r.Targets {
		h.p("<h3>%s <small>(%s)</small></h3>\n", esc(t.Name), esc(t.Role))
		h.table(r.targetTable(wl, t.Name), nil)
	}
	h.p("<p class=\"peaks\"><b>Peak QPS:</b> %s</p>\n", esc(r.peaksText(wl)))
	h.scaling(wl)
}

// shortTimeline is the number of per-second points below which a run's
// timeline is drawn as points and said to be too short.
const shortTimeline = 6

// timelines draws QPS per second of every run, one chart per workload and
// thread level with a line per target (thinner lines for later repeats).
func (h *htmlWriter) timelines() {
	r := h.r
	h.p("<h2 id=\"timelines\">Per-second timelines</h2>\n")
	h.p("<p>Queries per second during each measured run (warm-up not shown), one line per target and repeat. Dips show stalls such as checkpoints or log flushes.</p>\n")
	// Runs of a few seconds give a few points a line: drawn as points,
	// and said, since a stall needs longer steps to show.
	most := 0
	for _, wl := range r.Workloads {
		for _, row := range wl.Rows {
			for _, run := range row.Runs {
				most = max(most, len(run.Result.Intervals))
			}
		}
	}
	few := most > 0 && most < shortTimeline
	if few {
		h.p("<p class=\"finding drift\">The runs here are short: each line has at most %d per-second points, drawn as dots, too few to show a stall. Steps of 10 s or more (the plan's time:, or the demo's --time) draw a timeline worth reading.</p>\n", most)
	}
	for _, wl := range r.Workloads {
		h.p("<details open><summary>%s</summary>\n<div class=\"charts small\">", esc(wl.Name))
		for _, th := range wl.Threads {
			c := chart{Title: fmt.Sprintf("%s, %d threads", wl.Name, th), XLabel: "seconds", YLabel: "qps", Width: 460, Height: 240, Markers: few}
			for ti, t := range r.Targets {
				row := wl.Row(t.Name, th)
				if row == nil {
					continue
				}
				for ri, run := range row.Runs {
					s := series{Name: fmt.Sprintf("%s #%d", t.Name, run.Repeat), Colour: colour(ti), Thin: ri > 0, Legend: ri == 0}
					if ri == 0 {
						s.Name = t.Name
					}
					for _, iv := range run.Result.Intervals {
						s.Points = append(s.Points, xy{X: iv.AtS, Y: iv.QPS, Tip: fmt.Sprintf("%s #%d at %gs: %s qps", t.Name, run.Repeat, iv.AtS, f1(iv.QPS))})
					}
					c.Series = append(c.Series, s)
					for _, st := range run.Result.Stalls {
						c.Marks = append(c.Marks, mark{X: st.AtS, Label: "stall: " + t.Name})
					}
				}
			}
			h.p("<figure>%s</figure>", c.svg())
		}
		h.p("</div>\n</details>\n")
	}
}

func (h *htmlWriter) environment() {
	r := h.r
	sw := r.Sweep
	h.p("<h2 id=\"environment\">Environment</h2>\n")
	if r.loose() {
		made := ""
		if m := r.madeBy(); m != "" {
			made = capitalize(m) + ". "
		}
		h.p("<p>%sServer facts as the runs found them.</p>\n", esc(made))
	} else {
		h.p("<p>Client host <b>%s</b>, %s. Server facts as found when the sweep started.</p>\n", esc(sw.ClientHost), esc(sw.Tool))
	}
	h.table(r.targetsTable(), nil)
	if len(r.Differing) > 0 {
		h.p("<h3>Server variables that differ</h3>\n")
		h.table(r.differingTable(), nil)
	} else if len(r.Targets) > 1 {
		h.p("<p>The targets' server variables are the same (apart from paths, ports and names).</p>\n")
	}
	if r.Bisect != nil {
		// Which of those differences matter, right after them.
		_ = result.WriteBisectHTML(h, r.Bisect) // a write error stays in h's bufio.Writer and is returned by its Flush
	}
	h.hostHTML()
	for _, t := range r.Targets {
		names := make([]string, 0, len(t.Variables))
		for k := range t.Variables {
			names = append(names, k)
		}
		sort.Strings(names)
		h.p("<details><summary>All %d server variables of %s</summary>\n<div class=\"vars\">", len(names), esc(t.Name))
		for _, k := range names {
			h.p("<div>%s = %s</div>", esc(k), esc(t.Variables[k]))
		}
		h.p("</div>\n</details>\n")
	}
	if sw.Plan != "" {
		h.p("<details><summary>The plan (%s)</summary>\n<pre>%s</pre>\n</details>\n", esc(sw.PlanPath), esc(sw.Plan))
	}
}
