// Command qpscompare is a benchmark aid, not part of shakedown: it judges
// two sets of QPS samples the way a sweep's report does (stats.Compare:
// ratio of medians, its distribution-free 95% interval, and whether the
// candidate is the same as the control within the noise threshold).
// scripts/split-scale.sh uses it to compare 4 split runners with one.
//
//	go run ./scripts/qpscompare --control 100,101,99 --candidate 98,102,100
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/shakedown/shakedown/internal/stats"
)

func main() {
	control := flag.String("control", "", "the control's QPS samples, comma-separated")
	candidate := flag.String("candidate", "", "the candidate's QPS samples, comma-separated")
	threshold := flag.Float64("threshold", 0, "noise threshold as a fraction (0: the default, as in a sweep)")
	flag.Parse()
	a, err := floats(*control)
	if err != nil {
		fmt.Fprintln(os.Stderr, "qpscompare: --control:", err)
		os.Exit(2)
	}
	b, err := floats(*candidate)
	if err != nil {
		fmt.Fprintln(os.Stderr, "qpscompare: --candidate:", err)
		os.Exit(2)
	}
	c := stats.Compare(a, b, stats.Options{Threshold: *threshold})
	interval := "none (too few samples)"
	if c.Interval {
		interval = fmt.Sprintf("%.3f-%.3f", c.Low, c.High)
	}
	fmt.Printf("control median %.1f (n=%d), candidate median %.1f (n=%d): ratio %.3f, 95%% interval %s, %s (noise threshold %g%%)\n",
		c.Control.Median, c.Control.N, c.Candidate.Median, c.Candidate.N, c.Ratio, interval, c.State, c.Threshold*100)
}

func floats(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
