package report

import (
	"bufio"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/shakedown/shakedown/internal/stats"
)

// Scaling is the Universal Scalability Law fitted to one target's QPS over
// the thread levels of one workload (stats.FitUSL).
type Scaling struct {
	Target string
	Fit    stats.USL
	// Refused says why no fit is shown (too few levels with data, or a
	// curve that rises throughout); empty when Fit holds.
	Refused string
	// top is the highest thread level measured, to say when the fitted
	// peak lies beyond it.
	top int
}

// uslHeading names the model and what it was fitted to.
const uslHeading = "Scalability: the Universal Scalability Law X(N) = λN / (1 + σ(N-1) + κN(N-1)), fitted to every run's QPS"

// uslNote says what the fit is and is not.
const uslNote = "σ is contention (waiting for a shared resource), κ coherency (threads keeping shared data consistent), " +
	"λ the QPS of one thread; the peak is at N* = sqrt((1-σ)/κ) threads. The model is of mean throughput in a closed loop: " +
	"it says where throughput stops rising, not tail latency, and not the rate at which p95 or p99 crosses a limit. " +
	"Intervals are 95%, from the fit's Jacobian."

// scalingOf fits the USL for every target of a workload with at least
// stats.MinUSLLevels thread levels. Every counted run's QPS is one point,
// not the median of its level: the fit then weighs a level by the runs it
// has, and the run-to-run spread stays in the residuals, so R² and the
// intervals of σ and κ show how much the repeats disagree instead of
// hiding it behind medians.
func scalingOf(w *Workload, targets []string) []Scaling {
	if len(w.Threads) < stats.MinUSLLevels {
		return nil
	}
	var out []Scaling
	for _, tg := range targets {
		var pts []stats.USLPoint
		for _, th := range w.Threads {
			if row := w.Row(tg, th); row != nil {
				for _, q := range row.qps {
					pts = append(pts, stats.USLPoint{Threads: th, Throughput: q})
				}
			}
		}
		s := Scaling{Target: tg, top: w.Threads[len(w.Threads)-1]}
		fit, err := stats.FitUSL(pts)
		if err != nil {
			s.Refused = strings.TrimPrefix(err.Error(), stats.ErrUSLRefused.Error()+": ")
		} else {
			s.Fit = fit
		}
		out = append(out, s)
	}
	return out
}

func sig3(x float64) string { return strconv.FormatFloat(x, 'g', 3, 64) }

func withInterval(x, lo, hi float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return sig3(x)
	}
	return fmt.Sprintf("%s [%s, %s]", sig3(x), sig3(lo), sig3(hi))
}

func (s Scaling) peakText() string {
	n := s.Fit.PeakThreads()
	switch {
	case math.IsInf(n, 1) && s.Fit.Sigma > 0:
		return "none: κ = 0, levels off"
	case math.IsInf(n, 1):
		return "none (σ = κ = 0)"
	case n > float64(s.top):
		return fmt.Sprintf("%.0f threads (beyond %d, the highest level measured)", n, s.top)
	}
	return fmt.Sprintf("%.0f threads", n)
}

// scalingTable has one row per fitted target; refused ones are in
// scalingRefusals.
func (r *Report) scalingTable(w *Workload) *table {
	t := &table{header: []string{"target", "σ contention", "κ coherency", "λ qps/thread", "peak at", "peak QPS", "R²", "runs"},
		right: []bool{false, false, false, true, false, true, true, true}}
	for _, s := range w.Scaling {
		if s.Refused != "" {
			continue
		}
		f := s.Fit
		peak := "-"
		switch x := f.PeakThroughput(); {
		case math.IsInf(f.PeakThreads(), 1) && !math.IsInf(x, 1):
			peak = "≤ " + f1(x) + " (λ/σ)"
		case !math.IsInf(x, 1):
			peak = f1(x)
		}
		t.add(s.Target, withInterval(f.Sigma, f.SigmaLow, f.SigmaHigh), withInterval(f.Kappa, f.KappaLow, f.KappaHigh),
			f1(f.Lambda), s.peakText(), peak, f3(f.R2), strconv.Itoa(f.Points))
	}
	return t
}

func (w *Workload) scalingRefusals() []string {
	var out []string
	for _, s := range w.Scaling {
		if s.Refused != "" {
			out = append(out, fmt.Sprintf("%s: not fitted: %s.", s.Target, s.Refused))
		}
	}
	return out
}

func (r *Report) writeScalingText(bw *bufio.Writer, w *Workload) {
	if len(w.Scaling) == 0 {
		return
	}
	fmt.Fprintf(bw, "\n%s\n", uslHeading)
	if t := r.scalingTable(w); len(t.rows) > 0 {
		t.writeText(bw, "  ")
	}
	for _, l := range w.scalingRefusals() {
		wrap(bw, l, 100, "  ")
	}
	wrap(bw, uslNote, 100, "  ")
}

func (r *Report) writeScalingMarkdown(bw *bufio.Writer, w *Workload) {
	if len(w.Scaling) == 0 {
		return
	}
	fmt.Fprintf(bw, "\n### %s\n\n", mdEscape(uslHeading))
	if t := r.scalingTable(w); len(t.rows) > 0 {
		t.writeMarkdown(bw)
		fmt.Fprintln(bw)
	}
	for _, l := range w.scalingRefusals() {
		fmt.Fprintf(bw, "%s\n\n", mdEscape(l))
	}
	fmt.Fprintf(bw, "%s\n", mdEscape(uslNote))
}

func (h *htmlWriter) scaling(w *Workload) {
	if len(w.Scaling) == 0 {
		return
	}
	h.p("<section class=\"usl\">\n<h3>%s</h3>\n", esc(uslHeading))
	if t := h.r.scalingTable(w); len(t.rows) > 0 {
		h.table(t, nil)
		h.p("<p class=\"meta\">The dashed lines on the QPS chart are these fits.</p>\n")
	}
	for _, l := range w.scalingRefusals() {
		h.p("<p class=\"usl-refused\">%s</p>\n", esc(l))
	}
	h.p("<p class=\"rule\">%s</p>\n</section>\n", esc(uslNote))
}

// uslCurve is a target's fitted curve on the QPS chart, whose x axis is the
// index of the thread level: between two levels the curve is sampled at
// thread counts spread evenly between them.
func uslCurve(w *Workload, s Scaling, c string) series {
	out := series{Name: s.Target + " USL fit", Colour: c, Thin: true, Dash: true}
	for i, th := range w.Threads {
		out.Points = append(out.Points, xy{X: float64(i), Y: s.Fit.Throughput(float64(th))})
		if i+1 == len(w.Threads) {
			break
		}
		next := w.Threads[i+1]
		const steps = 8
		for k := 1; k < steps; k++ {
			n := float64(th) + float64(next-th)*float64(k)/steps
			out.Points = append(out.Points, xy{X: float64(i) + float64(k)/steps, Y: s.Fit.Throughput(n)})
		}
	}
	return out
}

// jsonScaling is one target's USL fit for one workload. Figures that do not
// exist are left out: peak_threads when κ = 0 (peak_qps is then the
// ceiling λ/σ that throughput levels off towards), intervals with too few
// points.
type jsonScaling struct {
	Workload       string   `json:"workload"`
	Target         string   `json:"target"`
	Fitted         bool     `json:"fitted"`
	Refused        string   `json:"refused,omitempty"`
	Sigma          *float64 `json:"sigma,omitempty"`
	SigmaLow       *float64 `json:"sigma_ci_low,omitempty"`
	SigmaHigh      *float64 `json:"sigma_ci_high,omitempty"`
	Kappa          *float64 `json:"kappa,omitempty"`
	KappaLow       *float64 `json:"kappa_ci_low,omitempty"`
	KappaHigh      *float64 `json:"kappa_ci_high,omitempty"`
	Lambda         *float64 `json:"lambda_qps,omitempty"`
	PeakThreads    *float64 `json:"peak_threads,omitempty"`
	PeakQPS        *float64 `json:"peak_qps,omitempty"`
	R2             *float64 `json:"r2,omitempty"`
	Points         int      `json:"points,omitempty"`
	Levels         int      `json:"levels,omitempty"`
	ModelsMeanOnly string   `json:"models"`
}

func (r *Report) jsonScaling() []jsonScaling {
	num := func(x float64, digits int) *float64 {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', digits, 64), 64)
		return &v
	}
	var out []jsonScaling
	for _, w := range r.Workloads {
		for _, s := range w.Scaling {
			j := jsonScaling{Workload: w.Name, Target: s.Target, Refused: s.Refused,
				ModelsMeanOnly: "mean throughput in a closed loop, not tail latency"}
			if s.Refused == "" {
				f := s.Fit
				j.Fitted = true
				j.Sigma, j.SigmaLow, j.SigmaHigh = num(f.Sigma, 6), num(f.SigmaLow, 6), num(f.SigmaHigh, 6)
				j.Kappa, j.KappaLow, j.KappaHigh = num(f.Kappa, 6), num(f.KappaLow, 6), num(f.KappaHigh, 6)
				j.Lambda, j.R2 = num(f.Lambda, 6), num(f.R2, 6)
				j.PeakThreads, j.PeakQPS = num(f.PeakThreads(), 6), num(f.PeakThroughput(), 6)
				j.Points, j.Levels = f.Points, f.Levels
			}
			out = append(out, j)
		}
	}
	return out
}
