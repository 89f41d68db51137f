package readiness

import (
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/render"
)

// formats are the ways Write writes a page, in the order Formats names
// them.
var formats = []outfile.Format[*Page]{
	{Name: "text", Write: WriteText},
	{Name: "md", Write: WriteMarkdown},
	{Name: "json", Write: WriteJSON},
	{Name: "html", Write: WriteHTML},
}

// Formats are the names Write accepts.
var Formats = outfile.FormatNames(formats)

// Write writes the page in format.
func Write(w io.Writer, format string, p *Page) error {
	return outfile.WriteFormat(w, "readiness page", format, formats, p)
}

// WriteJSON writes the page as a JSON document.
func WriteJSON(w io.Writer, p *Page) error { return outfile.WriteJSON(w, p) }

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
		{"canary", "canary (mirror)", p.Canary},
		{"follow", "follow", p.Follow},
		{"cutover", "cutover", p.Cutover},
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
	writeFollowingText(&b, p)
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
	writeFollowingMarkdown(&b, p, esc)
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
	"secs":  func(f float64) string { return fmt.Sprintf("%.1f s", f) },
	"ms":    func(f float64) string { return fmt.Sprintf("%.3f s", f) },
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
<section id="canary"><h2>Mirrored reads</h2>
{{if eq .Canary.Status "missing"}}<p>No canary yet: run <code class="cmd">{{.Canary.Command}}</code> and point part of the application's reads at it</p>
{{else}}<p class="{{.Canary.Status}}">{{.Canary.Summary}}</p>{{end}}
</section>
<section id="following"><h2>Following</h2>
{{with .Following}}<p class="{{$.Follow.Status}}">{{$.Follow.Summary}}</p>
<table id="follow-lag"><tr><th>lag</th><th>p50</th><th>p99</th><th>max</th><th>samples</th></tr>
<tr id="lag-under-load"><td>under the load (while the sweep ran)</td>{{with .LagUnderLoad}}<td>{{secs .P50}}</td><td>{{secs .P99}}</td><td>{{secs .Max}}</td><td>{{.Samples}}</td>{{end}}</tr>
<tr id="lag-overall"><td>overall (the catch-up after the copy included)</td>{{with .Lag}}<td>{{secs .P50}}</td><td>{{secs .P99}}</td><td>{{secs .Max}}</td><td>{{.Samples}}</td>{{end}}</tr>
</table>
<p id="follow-rows">{{.Rows}} rows applied in {{.Transactions}} transactions over {{secs .Seconds}}, {{.Reconnects}} reconnects; {{.State}} at <code>{{.Position}}</code> (from <code>{{.From}}</code>){{with .Error}}: {{.}}{{end}}</p>
{{else}}{{if eq .Follow.Status "missing"}}<p>No follower yet: run <code class="cmd">{{.Follow.Command}}</code></p>{{else}}<p class="{{.Follow.Status}}">{{.Follow.Summary}}</p>{{end}}{{end}}
{{with .VerifyFollowing}}<p id="verify-following">Verify while following: {{.}}.</p>
{{end}}</section>
<section id="cutover"><h2>Cutover rehearsal</h2>
{{with .CutoverRun}}<p id="cutover-window" class="{{$.Cutover.Status}}">Write-unavailable window: <b>{{ms .WriteUnavailable}}</b> (from read_only on to the verify's end).
{{if eq $.Cutover.Status "incomplete"}}{{$.Cutover.Summary}}{{else}}{{if .Verified}}{{if .Equal}}Data equal ({{.Rows}} rows compared){{else}}<b>Data NOT equal</b>: {{.DifferingRows}} rows differ{{end}}{{else}}Data not verified (verify: none){{end}};
read_only {{if .ReadOnlyRestored}}restored to {{.ReadOnlyBefore}}{{else}}not restored{{end}}.{{end}}</p>
<table id="cutover-steps"><tr><th>at</th><th>took</th><th>step</th><th>what happened</th></tr>
{{range .Steps}}<tr><td>{{ms .At}}</td><td>{{ms .Seconds}}</td><td>{{.Name}}</td><td>{{.Detail}}</td></tr>
{{end}}</table>
{{range .Notes}}<p><small>note: {{.}}</small></p>
{{end}}{{else}}{{if eq .Cutover.Status "missing"}}<p>No cutover rehearsal yet: run <code class="cmd">{{.Cutover.Command}}</code></p>{{else}}<p class="{{.Cutover.Status}}">{{.Cutover.Summary}}</p>{{end}}{{end}}
</section>
`)

// writeFollowingText writes the following and cutover sections, where the
// store holds them.
func writeFollowingText(b *strings.Builder, p *Page) {
	if f := p.Following; f != nil {
		fmt.Fprintf(b, "\nfollowing, the rehearsal's follower of the source's binary log (%s):\n", f.State)
		fmt.Fprintf(b, "  applied         %d rows in %d transactions over %.1f s, %d reconnects\n", f.Rows, f.Transactions, f.Seconds, f.Reconnects)
		fmt.Fprintf(b, "  lag under load  %s (%d samples while the sweep ran)\n", f.LagUnderLoad, f.LagUnderLoad.Samples)
		fmt.Fprintf(b, "  lag overall     %s (%d samples, the catch-up after the copy included)\n", f.Lag, f.Lag.Samples)
		fmt.Fprintf(b, "  position        %s -> %s\n", f.From, f.Position)
		if f.Error != "" {
			fmt.Fprintf(b, "  stopped by      %s\n", f.Error)
		}
	}
	if v := p.VerifyFollowing; v != nil {
		if p.Following == nil {
			b.WriteString("\n")
		}
		fmt.Fprintf(b, "  verify while following: %s\n", v)
	}
	if c := p.CutoverRun; c != nil {
		fmt.Fprintf(b, "\ncutover rehearsal: write-unavailable window %.3f s (from read_only on to the verify's end)\n", c.WriteUnavailable)
		fmt.Fprintf(b, "  %9s  %9s  %-14s %s\n", "at", "took", "step", "what happened")
		for _, s := range c.Steps {
			fmt.Fprintf(b, "  %7.3f s  %7.3f s  %-14s %s\n", s.At, s.Seconds, s.Name, s.Detail)
		}
		for _, n := range c.Notes {
			fmt.Fprintf(b, "  note: %s\n", n)
		}
	}
}

// writeFollowingMarkdown is writeFollowingText's Markdown.
func writeFollowingMarkdown(b *strings.Builder, p *Page, esc func(string) string) {
	if f := p.Following; f != nil || p.VerifyFollowing != nil {
		b.WriteString("\n## Following\n\n")
		if f != nil {
			fmt.Fprintf(b, "%d rows applied in %d transactions over %.1f s, %d reconnects; %s at `%s` (from `%s`)\n\n",
				f.Rows, f.Transactions, f.Seconds, f.Reconnects, f.State, f.Position, f.From)
			b.WriteString("| lag | p50 | p99 | max | samples |\n|---|---|---|---|---|\n")
			for _, l := range []struct {
				name string
				lag  Lag
			}{{"under the load (while the sweep ran)", f.LagUnderLoad}, {"overall", f.Lag}} {
				fmt.Fprintf(b, "| %s | %.1f s | %.1f s | %.1f s | %d |\n", l.name, l.lag.P50, l.lag.P99, l.lag.Max, l.lag.Samples)
			}
			if f.Error != "" {
				fmt.Fprintf(b, "\nStopped by: %s\n", esc(f.Error))
			}
		}
		if v := p.VerifyFollowing; v != nil {
			fmt.Fprintf(b, "\nVerify while following: %s.\n", v)
		}
	}
	if c := p.CutoverRun; c != nil {
		fmt.Fprintf(b, "\n## Cutover rehearsal\n\nWrite-unavailable window: **%.3f s** (from read_only on to the verify's end).\n\n| at | took | step | what happened |\n|---|---|---|---|\n", c.WriteUnavailable)
		for _, s := range c.Steps {
			fmt.Fprintf(b, "| %.3f s | %.3f s | %s | %s |\n", s.At, s.Seconds, s.Name, esc(s.Detail))
		}
	}
}
