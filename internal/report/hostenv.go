package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/shakedown/shakedown/internal/host"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/store"
)

// HostEnv is the host side of the environment: the host facts each
// target's first run recorded, and the settings among them that differ.
type HostEnv struct {
	// Facts maps a target to the facts of its first run that recorded
	// them; a target whose runs recorded none is absent.
	Facts map[string]*host.Facts
	// Targets are the targets with facts, in plan order (the control
	// first when it has them); Diffs' values follow this order.
	Targets []string
	// Diffs are the settings every such target knows and that differ.
	Diffs []host.Difference
	// Counters are the host's counters during each target's runs.
	Counters []HostCounters
}

// StallRun is one stall capture with the run that took it.
type StallRun struct {
	Run   store.Run
	Stall result.Stall
}

// hostEnv gathers the runs' host facts and compares them.
func hostEnv(runs []store.Run, targets []store.Target, control string) *HostEnv {
	env := &HostEnv{Facts: map[string]*host.Facts{}, Counters: hostCounters(runs, targets, control)}
	for _, run := range runs {
		if run.Result == nil || run.Result.HostFacts == nil {
			continue
		}
		if _, ok := env.Facts[run.Target]; !ok {
			env.Facts[run.Target] = run.Result.HostFacts
		}
	}
	if len(env.Facts) == 0 && len(env.Counters) == 0 {
		return nil
	}
	var order []string
	if _, ok := env.Facts[control]; ok {
		order = append(order, control)
	}
	for _, t := range targets {
		if _, ok := env.Facts[t.Name]; ok && t.Name != control {
			order = append(order, t.Name)
		}
	}
	env.Targets = order
	if len(order) < 2 {
		return env
	}
	sets := make([]*host.Facts, len(order))
	for i, n := range order {
		sets[i] = env.Facts[n]
	}
	for _, d := range host.Compare(sets, false) {
		if d.Counts() {
			env.Diffs = append(env.Diffs, d)
		}
	}
	return env
}

// stallRuns lists every stall capture of the runs, in run order.
func stallRuns(runs []store.Run) []StallRun {
	var out []StallRun
	for _, run := range runs {
		if run.Result == nil {
			continue
		}
		for _, st := range run.Result.Stalls {
			out = append(out, StallRun{Run: run, Stall: st})
		}
	}
	return out
}

// hostNote says what the host table rests on, or "" when there is no table.
func (e *HostEnv) note() string {
	switch {
	case e == nil || len(e.Targets) == 0:
		return ""
	case len(e.Targets) < 2:
		return fmt.Sprintf("Host facts were recorded for %s only: nothing to compare.", strings.Join(e.Targets, ", "))
	case len(e.Diffs) == 0:
		return fmt.Sprintf("No host setting differs between %s (as their first runs found them).", strings.Join(e.Targets, ", "))
	}
	return "Host settings that differ, as each target's first run found them (host diff explains each)."
}

func (e *HostEnv) table() *table {
	t := &table{header: []string{"host setting"}, right: []bool{false}}
	for _, n := range e.Targets {
		t.header = append(t.header, n)
		t.right = append(t.right, false)
	}
	t.header = append(t.header, "what it does")
	t.right = append(t.right, false)
	for _, d := range e.Diffs {
		cells := append([]string{d.Name}, d.Values...)
		what := ""
		if x := d.Explanation; x != nil {
			what = x.What
		}
		t.add(append(cells, what)...)
	}
	return t
}

func (r *Report) stallTitle(s StallRun) string {
	if s.Run.ID > 0 { // report --stall ID prints it in full
		return fmt.Sprintf("run %d: step %d, %s, %s, %d threads, repeat %d, at %.1fs", s.Run.ID, s.Run.Step, s.Run.Target, s.Run.Workload, s.Run.Threads, s.Run.Repeat, s.Stall.AtS)
	}
	return fmt.Sprintf("step %d, %s, %s, %d threads, repeat %d, at %.1fs", s.Run.Step, s.Run.Target, s.Run.Workload, s.Run.Threads, s.Run.Repeat, s.Stall.AtS)
}

// writeHostText writes the host differences and the stall captures.
func (r *Report) writeHostText(w io.Writer) {
	if n := r.Host.note(); n != "" {
		fmt.Fprintln(w, "\nHost")
		wrap(w, n, 100, "  ")
		if len(r.Host.Diffs) > 0 {
			r.Host.table().writeText(w, "  ")
		}
	}
	if e := r.Host; e != nil && len(e.Counters) > 0 {
		fmt.Fprintln(w, "\nHost counters")
		wrap(w, countersNote, 100, "  ")
		e.countersTable().writeText(w, "  ")
	}
	if len(r.Stalls) > 0 {
		fmt.Fprintf(w, "\nStall captures (%d)\n", len(r.Stalls))
		for i, s := range r.Stalls {
			fmt.Fprintf(w, "  %s\n", r.stallTitle(s))
			s.Stall.Write(w, i+1)
		}
	}
}

// writeHostMarkdown is writeHostText in markdown.
func (r *Report) writeHostMarkdown(w io.Writer) {
	if n := r.Host.note(); n != "" {
		fmt.Fprintf(w, "\n## Host\n\n%s\n", mdEscape(n))
		if len(r.Host.Diffs) > 0 {
			fmt.Fprintln(w)
			r.Host.table().writeMarkdown(w)
		}
	}
	if e := r.Host; e != nil && len(e.Counters) > 0 {
		e.countersTable().writeMarkdownSection(w, "Host counters", mdEscape(countersNote))
	}
	if len(r.Stalls) > 0 {
		fmt.Fprintf(w, "\n## Stall captures (%d)\n", len(r.Stalls))
		for i, s := range r.Stalls {
			fmt.Fprintf(w, "\n### %s\n\n```\n", mdEscape(r.stallTitle(s)))
			s.Stall.Write(w, i+1)
			fmt.Fprintln(w, "```")
		}
	}
}

type jsonHostDiff struct {
	Name        string            `json:"name"`
	Group       string            `json:"group"`
	Values      map[string]string `json:"values"`
	Explanation *host.Explanation `json:"explanation,omitempty"`
}

type jsonStall struct {
	Step     int          `json:"step"`
	Target   string       `json:"target"`
	Workload string       `json:"workload"`
	Threads  int          `json:"threads"`
	Repeat   int          `json:"repeat"`
	Capture  result.Stall `json:"capture"`
}

func (r *Report) jsonHost() ([]jsonHostDiff, []jsonStall) {
	var diffs []jsonHostDiff
	if r.Host != nil {
		for _, d := range r.Host.Diffs {
			v := jsonHostDiff{Name: d.Name, Group: d.Group, Values: map[string]string{}, Explanation: d.Explanation}
			for i, n := range r.Host.Targets {
				v.Values[n] = d.Values[i]
			}
			diffs = append(diffs, v)
		}
	}
	var stalls []jsonStall
	for _, s := range r.Stalls {
		stalls = append(stalls, jsonStall{Step: s.Run.Step, Target: s.Run.Target, Workload: s.Run.Workload,
			Threads: s.Run.Threads, Repeat: s.Run.Repeat, Capture: s.Stall})
	}
	return diffs, stalls
}

// hostHTML writes the host differences, inside the environment section.
func (h *htmlWriter) hostHTML() {
	e := h.r.Host
	if n := e.note(); n != "" {
		h.p("<h3 id=\"host\">Host</h3>\n<p>%s</p>\n", esc(n))
		if len(e.Diffs) > 0 {
			h.table(e.table(), nil)
		}
	}
	if e != nil && len(e.Counters) > 0 {
		h.p("<h3 id=\"host-counters\">Host counters</h3>\n<p>%s</p>\n", esc(countersNote))
		h.table(e.countersTable(), nil)
	}
}

// stallsHTML writes the stall captures: why each fired, the seconds
// before it, and each section read, tables open and texts folded.
func (h *htmlWriter) stallsHTML() {
	r := h.r
	if len(r.Stalls) == 0 {
		return
	}
	h.p("<h2 id=\"stalls\">Stall captures</h2>\n")
	for _, s := range r.Stalls {
		st := s.Stall
		h.p("<section class=\"stall\">\n<h3>%s</h3>\n<p><b>Why:</b> %s (captured in %.0f ms)</p>\n",
			esc(r.stallTitle(s)), esc(strings.Join(st.Reasons, "; ")), st.CaptureMS)
		for _, b := range st.Blockers {
			h.p("<p class=\"blocker\"><b>Blocking, waiting for nothing:</b> %s</p>\n", esc(b))
		}
		if len(st.Before) > 0 {
			t := &table{header: []string{"t (s)", "qps", "threads_running"}, right: []bool{true, true, true}}
			for _, b := range st.Before {
				t.add(fmt.Sprintf("%.1f", b.AtS), fmt.Sprintf("%.0f", b.Values["qps"]), fmt.Sprintf("%.0f", b.Values["threads_running"]))
			}
			h.p("<details><summary>The %d seconds before</summary>\n", len(st.Before))
			h.table(t, nil)
			h.p("</details>\n")
		}
		for _, sec := range st.Sections {
			switch {
			case sec.Error != "":
				h.p("<p class=\"err\">%s: not read: %s</p>\n", esc(sec.Name), esc(sec.Error))
			case sec.Columns == nil:
				h.p("<details><summary>%s (%d lines)</summary>\n<pre>%s</pre>\n</details>\n", esc(sec.Name), strings.Count(sec.Text, "\n"), esc(sec.Text))
			default:
				t := &table{header: sec.Columns, right: make([]bool, len(sec.Columns))}
				for _, row := range sec.Rows {
					t.add(row...)
				}
				h.p("<h4>%s (%d rows)</h4>\n", esc(sec.Name), len(sec.Rows))
				if sec.PauseMS > 0 {
					h.p("<p>The server stopped %.0f ms while gdb read them.</p>\n", sec.PauseMS)
				}
				h.table(t, nil)
			}
		}
		h.p("</section>\n")
	}
}
