package mirror

import (
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/render"
	"github.com/shakedown/shakedown/internal/sqlsplit"
	"github.com/shakedown/shakedown/internal/stats"
)

// pageData is what the live page shows.
type pageData struct {
	Listen, Control string
	Candidates      []pageCandidate
	Running         string
	S               *Summary
	Periods         []Period // the ended periods, then the one under way
	Drops           []pageDrop
}

type pageCandidate struct {
	Name, URL string
	Down      bool
}

// pageDrop is one class's reads not compared on one candidate.
type pageDrop struct {
	Statement, Candidate    string
	Full, Down, Lost, Total int64
}

// WriteHTML writes the live page: the totals, the per-class table, the
// differences with a sample of each, the drops, and the latency ratio of
// each snapshot period. It shows targets by their redacted URLs.
func (m *Mirror) WriteHTML(w io.Writer) error {
	s := m.Summary()
	d := pageData{Listen: m.Addr(), Control: m.opts.Control.Redacted(), S: s,
		Running: time.Duration(s.Seconds * float64(time.Second)).Round(time.Second).String()}
	for i, c := range m.opts.Candidates {
		d.Candidates = append(d.Candidates, pageCandidate{Name: c.Name, URL: c.Target.Redacted(), Down: s.Candidates[i].Down})
	}
	recent, since := m.Recent()
	d.Periods = recent
	// The period under way, as far as it has come: its counters against
	// the last period's end.
	cur := *s
	cur.Classes = nil
	var prev *Summary
	next := 1
	if n := len(recent); n > 0 {
		prev, next = recent[n-1].Total, recent[n-1].N+1
	}
	d.Periods = append(d.Periods, Period{N: next, Start: since, End: time.Now(), Why: "under way", Figures: diffSummary(&cur, prev)})
	for _, cl := range s.Classes {
		for _, c := range cl.Candidates {
			if t := c.Dropped + c.Down + c.Lost; t > 0 {
				d.Drops = append(d.Drops, pageDrop{Statement: cl.Statement, Candidate: c.Name, Full: c.Dropped, Down: c.Down, Lost: c.Lost, Total: t})
			}
		}
	}
	return render.Execute(w, render.Page{Title: "shakedown mirror on " + d.Listen, Class: "mirror"}, pageTmpl, d)
}

var pageTmpl = render.Template("mirror", template.FuncMap{
	"clip":  sqlsplit.Short,
	"ratio": ratioText,
	"class": func(s stats.State) string { return render.StateClass(s, false) },
	"num":   num,
	"side":  sideText,
	"clock": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") },
	"sum": func(c CandidateSummary) string {
		if c.Compared == 0 {
			return "-"
		}
		return fmt.Sprintf("%.3fx", c.Ratio)
	},
	"rows": func(r SampleResult) [][]string { return r.FirstRows },
	"join": func(row []string) string { return strings.Join(row, " | ") },
}, `<h1>shakedown mirror</h1>
<p class="meta">listening on <code>{{.Listen}}</code>; control <code>{{.Control}}</code>; running for {{.Running}}; this page reloads every 10 s</p>
<table id="candidates">
<tr><th class="l">candidate</th><th class="l">URL</th><th class="l">state</th><th>mirrored</th><th>compared</th><th>differing</th><th>dropped</th><th>latency ratio</th></tr>
{{range $i, $c := .S.Candidates}}<tr><td class="l">{{$c.Name}}</td><td class="l"><code>{{(index $.Candidates $i).URL}}</code></td><td class="l{{if $c.Down}} error{{end}}">{{if $c.Down}}down{{else}}up{{end}}{{if $c.Lost}} (lost {{$c.Lost}} times, back {{$c.Back}}){{end}}</td>
<td>{{$c.Mirrored}}</td><td>{{$c.Compared}}</td><td{{if $c.Differing}} class="slower"{{end}}>{{$c.Differing}}</td><td>{{$c.Dropped}}</td><td>{{sum $c}}</td></tr>
{{end}}</table>
<p id="totals">{{.S.Through}} statements through from {{.S.Sessions}} sessions; {{.S.Mirrored}} mirrored, {{.S.Compared}} compared, {{.S.Differing}} differing, {{.S.Dropped}} dropped</p>
<h2>Query classes</h2>
<div class="scroll"><table id="classes">
<tr><th class="l">class</th><th class="l">candidate</th><th>through</th><th>mirrored</th><th>compared</th><th>differing</th><th>dropped</th><th>control p50 ms</th><th>candidate p50 ms</th><th>latency ratio [interval]</th><th class="l">state</th></tr>
{{range .S.Classes}}{{$cl := .}}{{range $i, $c := .Candidates}}<tr data-digest="{{$cl.Digest}}" data-candidate="{{$c.Name}}">
<td class="l">{{if eq $i 0}}<code>{{clip $cl.Statement 87}}</code>{{end}}</td><td class="l">{{$c.Name}}</td><td>{{if eq $i 0}}{{$cl.Through}}{{end}}</td><td>{{$c.Mirrored}}</td><td>{{$c.Compared}}</td>
<td{{if $c.Differing}} class="slower"{{end}}>{{$c.Differing}}</td><td>{{$c.Dropped}}</td><td>{{num $c.ControlP50ms $c.Compared}}</td><td>{{num $c.CandidateP50ms $c.Compared}}</td><td>{{ratio $c}}</td><td class="l {{class $c.State}}">{{$c.State}}</td></tr>
{{end}}{{end}}</table></div>
<h2>Differences</h2>
<div id="differences">
{{range .S.Classes}}{{range .Candidates}}{{if .Sample}}{{$name := .Name}}<div class="difference" data-candidate="{{.Name}}">
<h3>differs on {{.Name}}: {{.Sample.Kind}} ({{.Differing}} of {{.Compared}} compared)</h3>
<pre>{{.Sample.Statement}}</pre>
<table><tr><th class="l">control</th><td class="l wrap">{{side .Sample.Control}}</td></tr>
<tr><th class="l">{{.Name}}</th><td class="l wrap">{{side .Sample.Candidate}}</td></tr></table>
{{with .Sample.First}}<p class="first-difference">first differs {{.Where}}</p>
<table class="first-difference">{{with .Control}}<tr data-side="control"><th class="l">control</th><td>row {{.Row}}</td><td class="l wrap">{{.Text}}</td></tr>{{end}}
{{with .Candidate}}<tr data-side="candidate"><th class="l">{{$name}}</th><td>row {{.Row}}</td><td class="l wrap">{{.Text}}</td></tr>{{end}}</table>{{end}}
</div>
{{end}}{{end}}{{end}}
{{if eq .S.Differing 0}}<p>No result has differed.</p>{{end}}
</div>
<h2>Drops</h2>
{{if .Drops}}<table id="drops">
<tr><th class="l">class</th><th class="l">candidate</th><th>queue full</th><th>candidate down</th><th>connection lost</th></tr>
{{range .Drops}}<tr><td class="l wrap"><code>{{clip .Statement 117}}</code></td><td class="l">{{.Candidate}}</td><td>{{.Full}}</td><td>{{.Down}}</td><td>{{.Lost}}</td></tr>
{{end}}</table>{{else}}<p id="drops">No read has been dropped.</p>{{end}}
<h2>Latency ratio over time</h2>
<p class="meta">Each snapshot period's own figures; the last row is the period under way.</p>
<table id="periods">
<tr><th>period</th><th class="l">from</th><th class="l">to</th><th class="l">ended</th><th>through</th><th>compared</th><th>differing</th><th>dropped</th>{{range .S.Candidates}}<th>{{.Name}} latency ratio</th>{{end}}</tr>
{{range .Periods}}<tr data-period="{{.N}}"><td>{{.N}}</td><td class="l">{{clock .Start}}</td><td class="l">{{clock .End}}</td><td class="l">{{.Why}}</td><td>{{.Figures.Through}}</td><td>{{.Figures.Compared}}</td><td>{{.Figures.Differing}}</td><td>{{.Figures.Dropped}}</td>{{range .Figures.Candidates}}<td>{{sum .}}</td>{{end}}</tr>
{{end}}</table>
<script>setTimeout(function () { location.reload(); }, 10000);</script>
`)
