package report

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/shakedown/shakedown/internal/result"
)

// A report can carry the result of a "vars bisect" between two of its
// servers (Report.Bisect, read from the JSON that vars bisect --json
// writes): it says which of the differing variables make the difference,
// so it goes right after them. The HTML shows bisect's own section; text
// and Markdown a short block: the conclusion, the causes by effect, what
// was cleared and what was left open.

// bisectTitle heads the block in text and Markdown.
func bisectTitle(b *result.Bisect) string {
	return fmt.Sprintf("Which differences matter (vars bisect: %s %s; control %s, candidate %s)",
		b.Workload, strings.Join(b.RunArgs, " "), b.Control, b.Candidate)
}

// bisectCauses is the table of causes and interactions.
func bisectCauses(b *result.Bisect) *table {
	t := &table{header: []string{"variable", "control", "candidate", "effect on the control"}, right: []bool{false, false, false, false}}
	for _, c := range b.Causes {
		t.add(c.Variable, c.ControlValue, c.CandidateValue, c.Effect.String())
	}
	for _, in := range b.Interactions {
		t.add(in.Label(), "", "", in.Effect.String()+" together")
	}
	return t
}

// bisectLists are the lines after the causes: cleared, open, not testable.
func bisectLists(b *result.Bisect) []string {
	var out []string
	list := func(title string, names []string) {
		if len(names) > 0 {
			out = append(out, fmt.Sprintf("%s (%d): %s", title, len(names), strings.Join(names, ", ")))
		}
	}
	list("Cleared, shown not to matter", b.Cleared)
	list("Inconclusive", b.Inconclusive)
	list("Not resolved before the budget ran out", b.Unresolved)
	var nt []string
	for _, n := range b.NotTestable {
		nt = append(nt, n.Name+" ("+n.Reason+")")
	}
	list("Not testable", nt)
	return out
}

func (r *Report) writeBisectText(bw *bufio.Writer) {
	b := r.Bisect
	fmt.Fprintf(bw, "\n%s\n", bisectTitle(b))
	fmt.Fprintf(bw, "  %s\n", b.Summary())
	if len(b.Causes)+len(b.Interactions) > 0 {
		bisectCauses(b).writeText(bw, "  ")
	}
	for _, l := range bisectLists(b) {
		fmt.Fprintf(bw, "  %s\n", l)
	}
}

func (r *Report) writeBisectMarkdown(bw *bufio.Writer) {
	b := r.Bisect
	fmt.Fprintf(bw, "\n## Which differences matter: vars bisect\n\n")
	fmt.Fprintf(bw, "%s %s; control %s, candidate %s.\n\n", mdEscape(b.Workload), mdEscape(strings.Join(b.RunArgs, " ")), mdEscape(b.Control), mdEscape(b.Candidate))
	fmt.Fprintf(bw, "**%s**\n\n", mdEscape(b.Summary()))
	if len(b.Causes)+len(b.Interactions) > 0 {
		bisectCauses(b).writeMarkdown(bw)
		fmt.Fprintln(bw)
	}
	for _, l := range bisectLists(b) {
		fmt.Fprintf(bw, "%s.  \n", mdEscape(l))
	}
}
