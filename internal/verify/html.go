package verify

import (
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/shakedown/shakedown/internal/render"
)

// WriteHTML writes the report as a self-contained HTML page (no scripts,
// no external resources), for linking from the main report. At most
// maxRows differing rows are listed per table.
func WriteHTML(w io.Writer, r *Report, maxRows int) error {
	data := struct {
		*Report
		Verdict   string
		Rechecked string
		MaxRows   int
	}{r, Verdict(r), recheckSentence(r), maxRows}
	page := render.Page{Title: "shakedown verify", Class: "verify"}
	if err := render.Execute(w, page, htmlTemplate, data); err != nil {
		return fmt.Errorf("write verify HTML: %w", err)
	}
	return nil
}

var htmlTemplate = render.Template("verify", template.FuncMap{
	"state":  dataState,
	"plural": plural,
	"words":  func(s string) string { return strings.ReplaceAll(s, "_", " ") },
	"dataOK": func(t *TableReport) bool { return t.DifferingRows == 0 && t.Error == "" },
	"limit": func(rows []*RowDiff, n int) []*RowDiff {
		if len(rows) > n {
			return rows[:n]
		}
		return rows
	},
	"more": func(t *TableReport, n int) int64 {
		extra := t.RowsNotListed
		if len(t.Rows) > n {
			extra += int64(len(t.Rows) - n)
		}
		return extra
	},
	"kind": func(k string) string {
		switch k {
		case KindMissing:
			return "missing on target"
		case KindExtra:
			return "extra on target"
		}
		return k
	},
	"val": func(p *string) string {
		if p == nil {
			return "NULL"
		}
		return *p
	},
}, `<h1>Data verification</h1>
<p>Source <code>{{.Source}}</code> ({{.SourceServer.Flavour}} {{.SourceServer.Version}})<br>
Target <code>{{.Target}}</code> ({{.TargetServer.Flavour}} {{.TargetServer.Version}})<br>
Started {{.Started.Format "2006-01-02 15:04:05 UTC"}}, took {{printf "%.1f" .Seconds}}s</p>
<p class="verdict {{if .Equal}}equal{{else}}differ{{end}}">{{.Verdict}}</p>
{{with .Rechecked}}<p class="rechecks">{{.}}</p>
{{end}}<table id="verify-summary">
<thead><tr><th>Table</th><th>Rows source</th><th>Rows target</th><th>Chunks</th><th>Schema</th><th>Data</th><th>Time</th></tr></thead>
<tbody>
{{range .Tables}}<tr><td><a href="#t-{{.Table}}">{{.Table}}</a></td><td class="n">{{.RowsSource}}</td><td class="n">{{.RowsTarget}}</td><td class="n">{{.Chunks}}</td>
<td class="{{if .SchemaDifferences}}differ{{else}}equal{{end}}">{{if .SchemaDifferences}}{{plural (len .SchemaDifferences) "difference"}}{{else}}same{{end}}</td>
<td class="{{if dataOK .}}equal{{else}}differ{{end}}">{{state .}}</td><td class="n">{{printf "%.1f" .Seconds}}s</td></tr>
{{end}}</tbody>
</table>
{{range .Tables}}{{if or .SchemaDifferences .Rows .Notes .Error}}
<h2 id="t-{{.Table}}">{{.Table}}{{if .TargetTable}} &rarr; {{.TargetTable}}{{end}}</h2>
{{if .Error}}<p class="differ">Check failed: {{.Error}}</p>{{end}}
{{range .Notes}}<p>{{.}}</p>{{end}}
{{if .SchemaDifferences}}<table><thead><tr><th>Schema difference</th><th>Object</th><th>Source</th><th>Target</th></tr></thead><tbody>
{{range .SchemaDifferences}}<tr><td>{{words .Kind}}</td><td><code>{{.Object}}</code></td><td><code>{{.Source}}</code></td><td><code>{{.Target}}</code></td></tr>
{{end}}</tbody></table>{{end}}
{{if .Rows}}<table><thead><tr><th>Key</th><th>Kind</th><th>Columns</th></tr></thead><tbody>
{{range limit .Rows $.MaxRows}}<tr><td><code>{{range $i, $p := .Key}}{{if $i}} {{end}}{{$p.Column}}={{val $p.Value}}{{end}}</code>{{if gt .Count 1}} &times;{{.Count}}{{end}}</td><td>{{kind .Kind}}</td><td>{{range $i, $c := .Columns}}{{if $i}}, {{end}}{{$c}}{{end}}</td></tr>
{{end}}</tbody></table>
{{with more . $.MaxRows}}<p>{{.}} more rows not listed here.</p>{{end}}{{end}}
{{end}}{{end}}
<h2>Comparison rules</h2>
<ul class="rules">{{range .Rules}}<li>{{.}}</li>{{end}}</ul>
`)
