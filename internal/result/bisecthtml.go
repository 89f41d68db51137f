package result

import (
	"fmt"
	"io"
	"strings"

	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/render"
	"github.com/shakedown/shakedown/internal/stats"
)

// esc escapes text for HTML by the pages' one rule (render.Esc): no URL
// becomes a link, since a page opens offline and refers to nothing outside
// itself.
func esc(s string) string { return render.Esc(s) }

// effectCell is a table cell coloured by the effect's state, as the
// report colours its verdicts.
func effectCell(e Effect) string {
	class := "noise"
	switch e.State {
	case stats.Faster:
		class = "faster"
		if e.Lo >= 1.2 {
			class += " strong"
		}
	case stats.Slower:
		class = "slower"
		if e.Hi <= 1/1.2 {
			class += " strong"
		}
	}
	return fmt.Sprintf(`<td class="l %s">%.2f&times; [%.2f, %.2f] %s</td>`, class, e.Ratio, e.Lo, e.Hi, esc(string(e.State)))
}

// WriteBisectHTML writes the result as an HTML section (class "vars-bisect") for
// a report page to place beside the variables diff: the conclusion, the
// causes by effect, interactions, cleared and untestable variables, and
// every round with its runs. Its styles are the pages' one stylesheet
// (render.Stylesheet), which the page around it carries.
func WriteBisectHTML(w io.Writer, r *Bisect) error {
	ew := &outfile.Sticky{W: w}
	p := ew.Printf
	p("<section class=\"vars-bisect\">\n")
	p("<h2 id=\"vars-bisect\">Which differences matter: vars bisect</h2>\n")
	p("<p class=\"meta\">%s %s, %d runs of each server, %d pairs of runs a round &middot; control <b>%s</b> &middot; candidate <b>%s</b></p>\n",
		esc(r.Workload), esc(strings.Join(r.RunArgs, " ")), r.Repeats, r.Pairs, esc(r.Control), esc(r.Candidate))
	if r.Difference != nil || r.All != nil {
		p("<table>\n<tr><th class=\"l\">comparison</th><th class=\"l\">against the control</th></tr>\n")
		if r.Difference != nil {
			p("<tr><td class=\"l\">the candidate as it is</td>%s</tr>\n", effectCell(*r.Difference))
		}
		if r.All != nil {
			p("<tr><td class=\"l\">all %d testable differences applied on the control</td>%s</tr>\n", len(r.Tested), effectCell(*r.All))
		}
		p("</table>\n")
	}
	p("<p><b>%s</b></p>\n", esc(r.Summary()))
	if len(r.Causes) > 0 {
		p("<h3>Causes, by effect</h3>\n<table>\n<tr><th class=\"l\">variable</th><th class=\"l\">control</th><th class=\"l\">candidate</th><th class=\"l\">the candidate's value alone on the control</th></tr>\n")
		for _, c := range r.Causes {
			p("<tr><td class=\"l\"><code>%s</code></td><td class=\"l\" title=\"%s\">%s</td><td class=\"l\" title=\"%s\">%s</td>%s</tr>\n",
				esc(c.Variable), esc(c.ControlValue), esc(short(c.ControlValue)), esc(c.CandidateValue), esc(short(c.CandidateValue)), effectCell(c.Effect))
		}
		p("</table>\n")
		for _, c := range r.Causes {
			if c.ByElimination != nil {
				p("<p class=\"meta\"><code>%s</code> is named by elimination: its group moved the control %s and the rest of the group was cleared.</p>\n", esc(c.Variable), esc(c.ByElimination.String()))
			}
		}
		if r.Together != nil {
			p("<p class=\"meta\">The causes together against all differences applied:</p>\n<table><tr>%s</tr></table>\n", effectCell(*r.Together))
		}
	}
	if len(r.Interactions) > 0 {
		p("<h3>Variables that matter together with others, not alone</h3>\n<table>\n<tr><th class=\"l\">variables</th><th class=\"l\">effect</th><th class=\"l\">alone</th></tr>\n")
		for _, in := range r.Interactions {
			p("<tr><td class=\"l\"><code>%s</code></td>%s<td class=\"wrap\">%s</td></tr>\n", esc(in.Label()), effectCell(in.Effect), esc(aloneText(in.Alone)))
		}
		p("</table>\n")
	}
	names := func(title string, list []string) {
		if len(list) == 0 {
			return
		}
		codes := make([]string, len(list))
		for i, n := range list {
			codes[i] = "<code>" + esc(n) + "</code>"
		}
		p("<h3>%s (%d)</h3>\n<p>%s</p>\n", esc(title), len(list), strings.Join(codes, ", "))
	}
	names("Cleared: shown not to matter", r.Cleared)
	names("Inconclusive: neither shown to matter nor not to", r.Inconclusive)
	if hint := r.SettleHint(); hint != "" {
		p("<p>%s</p>\n", esc(hint))
	}
	names("Not resolved before the budget ran out", r.Unresolved)
	if len(r.NotTestable) > 0 {
		p("<h3>Not testable (%d)</h3>\n<table>\n<tr><th class=\"l\">variable</th><th class=\"l\">why</th></tr>\n", len(r.NotTestable))
		for _, n := range r.NotTestable {
			p("<tr><td class=\"l\"><code>%s</code></td><td class=\"wrap\">%s</td></tr>\n", esc(n.Name), esc(n.Reason))
		}
		p("</table>\n")
	}
	if r.Threshold > 0 && r.All != nil {
		p("<p class=\"rule\"><b>How it decides.</b> Each round applies the candidate's values of a group of variables on the control and measures it %d times or more, "+
			"each run paired with a run of the control as it is made right next to it (a round that needs a restart pairs blocks of runs, each block just after a restart), so that a machine getting busier or quieter moves both runs of a pair alike; "+
			"ratio = the Hodges-Lehmann estimate of the pairs' ratios (qps with the group applied / qps of its paired control run), with the exact 95%% interval of Wilcoxon's signed-rank test. "+
			"A group matters when the whole interval lies beyond %.0f%% (a fifth of the whole difference on a log scale) and is cleared when it lies within it; "+
			"a group that matters is split in two, and a round left open gets more runs. "+
			"Then everything else is applied on top of the causes found, to find what matters only once they are applied.</p>\n",
			r.Pairs, r.Threshold*100)
	}
	if len(r.Measurements) > 0 {
		p("<details><summary>Every measurement: %d runs in %d rounds</summary>\n<table>\n", len(r.Measurements), len(r.Rounds))
		p("<tr><th>round</th><th class=\"l\">applied on the control</th><th>qps</th><th>control qps</th><th class=\"l\">against the control</th></tr>\n")
		if r.Difference != nil {
			p("<tr><td>0</td><td class=\"l\">(the candidate as it is)</td><td>%s</td><td>%s</td>%s</tr>\n", JoinQPS(r.CandidateQPS), JoinQPS(r.ControlQPS), effectCell(*r.Difference))
		}
		for _, rd := range r.Rounds {
			applied := strings.Join(rd.Applied, ", ")
			if len(rd.On) > 0 {
				applied += " on top of " + strings.Join(rd.On, ", ")
			}
			p("<tr><td>%d</td><td class=\"wrap\"><code>%s</code></td><td>%s</td><td>%s</td>%s</tr>\n", rd.N, esc(applied), JoinQPS(rd.QPS), JoinQPS(rd.Control), effectCell(rd.Vs))
		}
		p("</table>\n</details>\n")
	}
	p("</section>\n")
	return ew.Err
}

// WriteBisectHTMLPage writes the section as a page of its own.
func WriteBisectHTMLPage(w io.Writer, r *Bisect) error {
	page := render.Page{Title: "shakedown: vars bisect", Class: "bisect"}
	return render.Write(w, page, func(w io.Writer) error { return WriteBisectHTML(w, r) })
}
