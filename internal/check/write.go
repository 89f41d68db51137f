package check

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"

	"github.com/shakedown/shakedown/internal/render"
)

// Summary is the counts in one line.
func (r *Report) Summary() string {
	s := fmt.Sprintf("%s, %s, %s", plural(r.Errors, "error"), plural(r.Warnings, "warning"), plural(r.Notices, "notice"))
	if n := len(r.NotChecked); n > 0 {
		s += fmt.Sprintf("; %d not checked", n)
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func describe(e Endpoint) string {
	return fmt.Sprintf("%s (%s %s)", e.URL, e.Flavour, e.Version)
}

// WriteText writes the report for a terminal: the findings, errors first,
// each with its fix, then what could not be checked.
func WriteText(w io.Writer, r *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "check: source %s\n       target %s\n", describe(r.Source), describe(r.Target))
	dbs := strings.Join(r.Databases, ", ")
	if dbs == "" {
		dbs = "(none)"
	}
	fmt.Fprintf(&b, "databases: %s\n%s in %.1fs\n", dbs, r.Summary(), r.Seconds)
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "\n%-7s %s  %s\n        %s\n        fix: %s\n", strings.ToUpper(f.Severity), f.Check, f.Object, f.Message, f.Fix)
	}
	if len(r.NotChecked) > 0 {
		b.WriteString("\nnot checked:\n")
		for _, n := range r.NotChecked {
			fmt.Fprintf(&b, "  %s (%s): %s\n", n.Check, n.Side, n.Need())
		}
	}
	if len(r.AccountsSkipped) > 0 {
		fmt.Fprintf(&b, "\naccounts not compared (%s): %s\n", skippedWhy(r.AccountsSkipped), list(r.AccountsSkipped, 10))
	}
	if len(r.Variables) > 0 {
		both, oneSide := 0, 0
		for _, d := range r.Variables {
			if d.OneSide {
				oneSide++
			} else {
				both++
			}
		}
		verb := "differ"
		if both == 1 {
			verb = "differs"
		}
		fmt.Fprintf(&b, "\n%s %s between the servers", plural(both, "variable"), verb)
		if oneSide > 0 {
			fmt.Fprintf(&b, ", %d more exist on one side only", oneSide)
		}
		b.WriteString(" (shakedown vars diff SOURCE TARGET lists them; --json holds them)\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// skippedWhy says why the accounts names were left out of the
// comparison: all of them the servers' own (DefaultSkipAccounts, the list
// without --skip-accounts), or --skip-accounts named them.
func skippedWhy(names []string) string {
	for _, n := range names {
		user, _, _ := strings.Cut(strings.TrimPrefix(n, "'"), "'")
		if !slices.ContainsFunc(DefaultSkipAccounts, func(s string) bool { return strings.EqualFold(s, user) }) {
			return "--skip-accounts"
		}
	}
	return "the servers' own accounts; --skip-accounts sets which are left out"
}

// WriteJSON writes the report as a JSON document.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ReadJSON reads a document WriteJSON wrote.
func ReadJSON(data []byte) (*Report, error) {
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("read check document: %w", err)
	}
	if r.Version > DocumentVersion {
		return nil, fmt.Errorf("read check document: version %d is newer than this shakedown knows (%d)", r.Version, DocumentVersion)
	}
	return &r, nil
}

// WriteHTML writes the report as one self-contained page.
func WriteHTML(w io.Writer, r *Report) error {
	return render.Execute(w, render.Page{Title: "shakedown check", Class: "check"}, htmlPage, r)
}

var htmlPage = render.Template("check", template.FuncMap{
	"describe": describe,
	"join":     strings.Join,
}, `<h1>shakedown check</h1>
<p>source <code>{{describe .Source}}</code><br>target <code>{{describe .Target}}</code><br>
databases: {{if .Databases}}{{join .Databases ", "}}{{else}}(none){{end}}<br>
{{.Summary}}, {{printf "%.1f" .Seconds}}s, {{.Started.Format "2006-01-02 15:04:05 UTC"}}</p>
<h2>Findings</h2>
{{if .Findings}}<table><tr><th>severity</th><th>check</th><th>object</th><th>why it matters / how to fix it</th></tr>
{{range .Findings}}<tr><td class="sev {{.Severity}}">{{.Severity}}</td><td><code>{{.Check}}</code></td><td><code>{{.Object}}</code></td>
<td>{{.Message}}<div class="fix">fix: {{.Fix}}</div></td></tr>
{{end}}</table>{{else}}<p>No findings.</p>{{end}}
{{if .NotChecked}}<h2>Not checked</h2><table><tr><th>check</th><th>side</th><th>needs</th></tr>
{{range .NotChecked}}<tr><td><code>{{.Check}}</code></td><td>{{.Side}}</td><td>{{.Need}}</td></tr>
{{end}}</table>{{end}}
{{if .Variables}}<h2>Variables that differ</h2><table><tr><th>variable</th><th>source</th><th>target</th><th>what it changes</th></tr>
{{range .Variables}}<tr><td><code>{{.Name}}</code></td>{{range .Values}}<td><code>{{.}}</code></td>{{end}}<td>{{.Explain}}</td></tr>
{{end}}</table>{{end}}
`)
