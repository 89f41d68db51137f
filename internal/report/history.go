package report

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"sort"
	"strconv"
	"time"

	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/render"
	"github.com/shakedown/shakedown/internal/stats"
	"github.com/shakedown/shakedown/internal/store"
)

// HistoryFilter narrows a history; empty fields match everything.
type HistoryFilter struct {
	Workload string
	Target   string
	Threads  int
}

// HistoryPoint is one sweep's figures for one workload, target and thread
// level: medians over its successful repeats.
type HistoryPoint struct {
	SweepID int64     `json:"sweep"`
	Sweep   string    `json:"sweep_name"`
	At      time.Time `json:"started_at"`
	Runs    int       `json:"runs"`
	QPS     float64   `json:"qps"`
	P95     float64   `json:"p95_ms"`
}

// HistoryChange is a change point of a series, with the sweep where the
// new level starts.
type HistoryChange struct {
	stats.ChangePoint
	SweepID int64     `json:"sweep"`
	At      time.Time `json:"started_at"`
}

// HistorySeries is one workload, target and thread level across sweeps.
type HistorySeries struct {
	Workload string          `json:"workload"`
	Target   string          `json:"target"`
	Threads  int             `json:"threads"`
	Points   []HistoryPoint  `json:"points"`
	Changes  []HistoryChange `json:"change_points"`
}

// History is every series of a store across its sweeps, oldest first.
type History struct {
	Source string           `json:"source"`
	Series []*HistorySeries `json:"series"`
}

// HistoryMethod says how change points are found.
const HistoryMethod = "Each point is one sweep: the median QPS of its successful repeats. Change points are found as Hunter does: " +
	"E-Divisive means proposes where the history splits into two different stretches (kept when fewer than 5% of 199 shuffles of " +
	"the values, seeded from the data, split as sharply), each side is split again, and every candidate must then pass Welch's " +
	"t-test against its neighbouring stretches (p < 0.01) and move the mean by at least 5%; the weakest that fails is dropped " +
	"until all pass. The sweep named is the first of the new level."

// BuildHistory gathers the series of the sweeps (in any order) that f
// matches and finds their change points.
func BuildHistory(source string, sweeps []*store.SweepData, f HistoryFilter) *History {
	sort.SliceStable(sweeps, func(i, j int) bool { return sweeps[i].Sweep.ID < sweeps[j].Sweep.ID })
	type key struct {
		workload, target string
		threads          int
	}
	series := map[key]*HistorySeries{}
	var order []key
	for _, d := range sweeps {
		type acc struct{ qps, p95 []float64 }
		cells := map[key]*acc{}
		var keys []key
		for _, r := range d.Runs {
			if !Counted(r) || (f.Workload != "" && r.Workload != f.Workload) || (f.Target != "" && r.Target != f.Target) || (f.Threads != 0 && r.Threads != f.Threads) {
				continue
			}
			k := key{r.Workload, r.Target, r.Threads}
			if cells[k] == nil {
				cells[k] = &acc{}
				keys = append(keys, k)
			}
			cells[k].qps = append(cells[k].qps, r.Result.QPS)
			cells[k].p95 = append(cells[k].p95, r.Result.LatencyMS.P95)
		}
		for _, k := range keys {
			s := series[k]
			if s == nil {
				s = &HistorySeries{Workload: k.workload, Target: k.target, Threads: k.threads}
				series[k] = s
				order = append(order, k)
			}
			a := cells[k]
			s.Points = append(s.Points, HistoryPoint{SweepID: d.Sweep.ID, Sweep: d.Sweep.Name, At: d.Sweep.StartedAt, Runs: len(a.qps),
				QPS: stats.Median(a.qps), P95: stats.Median(a.p95)})
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.workload != b.workload {
			return a.workload < b.workload
		}
		if a.target != b.target {
			return a.target < b.target
		}
		return a.threads < b.threads
	})
	h := &History{Source: source}
	for _, k := range order {
		s := series[k]
		xs := make([]float64, len(s.Points))
		for i, p := range s.Points {
			xs[i] = p.QPS
		}
		for _, cp := range stats.ChangePoints(xs, stats.ChangeOptions{}) {
			p := s.Points[cp.Index]
			s.Changes = append(s.Changes, HistoryChange{ChangePoint: cp, SweepID: p.SweepID, At: p.At})
		}
		h.Series = append(h.Series, s)
	}
	return h
}

func (s *HistorySeries) title() string {
	return fmt.Sprintf("%s, %s, %d threads", s.Workload, s.Target, s.Threads)
}

func (s *HistorySeries) changeAt(i int) *HistoryChange {
	for j := range s.Changes {
		if s.Changes[j].Index == i {
			return &s.Changes[j]
		}
	}
	return nil
}

func (c *HistoryChange) text() string {
	return fmt.Sprintf("from sweep %d (%s): QPS %s%s (%s -> %s, p=%.2g)", c.SweepID, c.At.UTC().Format("2006-01-02 15:04"),
		map[bool]string{true: "+", false: ""}[c.Change >= 0], pct1(c.Change), f1(c.Before), f1(c.After), c.P)
}

func (s *HistorySeries) table() *table {
	t := &table{header: []string{"sweep", "started", "runs", "qps", "p95 ms", "change point"}, right: []bool{true, false, true, true, true, false}}
	for i, p := range s.Points {
		mark := ""
		if c := s.changeAt(i); c != nil {
			mark = fmt.Sprintf("<- %s%s", map[bool]string{true: "+", false: ""}[c.Change >= 0], pct1(c.Change))
		}
		t.add(strconv.FormatInt(p.SweepID, 10), p.At.UTC().Format("2006-01-02 15:04"), strconv.Itoa(p.Runs), f1(p.QPS), f2(p.P95), mark)
	}
	return t
}

// WriteHistory writes h in format (text, md, csv, json or html).
func WriteHistory(w io.Writer, format string, h *History) error {
	bw := bufio.NewWriter(w)
	switch format {
	case "text", "md":
		md := format == "md"
		if md {
			fmt.Fprintf(bw, "# shakedown history: %s\n", mdEscape(h.Source))
		} else {
			fmt.Fprintf(bw, "shakedown history of %s: %d series\n", h.Source, len(h.Series))
		}
		for _, s := range h.Series {
			if md {
				fmt.Fprintf(bw, "\n## %s\n\n", mdEscape(s.title()))
				s.table().writeMarkdown(bw)
			} else {
				fmt.Fprintf(bw, "\n== %s: %d sweeps\n", s.title(), len(s.Points))
				s.table().writeText(bw, "  ")
			}
			if len(s.Changes) == 0 {
				fmt.Fprintln(bw, "\nChange points: none")
				continue
			}
			fmt.Fprintln(bw, "\nChange points:")
			for i := range s.Changes {
				fmt.Fprintf(bw, "  %s\n", s.Changes[i].text())
			}
		}
		fmt.Fprintln(bw)
		if md {
			fmt.Fprintf(bw, "## How change points are found\n\n%s\n", HistoryMethod)
		} else {
			wrap(bw, "How change points are found: "+HistoryMethod, 100, "")
		}
	case "json":
		doc := struct {
			*History
			Method string `json:"method"`
		}{h, HistoryMethod}
		if doc.Series == nil {
			doc.Series = []*HistorySeries{}
		}
		if err := outfile.WriteJSON(bw, doc); err != nil {
			return err
		}
	case "csv":
		cw := csv.NewWriter(bw)
		_ = cw.Write([]string{"workload", "target", "threads", "sweep", "started_at", "runs", "qps", "p95_ms", "change_point", "change", "p_value"})
		for _, s := range h.Series {
			for i, p := range s.Points {
				row := []string{s.Workload, s.Target, strconv.Itoa(s.Threads), strconv.FormatInt(p.SweepID, 10), p.At.UTC().Format(time.RFC3339),
					strconv.Itoa(p.Runs), strconv.FormatFloat(p.QPS, 'f', 2, 64), strconv.FormatFloat(p.P95, 'f', 3, 64), "", "", ""}
				if c := s.changeAt(i); c != nil {
					row[8], row[9], row[10] = "yes", strconv.FormatFloat(c.Change, 'f', 4, 64), strconv.FormatFloat(c.P, 'g', 3, 64)
				}
				_ = cw.Write(row)
			}
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
	case "html":
		page := render.Page{Title: "shakedown history", Class: "history", Scripts: true}
		if err := render.Write(bw, page, func(w io.Writer) error { writeHistoryHTML(w, h); return nil }); err != nil {
			return err
		}
	default:
		return fmt.Errorf("write history: unknown format %q", format)
	}
	return bw.Flush()
}

func writeHistoryHTML(w io.Writer, h *History) {
	fmt.Fprintf(w, "<h1>shakedown history</h1>\n<p class=\"meta\">%s &middot; %d series</p>\n", esc(h.Source), len(h.Series))
	for i, s := range h.Series {
		fmt.Fprintf(w, "<h2 id=\"s%d\">%s</h2>\n", i, esc(s.title()))
		ticks := make([]tick, len(s.Points))
		line := series{Name: s.Target, Colour: colour(0), Legend: true}
		for j, p := range s.Points {
			ticks[j] = tick{Label: "#" + strconv.FormatInt(p.SweepID, 10)}
			line.Points = append(line.Points, xy{X: float64(j), Y: p.QPS, Tip: fmt.Sprintf("sweep %d: %s qps", p.SweepID, f1(p.QPS))})
		}
		c := chart{Title: s.title() + ": median QPS by sweep", XLabel: "sweep", YLabel: "queries per second (median)", XTicks: ticks, Markers: true, Series: []series{line}}
		for _, cp := range s.Changes {
			c.Marks = append(c.Marks, mark{X: float64(cp.Index) - 0.5, Label: fmt.Sprintf("%s%s", map[bool]string{true: "+", false: ""}[cp.Change >= 0], pct1(cp.Change))})
		}
		fmt.Fprintf(w, "<div class=\"charts\"><figure>%s</figure></div>\n", c.svg())
		t := s.table()
		fmt.Fprint(w, "<table>\n<tr>")
		for k, hd := range t.header {
			fmt.Fprintf(w, "<th%s>%s</th>", align(t.right[k], ""), esc(hd))
		}
		fmt.Fprint(w, "</tr>\n")
		for _, row := range t.rows {
			fmt.Fprint(w, "<tr>")
			for k, cell := range row {
				fmt.Fprintf(w, "<td%s>%s</td>", align(t.right[k], ""), esc(cell))
			}
			fmt.Fprint(w, "</tr>\n")
		}
		fmt.Fprint(w, "</table>\n")
		if len(s.Changes) == 0 {
			fmt.Fprint(w, "<p>No change points.</p>\n")
		}
		for j := range s.Changes {
			fmt.Fprintf(w, "<p class=\"finding drift\">Change point %s</p>\n", esc(s.Changes[j].text()))
		}
	}
	fmt.Fprintf(w, "<p class=\"rule\"><b>How change points are found.</b> %s</p>\n", esc(HistoryMethod))
}
