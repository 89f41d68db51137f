package vars

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
)

// maxShown is how much of a long value text output shows.
const maxShown = 48

// Shown returns the values of d as text output shows them: a long comma
// list (sql_mode, optimizer_switch) reduced to the items not common to
// every server, and anything still long cut short.
func Shown(d Difference) []string {
	out := append([]string(nil), d.Values...)
	long := false
	for _, v := range out {
		if len(v) > maxShown {
			long = true
		}
	}
	if long && !d.Equal {
		out = uncommonItems(out)
	}
	for i, v := range out {
		if len(v) > maxShown {
			out[i] = v[:maxShown-3] + "..."
		}
	}
	return out
}

// uncommonItems keeps, of each comma list, the items some other list lacks.
func uncommonItems(values []string) []string {
	count := map[string]int{}
	lists := make([][]string, len(values))
	for i, v := range values {
		if v == Missing {
			continue
		}
		seen := map[string]bool{}
		for _, it := range strings.Split(v, ",") {
			it = strings.TrimSpace(it)
			if !seen[strings.ToLower(it)] {
				seen[strings.ToLower(it)] = true
				count[strings.ToLower(it)]++
				lists[i] = append(lists[i], it)
			}
		}
	}
	present := 0
	for _, v := range values {
		if v != Missing {
			present++
		}
	}
	out := make([]string, len(values))
	for i, v := range values {
		if v == Missing {
			out[i] = v
			continue
		}
		var keep []string
		for _, it := range lists[i] {
			if count[strings.ToLower(it)] < present {
				keep = append(keep, it)
			}
		}
		if len(keep) == 0 {
			out[i] = "(common items only)"
		} else {
			out[i] = "..." + strings.Join(keep, ",")
		}
	}
	return out
}

// WriteText prints the comparison: the servers numbered, then one line per
// variable with each server's value, the explanation indented under a
// relevant one, and a closing count. Variables that some server lacks are
// summed up in a section of their own, by which servers have them; with
// all they are listed one per line like the others.
func WriteText(w io.Writer, names []string, diffs []Difference, all bool) error {
	ew := &errWriter{w: w}
	for i, n := range names {
		ew.printf("[%d] %s\n", i+1, n)
	}
	ew.printf("\n")
	if len(diffs) == 0 {
		ew.printf("No differences in %d servers' global variables (per-instance values such as server_id, ports and paths are ignored).\n", len(names))
		return ew.err
	}
	var lines, oneSide []Difference
	nDiff, nRel := 0, 0
	for _, d := range diffs {
		if d.OneSide && !all {
			oneSide = append(oneSide, d)
			continue
		}
		lines = append(lines, d)
		if !d.Equal && !d.OneSide {
			nDiff++
			if d.Relevant {
				nRel++
			}
		}
	}
	writeLines(ew, len(names), lines)
	if len(oneSide) > 0 {
		if len(lines) > 0 {
			ew.printf("\n")
		}
		writeOneSide(ew, oneSide)
	}
	nOne := 0
	for _, d := range diffs {
		if d.OneSide {
			nOne++
		}
	}
	ew.printf("\n%d variables differ, %d of them known to change performance or behaviour (*)", nDiff, nRel)
	if nOne > 0 {
		ew.printf("; %d more exist on some servers only", nOne)
	}
	ew.printf("; per-instance values such as server_id, ports and paths are ignored.\n")
	return ew.err
}

// writeLines prints one line per variable under a heading per section.
func writeLines(ew *errWriter, servers int, diffs []Difference) {
	width := len("variable")
	for _, d := range diffs {
		if len(d.Name) > width {
			width = len(d.Name)
		}
	}
	shown := make([][]string, len(diffs))
	colw := make([]int, servers)
	for i := range colw {
		colw[i] = len(fmt.Sprintf("[%d]", i+1))
	}
	for i, d := range diffs {
		shown[i] = Shown(d)
		for j, v := range shown[i] {
			if j < len(colw) && len(v) > colw[j] {
				colw[j] = len(v)
			}
		}
	}
	line := func(name string, vals []string, mark string) {
		var b strings.Builder
		fmt.Fprintf(&b, "%-*s", width+2, name)
		for j, v := range vals {
			fmt.Fprintf(&b, "  %-*s", colw[j], v)
		}
		text := b.String()
		if mark == "" {
			text = strings.TrimRight(text, " ")
		}
		ew.printf("%s%s\n", text, mark)
	}
	hdr := make([]string, servers)
	for i := range hdr {
		hdr[i] = fmt.Sprintf("[%d]", i+1)
	}
	section := ""
	for i, d := range diffs {
		s := "Other differences:"
		switch {
		case d.Equal:
			s = "Same on every server:"
		case d.OneSide:
			s = "On some servers only:"
		case d.Relevant:
			s = "Differences that change performance or behaviour:"
		}
		if s != section {
			if section != "" {
				ew.printf("\n")
			}
			ew.printf("%s\n", s)
			line("variable", hdr, "")
			section = s
		}
		mark := ""
		if d.Relevant && !d.Equal {
			mark = "  *"
		}
		line(d.Name, shown[i], mark)
		if d.Relevant && !d.Equal {
			ew.printf("    %s: %s\n", d.Group, d.Explain)
		}
		if !d.Equal {
			for j, n := range d.Notes {
				if n != "" {
					ew.printf("    [%d] %s\n", j+1, n)
				}
			}
		}
	}
}

// writeOneSide sums up the variables some server lacks: how many each
// combination of servers has, and the names of the relevant ones.
func writeOneSide(ew *errWriter, diffs []Difference) {
	type group struct {
		key      string
		n        int
		relevant []string
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, d := range diffs {
		var b strings.Builder
		for i, v := range d.Values {
			if v != Missing {
				fmt.Fprintf(&b, "[%d]", i+1)
			}
		}
		key := b.String()
		g := byKey[key]
		if g == nil {
			g = &group{key: key}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.n++
		if d.Relevant {
			g.relevant = append(g.relevant, d.Name)
		}
	}
	ew.printf("On some servers only: %d variables (other versions or flavours; --all lists each):\n", len(diffs))
	for _, g := range groups {
		ew.printf("    only on %s: %d", g.key, g.n)
		if len(g.relevant) > 0 {
			ew.printf(", of them known to change performance or behaviour: %s", strings.Join(g.relevant, ", "))
		}
		ew.printf("\n")
	}
}

// Document is the JSON form of a comparison.
type Document struct {
	Servers     []string     `json:"servers"`
	Differences []Difference `json:"differences"`
}

// WriteJSON writes the comparison as one indented JSON document.
func WriteJSON(w io.Writer, names []string, diffs []Difference) error {
	if diffs == nil {
		diffs = []Difference{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(Document{Servers: names, Differences: diffs})
}

var htmlTable = template.Must(template.New("vars").Parse(`{{define "rows"}}<table class="vars-diff">
<thead><tr><th>variable</th>{{range .Servers}}<th>{{.}}</th>{{end}}<th>what it changes</th></tr></thead>
<tbody>
{{- range .Rows}}
<tr class="{{if .D.Equal}}same{{else if .D.Relevant}}relevant{{else}}other{{end}}"><td><code>{{.D.Name}}</code></td>{{range .Cells}}<td title="{{.Full}}">{{.Shown}}</td>{{end}}<td>{{if .D.Relevant}}<b>{{.D.Group}}</b>: {{.D.Explain}}{{range .D.Notes}}{{if .}}<br><em>{{.}}</em>{{end}}{{end}}{{end}}</td></tr>
{{- end}}
</tbody>
</table>
{{end}}{{if .Main.Rows}}{{template "rows" .Main}}{{end}}{{if .OneSide.Rows}}<details class="vars-one-side"><summary>{{len .OneSide.Rows}} variables exist on some servers only (other versions or flavours)</summary>
{{template "rows" .OneSide}}</details>
{{end}}`))

// WriteHTML writes the comparison as an HTML table fragment (class
// "vars-diff"; rows classed relevant, other or same) for a report page to
// embed and style, the variables some server lacks in a second table inside
// a closed <details class="vars-one-side">. Values are escaped.
func WriteHTML(w io.Writer, names []string, diffs []Difference) error {
	type cell struct{ Shown, Full string }
	type row struct {
		D     Difference
		Cells []cell
	}
	type table struct {
		Servers []string
		Rows    []row
	}
	data := struct{ Main, OneSide table }{table{Servers: names}, table{Servers: names}}
	for _, d := range diffs {
		r := row{D: d}
		for i, v := range Shown(d) {
			r.Cells = append(r.Cells, cell{Shown: v, Full: d.Values[i]})
		}
		if d.OneSide {
			data.OneSide.Rows = append(data.OneSide.Rows, r)
		} else {
			data.Main.Rows = append(data.Main.Rows, r)
		}
	}
	return htmlTable.Execute(w, data)
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err != nil {
		return
	}
	_, e.err = fmt.Fprintf(e.w, format, args...)
}
