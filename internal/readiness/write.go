package readiness

import (
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/docout"
	"github.com/shakedown/shakedown/internal/render"
)

// formats are the ways Write writes a page, in the order Formats names
// them.
var formats = []docout.Format[*Page]{
	{Name: "text", Write: WriteText},
	{Name: "md", Write: WriteMarkdown},
	{Name: "json", Write: WriteJSON},
	{Name: "html", Write: WriteHTML},
}

// Formats are the names Write accepts.
var Formats = docout.Names(formats)

// Write writes the page in format.
func Write(w io.Writer, format string, p *Page) error {
	return docout.Write(w, "readiness page", format, formats, p)
}

// WriteJSON writes the page as a JSON document.
func WriteJSON(w io.Writer, p *Page) error { return docout.WriteJSON(w, p) }

// piece is one row of the evidence list.
type piece struct {
	ID, Name string
	Piece
}

func (p *Page) pieces() []piece {
	return []piece{
		{"check", "check", p.Check},
		{"variables", "variables diff", p.Variables},
		{"sweep", "sweep verdicts", p.Sweep},
		{"replay", "replay", p.Replay},
		{"verify", "verify", p.Verify},
		{"capacity", "capacity", p.Capacity},
	}
}

func when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// text says what a piece holds, or the command that produces it.
func (pc piece) text() string {
	if pc.Status == StatusMissing {
		return "none yet: run " + pc.Command
	}
	s := pc.Summary
	if w := when(pc.At); w != "" {
		s += " (" + w + ")"
	}
	return s
}

// WriteText writes the page for a terminal.
func WriteText(w io.Writer, p *Page) error {
	var b strings.Builder
	fmt.Fprintf(&b, "readiness: source %s\n           target %s\n\nverdict: %s\n", p.Source, p.Target, strings.ToUpper(p.Verdict))
	if len(p.Reasons) > 0 {
		b.WriteString("\nreasons, in order:\n")
		for i, r := range p.Reasons {
			fmt.Fprintf(&b, "%3d. [%s] %s\n", i+1, r.Weight, r.Text)
			if r.Command != "" {
				fmt.Fprintf(&b, "     run: %s\n", r.Command)
			}
		}
	}
	b.WriteString("\nevidence:\n")
	for _, pc := range p.pieces() {
		fmt.Fprintf(&b, "  %-15s %-10s %s\n", pc.Name, pc.Status, pc.text())
	}
	if len(p.Levels) > 0 {
		fmt.Fprintf(&b, "\nsweep verdicts of %s against %s, %s:\n", p.Candidate, p.Control, p.SweepName)
		for _, l := range p.Levels {
			fmt.Fprintf(&b, "  %-24s %5d threads  %s\n", l.Workload, l.Threads, l.Verdict)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteMarkdown writes the page as Markdown.
func WriteMarkdown(w io.Writer, p *Page) error {
	var b strings.Builder
	esc := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", "\\|"), "\n", " ") }
	fmt.Fprintf(&b, "# Readiness: %s\n\n- source: `%s`\n- target: `%s`\n- built: %s\n\n", p.Verdict, p.Source, p.Target, when(p.Built))
	if len(p.Reasons) > 0 {
		b.WriteString("## Reasons, in order\n\n")
		for i, r := range p.Reasons {
			fmt.Fprintf(&b, "%d. **%s** (%s): %s", i+1, r.Weight, r.Evidence, r.Text)
			if r.Command != "" {
				fmt.Fprintf(&b, " Run: `%s`", r.Command)
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	b.WriteString("## Evidence\n\n| evidence | status | what it says |\n|---|---|---|\n")
	for _, pc := range p.pieces() {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", pc.Name, pc.Status, esc(pc.text()))
	}
	if len(p.Findings) > 0 {
		b.WriteString("\n## Check findings\n\n| severity | check | object | why | fix |\n|---|---|---|---|---|\n")
		for _, f := range p.Findings {
			fmt.Fprintf(&b, "| %s | `%s` | `%s` | %s | %s |\n", f.Severity, f.Check, esc(f.Object), esc(f.Message), esc(f.Fix))
		}
	}
	if len(p.NotChecked) > 0 {
		b.WriteString("\nNot checked:\n\n")
		for _, n := range p.NotChecked {
			fmt.Fprintf(&b, "- `%s` (%s): %s\n", n.Check, n.Side, n.Need())
		}
	}
	if len(p.Downgrades) > 0 {
		b.WriteString("\n## Less durable than the source\n\n| variable | source | target | what it risks |\n|---|---|---|---|\n")
		for _, d := range p.Downgrades {
			fmt.Fprintf(&b, "| `%s` | `%s` | `%s` | %s |\n", d.Variable, esc(d.Source), esc(d.Target), esc(d.Risk))
		}
	}
	if len(p.VarDiffs) > 0 {
		b.WriteString("\n## Variables that differ\n\n| variable | source | target | what it changes |\n|---|---|---|---|\n")
		for _, d := range p.VarDiffs {
			if len(d.Values) == 2 {
				fmt.Fprintf(&b, "| `%s` | `%s` | `%s` | %s |\n", d.Name, esc(d.Values[0]), esc(d.Values[1]), esc(d.Explain))
			}
		}
	}
	if len(p.Levels) > 0 {
		fmt.Fprintf(&b, "\n## Sweep verdicts: %s against %s, %s\n\n| workload | threads | verdict |\n|---|---|---|\n", p.Candidate, p.Control, p.SweepName)
		for _, l := range p.Levels {
			fmt.Fprintf(&b, "| %s | %d | %s |\n", l.Workload, l.Threads, l.Verdict)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteHTML writes the page as one self-contained HTML file.
func WriteHTML(w io.Writer, p *Page) error {
	page := render.Page{Title: "shakedown readiness: " + p.Verdict, Class: "readiness",
		Attrs: []render.Attr{{Name: "data-verdict", Value: p.Verdict}}}
	return render.Execute(w, page, htmlPage, struct {
		*Page
		Pieces []piece
	}{p, p.pieces()})
}

var htmlPage = render.Template("readiness", template.FuncMap{
	"when":  when,
	"upper": strings.ToUpper,
	"class": func(s string) string { return strings.ReplaceAll(s, " ", "-") },
}, `<h1>Migration readiness</h1>
<p>source <code>{{.Source}}</code><br>target <code>{{.Target}}</code><br>built {{when .Built}}</p>
<div class="verdict {{class .Verdict}}" id="verdict">{{upper .Verdict}}</div>
{{if .Reasons}}<h2>Reasons, in order</h2><ol id="reasons">
{{range .Reasons}}<li><span class="status {{.Weight}}">{{.Weight}}</span> ({{.Evidence}}) {{.Text}}{{if .Command}}<br>run: <code class="cmd">{{.Command}}</code>{{end}}</li>
{{end}}</ol>{{end}}
<h2>Evidence</h2>
<table id="evidence"><tr><th>evidence</th><th>status</th><th>what it says, or the command that produces it</th></tr>
{{range .Pieces}}<tr id="ev-{{.ID}}" data-status="{{.Status}}"><td>{{.Name}}</td><td class="status {{.Status}}">{{.Status}}</td>
<td>{{if eq .Status "missing"}}none yet: run <code class="cmd">{{.Command}}</code>{{else}}{{.Summary}}{{with when .At}} <small>({{.}})</small>{{end}}{{end}}</td></tr>
{{end}}</table>
<section id="check"><h2>Check findings</h2>
{{if eq .Check.Status "missing"}}<p>No check yet: run <code class="cmd">{{.Check.Command}}</code></p>
{{else if .Findings}}<table><tr><th>severity</th><th>check</th><th>object</th><th>why it matters / how to fix it</th></tr>
{{range .Findings}}<tr><td class="status {{.Severity}}">{{.Severity}}</td><td><code>{{.Check}}</code></td><td><code>{{.Object}}</code></td><td>{{.Message}}<br><small>fix: {{.Fix}}</small></td></tr>
{{end}}</table>{{else}}<p>No findings.</p>{{end}}
{{if .NotChecked}}<p>Not checked:</p><ul>{{range .NotChecked}}<li><code>{{.Check}}</code> ({{.Side}}): {{.Need}}</li>{{end}}</ul>{{end}}
</section>
<section id="variables"><h2>Variables diff</h2>
{{if eq .Variables.Status "missing"}}<p>No variables diff yet: run <code class="cmd">{{.Variables.Command}}</code></p>
{{else}}{{if .Downgrades}}<p class="warn">The target is less durable than the source:</p>
<table id="durability"><tr><th>variable</th><th>source</th><th>target</th><th>what it risks</th></tr>
{{range .Downgrades}}<tr><td><code>{{.Variable}}</code></td><td><code>{{.Source}}</code></td><td><code>{{.Target}}</code></td><td>{{.Risk}}</td></tr>
{{end}}</table>
{{end}}{{if .VarDiffs}}<table><tr><th>variable</th><th>source</th><th>target</th><th>what it changes</th></tr>
{{range .VarDiffs}}<tr><td><code>{{.Name}}</code></td>{{range .Values}}<td><code>{{.}}</code></td>{{end}}<td>{{.Explain}}</td></tr>
{{end}}</table>{{else}}<p>The servers' variables are the same.</p>{{end}}{{end}}
</section>
<section id="sweep"><h2>Sweep verdicts</h2>
{{if eq .Sweep.Status "missing"}}<p>No sweep with this target yet: run <code class="cmd">{{.Sweep.Command}}</code></p>
{{else}}<p>{{.Candidate}} against {{.Control}}, {{.SweepName}}</p>
<table><tr><th>workload</th><th>threads</th><th>verdict</th></tr>
{{range .Levels}}<tr><td>{{.Workload}}</td><td>{{.Threads}}</td><td>{{.Verdict}}</td></tr>
{{end}}</table>{{end}}
</section>
<section id="replay"><h2>Replay</h2>
{{if eq .Replay.Status "missing"}}<p>No replay yet: run <code class="cmd">{{.Replay.Command}}</code></p>
{{else}}<p class="{{.Replay.Status}}">{{.Replay.Summary}}</p>{{end}}
</section>
<section id="verify"><h2>Verify</h2>
{{if eq .Verify.Status "missing"}}<p>No verify yet: run <code class="cmd">{{.Verify.Command}}</code></p>
{{else}}<p class="{{.Verify.Status}}">{{.Verify.Summary}}</p>{{end}}
</section>
<section id="capacity"><h2>Capacity</h2>
{{if eq .Capacity.Status "missing"}}<p>No capacity search yet: run <code class="cmd">{{.Capacity.Command}}</code></p>
{{else}}<p class="{{.Capacity.Status}}">{{.Capacity.Summary}}</p>{{end}}
</section>
`)
