package report

import (
	"bufio"
	"fmt"
	"github.com/shakedown/shakedown/internal/render"
	"io"
	"sort"
)

// CapacityPage is what the capacity page shows, in plain figures, so that
// the report does not link the search that made them.
type CapacityPage struct {
	Title string
	SLO   string
	// Peak says where the production peak came from; "" for none.
	Peak    string
	Tool    string
	Targets []CapacityTarget
	// Versus holds a line per candidate against the control.
	Versus []string
}

// CapacityTarget is one target's search.
type CapacityTarget struct {
	Name    string
	Summary string  // the search's outcome in a sentence
	Rate    float64 // the capacity; 0 when none
	Steps   []CapacityStep
}

// CapacityStep is one open-loop step: rates in events per second,
// latency in milliseconds.
type CapacityStep struct {
	Offered, Achieved float64
	P50, P95, P99     float64
	Held              bool
}

// WriteCapacityHTML writes the capacity page: per target, latency (p50,
// p95, p99) against the offered rate and the achieved rate against the
// offered one, with the capacity marked; self-contained as WriteHTML's.
func WriteCapacityHTML(w io.Writer, p CapacityPage) error {
	page := render.Page{Title: "shakedown: " + p.Title, Class: "report", Scripts: true}
	return render.Write(w, page, func(w io.Writer) error {
		h := &htmlWriter{Writer: bufio.NewWriter(w)}
		h.p("<h1>shakedown: %s</h1>\n<p class=\"meta\">SLO %s</p>\n", esc(p.Title), esc(p.SLO))
		if p.Peak != "" {
			h.p("<p class=\"meta peak\">%s</p>\n", esc(p.Peak))
		}
		if len(p.Versus) > 0 {
			h.p("<h2 id=\"verdicts\">Candidates against the control</h2>\n<ul>\n")
			for _, v := range p.Versus {
				h.p("<li>%s</li>\n", esc(v))
			}
			h.p("</ul>\n")
		}
		for i, t := range p.Targets {
			h.p("<h2 class=\"capacity\">%s</h2>\n<p class=\"plain\">%s</p>\n", esc(t.Name), esc(t.Summary))
			lat, ach := capacityCharts(t, colour(i))
			h.p("<div class=\"charts\"><figure>%s</figure><figure>%s</figure></div>\n", lat.svg(), ach.svg())
		}
		h.p("<p class=\"rule\"><b>How a step holds.</b> %s</p>\n", esc(capacityRule))
		h.p("<footer>Made by %s; the charts are drawn in the page itself and need no network.</footer>\n", esc(p.Tool))
		return h.Flush()
	})
}

const capacityRule = "Each step offers Poisson arrivals at a rate and counts latency from each arrival's intended start. " +
	"It holds when the rate that fell due was achieved within 2%, the backlog of arrivals not started did not grow, " +
	"each percentile's upper 95% confidence bound (by order statistics) is within the SLO, errors are within theirs, " +
	"and the client was not the limit. The capacity is the highest rate that held, confirmed by repeats."

// capacityCharts draws latency and the achieved rate against the offered
// rate, the capacity marked on both.
func capacityCharts(t CapacityTarget, c string) (lat, ach *chart) {
	steps := append([]CapacityStep(nil), t.Steps...)
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].Offered < steps[j].Offered })
	tip := func(s CapacityStep, what string, v float64) string {
		held := "held"
		if !s.Held {
			held = "did not hold"
		}
		return fmt.Sprintf("%.1f/s offered: %s %.2f (%s)", s.Offered, what, v, held)
	}
	var p50, p95, p99, got, want []xy
	for _, s := range steps {
		p50 = append(p50, xy{s.Offered, s.P50, tip(s, "p50 ms", s.P50)})
		p95 = append(p95, xy{s.Offered, s.P95, tip(s, "p95 ms", s.P95)})
		p99 = append(p99, xy{s.Offered, s.P99, tip(s, "p99 ms", s.P99)})
		got = append(got, xy{s.Offered, s.Achieved, tip(s, "achieved /s", s.Achieved)})
		want = append(want, xy{s.Offered, s.Offered, ""})
	}
	var marks []mark
	if t.Rate > 0 {
		marks = []mark{{X: t.Rate, Label: fmt.Sprintf("capacity %.1f/s", t.Rate)}}
	}
	lat = &chart{Title: "Latency against the offered rate", XLabel: "offered rate (events/s)", YLabel: "latency (ms)", Markers: true, Marks: marks,
		Series: []series{
			{Name: "p50", Colour: "#16a34a", Points: p50, Legend: true},
			{Name: "p95", Colour: c, Points: p95, Legend: true},
			{Name: "p99", Colour: "#be185d", Points: p99, Legend: true},
		}}
	ach = &chart{Title: "Achieved against the offered rate", XLabel: "offered rate (events/s)", YLabel: "events/s", Markers: true, Marks: marks,
		Series: []series{
			{Name: "achieved", Colour: c, Points: got, Legend: true},
			{Name: "offered", Colour: "#9ca3af", Points: want, Legend: true, Dash: true},
		}}
	return lat, ach
}
