package render

import "github.com/shakedown/shakedown/internal/stats"

// StateClass is the class of a table cell that shows a verdict: the
// stylesheet colours faster green, slower red, same grey, inconclusive
// yellow, and a cell without a verdict as no data. strong marks a large
// effect (a deeper colour) and counts for faster and slower alone.
func StateClass(s stats.State, strong bool) string {
	switch s {
	case stats.Faster, stats.Slower:
		if strong {
			return string(s) + " strong"
		}
		return string(s)
	case stats.Same, stats.Inconclusive:
		return string(s)
	}
	return "nodata"
}
