package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The charts are SVG drawn here, so the HTML report needs no script or
// library to show them.

// palette colours targets in plan order; the control comes first.
var palette = []string{"#2563eb", "#ea580c", "#16a34a", "#9333ea", "#0891b2", "#be185d", "#854d0e", "#4b5563"}

func colour(i int) string { return palette[i%len(palette)] }

type xy struct {
	X, Y float64
	Tip  string
}

type series struct {
	Name   string
	Colour string
	Points []xy
	Thin   bool // repeats after the first: drawn thinner
	Legend bool // shown in the legend
	Dash   bool // drawn dashed (a fitted model, not measurements)
}

// mark is a vertical line across the plot at X, labelled (a change point).
type mark struct {
	X     float64
	Label string
}

type tick struct {
	V     float64
	Label string
}

// chart is a line chart. With XTicks set the x axis is those ticks (thread
// levels, evenly spaced by index); otherwise it is numeric and spans the
// data (seconds 1 to 2 of a short run fill the width, not half of 0 to 2).
type chart struct {
	Title   string
	XLabel  string
	YLabel  string
	XTicks  []tick
	Series  []series
	Width   int
	Height  int
	Markers bool
	Marks   []mark
}

const (
	padLeft   = 62
	padRight  = 18
	padTop    = 50
	padBottom = 44
)

// svg renders the chart.
func (c *chart) svg() string {
	w, h := c.Width, c.Height
	if w == 0 {
		w, h = 560, 300
	}
	pw, ph := float64(w-padLeft-padRight), float64(h-padTop-padBottom)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" role="img" aria-label="%s" data-series="%d">`, w, h, esc(c.Title), len(c.Series))
	fmt.Fprintf(&b, `<text class="title" x="%d" y="18">%s</text>`, padLeft-54, esc(c.Title))

	// Legend, one row under the title.
	lx := float64(padLeft - 54)
	for _, s := range c.Series {
		if !s.Legend {
			continue
		}
		fmt.Fprintf(&b, `<line x1="%.1f" y1="34" x2="%.1f" y2="34" stroke="%s" stroke-width="3"/>`, lx, lx+16, s.Colour)
		fmt.Fprintf(&b, `<text class="legend" x="%.1f" y="38">%s</text>`, lx+20, esc(s.Name))
		lx += 20 + 7.2*float64(len(s.Name)) + 18
	}

	// Scales.
	ymax, xmax, xmin := 0.0, math.Inf(-1), math.Inf(1)
	hasData := false
	for _, s := range c.Series {
		for _, p := range s.Points {
			ymax = math.Max(ymax, p.Y)
			xmax = math.Max(xmax, p.X)
			xmin = math.Min(xmin, p.X)
			hasData = true
		}
	}
	switch {
	case c.XTicks != nil:
		xmin, xmax = -0.5, float64(len(c.XTicks))-0.5
	case !hasData:
		xmin, xmax = 0, 1
	case xmax-xmin < 1e-9:
		// One instant: centred on an axis a unit wide.
		xmin, xmax = xmin-0.5, xmax+0.5
	}
	ystep, ytop := niceScale(ymax)
	X := func(x float64) float64 { return padLeft + (x-xmin)/(xmax-xmin)*pw }
	Y := func(y float64) float64 { return padTop + ph - y/ytop*ph }

	// Grid and y ticks.
	for v := 0.0; v <= ytop+ystep/2; v += ystep {
		y := Y(v)
		fmt.Fprintf(&b, `<line class="grid" x1="%d" y1="%.1f" x2="%d" y2="%.1f"/>`, padLeft, y, w-padRight, y)
		fmt.Fprintf(&b, `<text class="tick" x="%d" y="%.1f" text-anchor="end">%s</text>`, padLeft-6, y+4, shortNum(v, ystep))
	}
	// X ticks.
	xt := c.XTicks
	if xt == nil {
		step, _ := niceScale(xmax - xmin)
		for v := math.Ceil(xmin/step-1e-9) * step; v <= xmax+1e-9; v += step {
			xt = append(xt, tick{V: v, Label: shortNum(v, step)})
		}
	} else {
		for i := range xt {
			xt[i].V = float64(i)
		}
	}
	for _, t := range xt {
		x := X(t.V)
		fmt.Fprintf(&b, `<line class="axis" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, x, padTop+ph, x, padTop+ph+4)
		fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, x, padTop+ph+17, esc(t.Label))
	}
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%.1f" x2="%d" y2="%.1f"/>`, padLeft, padTop+ph, w-padRight, padTop+ph)
	fmt.Fprintf(&b, `<text class="label" x="%.1f" y="%d" text-anchor="middle">%s</text>`, padLeft+pw/2, h-6, esc(c.XLabel))
	fmt.Fprintf(&b, `<text class="label" transform="translate(14 %.1f) rotate(-90)" text-anchor="middle">%s</text>`, padTop+ph/2, esc(c.YLabel))

	for _, m := range c.Marks {
		x := X(m.X)
		fmt.Fprintf(&b, `<line class="mark" x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="#dc2626" stroke-dasharray="4 3"/>`, x, padTop, x, padTop+ph)
		fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%d" fill="#dc2626">%s</text>`, x+3, padTop+10, esc(m.Label))
	}
	if !hasData {
		fmt.Fprintf(&b, `<text class="nodata" x="%.1f" y="%.1f" text-anchor="middle">no data</text>`, padLeft+pw/2, padTop+ph/2)
	}
	for _, s := range c.Series {
		if len(s.Points) == 0 {
			continue
		}
		var d strings.Builder
		for i, p := range s.Points {
			cmd := "L"
			if i == 0 {
				cmd = "M"
			}
			fmt.Fprintf(&d, "%s%.1f %.1f", cmd, X(p.X), Y(p.Y))
		}
		width := "2.5"
		if s.Thin {
			width = "1.5"
		}
		dash := ""
		if s.Dash {
			// Wider than the measured line and half see-through, so that
			// where the fit lies on the measurements both stay visible.
			width, dash = "5", ` stroke-dasharray="6 4" stroke-opacity="0.45"`
		}
		fmt.Fprintf(&b, `<path class="series" d="%s" fill="none" stroke="%s" stroke-width="%s"%s stroke-linejoin="round"><title>%s</title></path>`,
			d.String(), s.Colour, width, dash, esc(s.Name))
		if c.Markers && !s.Dash {
			for _, p := range s.Points {
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s</title></circle>`, X(p.X), Y(p.Y), s.Colour, esc(p.Tip))
			}
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// niceScale returns a round tick step and the axis top (a multiple of the
// step at or above max) for about five ticks.
func niceScale(max float64) (step, top float64) {
	if max <= 0 {
		return 1, 5
	}
	raw := max / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		step = m * mag
		if step >= raw {
			break
		}
	}
	top = math.Ceil(max/step-1e-9) * step
	if top == 0 {
		top = step
	}
	return step, top
}

// shortNum writes a tick value compactly (12k, 1.5M), with as many
// decimals as the step needs.
func shortNum(v, step float64) string {
	if v == 0 {
		return "0"
	}
	unit, div := "", 1.0
	switch {
	case step >= 1e6:
		unit, div = "M", 1e6
	case step >= 1e3:
		unit, div = "k", 1e3
	}
	s := step / div
	dec := 0
	for dec < 3 && math.Abs(s*math.Pow(10, float64(dec))-math.Round(s*math.Pow(10, float64(dec)))) > 1e-6 {
		dec++
	}
	return strconv.FormatFloat(v/div, 'f', dec, 64) + unit
}
