package replay

import (
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/shakedown/shakedown/internal/render"
	"github.com/shakedown/shakedown/internal/stats"
)

// WriteHTML writes the report as one self-contained page: totals, the
// fingerprints with their latencies and verdicts, and the differing
// results side by side.
func WriteHTML(w io.Writer, rep *Report) error {
	return render.Execute(w, render.Page{Title: "shakedown replay: " + rep.Capture, Class: "replay"}, pageTmpl, rep)
}

var pageTmpl = render.Template("replay", template.FuncMap{
	"join":  strings.Join,
	"class": func(s stats.State) string { return render.StateClass(s, false) },
	"ms":    func(f float64) string { return fmt.Sprintf("%.3f", f) },
	"ratio": func(c CandidFig) string {
		if c.Verdict == stats.NoVerdict {
			return "-"
		}
		return fmt.Sprintf("%.2f [%.2f-%.2f]", c.LatencyRatio, c.RatioLow, c.RatioHigh)
	},
	"first": func(f Fingerprint) CandidFig {
		if len(f.Candidates) == 0 {
			return CandidFig{}
		}
		return f.Candidates[0]
	},
	"rest": func(f Fingerprint) []CandidFig {
		if len(f.Candidates) < 2 {
			return nil
		}
		return f.Candidates[1:]
	},
	"params": func(p []any) string { return fmt.Sprint(p) },
}, `<h1>shakedown replay of {{.Capture}}{{if .Interrupted}} <span class="diff">(interrupted: partial)</span>{{end}}</h1>
<table>
<tr><th class="l">control</th><td class="l">{{.Control.Name}} <code>{{.Control.URL}}</code></td></tr>
{{range .Candidates}}<tr><th class="l">candidate</th><td class="l">{{.Name}} <code>{{.URL}}</code></td></tr>{{end}}
<tr><th class="l">mode</th><td class="l">{{if .ReadOnly}}read-only{{else}}writes allowed{{end}}, speed {{if eq .Speed 0.0}}as fast as possible{{else}}{{.Speed}}x{{end}}, {{printf "%.1f" .Seconds}} s</td></tr>
{{with .Client}}{{if .IO}}<tr><th class="l">client I/O</th><td class="l">{{.IO}}</td></tr>{{end}}{{end}}
</table>
{{with .Client}}{{if .Bound}}<p class="diff"><b>Client-bound:</b> {{.BoundNote "replay"}}; no latency verdict stands.</p>{{end}}{{end}}
<table>
<tr><th class="l">statements replayed</th><td>{{.Statements}}</td></tr>
<tr><th class="l">skipped</th><td>{{.Skipped.Total}}</td></tr>
<tr><th class="l">differences</th><td{{if gt .Differences 0}} class="diff"{{end}}>{{.Differences}}</td></tr>
<tr><th class="l">new errors</th><td{{if gt .NewErrors 0}} class="diff"{{end}}>{{.NewErrors}}</td></tr>
<tr><th class="l">non-deterministic</th><td>{{.NonDet}}</td></tr>
<tr><th class="l">not comparable</th><td>{{.NotComparable}}</td></tr>
<tr><th class="l">errors</th><td>{{.Errors}}</td></tr>
</table>
{{if .Skipped.Reasons}}<p>Skipped: {{range $k, $v := .Skipped.Reasons}}{{$k}} {{$v}}; {{end}}</p>{{end}}
<h2>Fingerprints</h2>
<table>
<tr><th>count</th><th>diff</th><th>errors</th><th>nondet</th><th>control p50</th><th>p95</th><th>p99</th><th class="l">candidate</th><th>p50</th><th>p95</th><th>p99</th><th>ratio [95% CI]</th><th class="l">verdict</th><th class="l">fingerprint</th></tr>
{{range .Fingerprints}}{{$c := first .}}
<tr><td>{{.Count}}</td><td{{if gt .Differences 0}} class="diff"{{end}}>{{.Differences}}</td><td>{{.Errors}}</td><td>{{.NonDet}}</td>
<td>{{ms .Control.P50}}</td><td>{{ms .Control.P95}}</td><td>{{ms .Control.P99}}</td>
<td class="l">{{$c.Name}}</td><td>{{ms $c.Latency.P50}}</td><td>{{ms $c.Latency.P95}}</td><td>{{ms $c.Latency.P99}}</td><td>{{ratio $c}}</td><td class="l {{class $c.Verdict}}">{{$c.VerdictNote}}</td>
<td class="l"><code>{{.Digest}}</code> <pre>{{.Fingerprint}}</pre></td></tr>
{{range rest .}}<tr><td colspan="7"></td><td class="l">{{.Name}}</td><td>{{ms .Latency.P50}}</td><td>{{ms .Latency.P95}}</td><td>{{ms .Latency.P99}}</td><td>{{ratio .}}</td><td class="l {{class .Verdict}}">{{.VerdictNote}}</td><td></td></tr>{{end}}
{{end}}
</table>
<p><small>{{.VerdictRule}}.</small></p>
{{if .Examples}}<h2>Differences, side by side</h2>
{{range .Examples}}{{$ex := .}}<div class="ex">
<p><b>{{.What}}</b> on {{.Candidate}}; session {{.Session}} statement #{{.Seq}}{{if .DB}}, database {{.DB}}{{end}}, fingerprint <code>{{.Digest}}</code></p>
<pre>{{.SQL}}</pre>{{if .Params}}<p>parameters <code>{{params .Params}}</code></p>{{end}}
<div class="side">
<div><b>control</b>{{template "result" .ControlR}}</div>
<div><b>{{.Candidate}}</b>{{template "result" .CandR}}</div>
</div>{{with .First}}
<p class="first-difference"><b>first differs {{.Where}}</b></p>
<table>{{with .Control}}<tr><th class="l">control</th><td>row {{.Row}}</td>{{range .Values}}<td class="l"><code>{{.}}</code></td>{{end}}</tr>{{end}}
{{with .Candidate}}<tr><th class="l">{{$ex.Candidate}}</th><td>row {{.Row}}</td>{{range .Values}}<td class="l"><code>{{.}}</code></td>{{end}}</tr>{{end}}</table>{{end}}</div>
{{end}}{{end}}
{{define "result"}}{{if .Error}}<p class="diff">error {{.Error}}</p>{{else}}
<p>{{.Rows}} rows{{if gt .Warnings 0}}, <span class="warn">{{.Warnings}} warnings</span>{{end}}, {{printf "%.3f" .Ms}} ms</p>
{{if .Columns}}<table><tr>{{range .Columns}}<th class="l">{{.}}</th>{{end}}</tr>
{{range .Sample}}<tr>{{range .}}<td class="l"><code>{{.}}</code></td>{{end}}</tr>{{end}}</table>{{end}}{{end}}{{end}}
`)
