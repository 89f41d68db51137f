package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/shakedown/shakedown/internal/stats"
)

// plainSummary says in plain words what the comparison found, one sentence
// per candidate: how many of its comparisons with the control came out
// faster, slower, the same or inconclusive, by how much, and where. It is
// empty when there is nothing to compare.
func (r *Report) plainSummary() string {
	var sentences []string
	for _, cand := range r.Candidates() {
		if s := r.candidateSentence(cand, len(sentences) == 0); s != "" {
			sentences = append(sentences, s)
		}
	}
	return strings.Join(sentences, " ")
}

// place is one workload at one thread level.
type place struct {
	workload string
	threads  int
	ratio    float64
}

// candidateSentence is one candidate's; first says it is the first, which
// names the control.
func (r *Report) candidateSentence(cand string, first bool) string {
	by := map[stats.State][]place{}
	levels := map[string]int{} // thread levels per workload
	total := 0
	for _, wl := range r.Workloads {
		levels[wl.Name] = len(wl.Threads)
		for _, th := range wl.Threads {
			row := wl.Row(cand, th)
			if row == nil || row.Compared == nil {
				continue
			}
			total++
			st := row.Compared.QPS.State
			if row.Compared.Verdict == stats.NoData {
				st = stats.NoVerdict
			}
			by[st] = append(by[st], place{wl.Name, th, row.Compared.Ratio})
		}
	}
	if total == 0 {
		return ""
	}
	var parts []string
	add := func(st stats.State, what, why string, ratios bool) {
		ps := by[st]
		if len(ps) == 0 {
			return
		}
		s := what
		switch {
		case total == 1:
		case len(parts) == 0:
			s += fmt.Sprintf(" in %d of %d comparisons", len(ps), total)
		default:
			s += fmt.Sprintf(" in %d", len(ps))
		}
		at := where(ps, levels)
		if len(ps) == total && len(levels) > 1 {
			at = "every workload and thread level"
		}
		if ratios {
			why = ratioRange(ps) + " the control's QPS; "
		}
		s += " (" + why + at + ")"
		parts = append(parts, s)
	}
	add(stats.Faster, "faster", "", true)
	add(stats.Slower, "slower", "", true)
	add(stats.Same, "the same within "+pct0(r.Threshold), "", false)
	add(stats.Inconclusive, "inconclusive", "", false)
	add(stats.NoVerdict, "without a verdict", "too few runs; ", false)
	add(Wrong, "wrong", "lost updates; ", false)
	name := r.candidateName(cand)
	for _, st := range []stats.State{stats.Faster, stats.Slower} {
		if len(by[st]) == total && total > 1 {
			return fmt.Sprintf("%s was %s than %s in all %d comparisons, at %s its QPS.", name, st, r.Control, total, ratioRange(by[st]))
		}
	}
	if !first {
		return fmt.Sprintf("%s was %s.", name, joinAnd(parts))
	}
	return fmt.Sprintf("Against %s, %s was %s.", r.Control, name, joinAnd(parts))
}

// ratioRange is "1.8x" or "1.4x to 2.1x".
func ratioRange(ps []place) string {
	lo, hi := ps[0].ratio, ps[0].ratio
	for _, p := range ps[1:] {
		lo, hi = min(lo, p.ratio), max(hi, p.ratio)
	}
	if f2(lo) == f2(hi) {
		return f2(lo) + "x"
	}
	return f2(lo) + "x to " + f2(hi) + "x"
}

// where names the places by workload: "oltp_write_only at every thread
// level, oltp_point_select at 1 and 4 threads".
func where(ps []place, levels map[string]int) string {
	var order []string
	threads := map[string][]string{}
	for _, p := range ps {
		if _, ok := threads[p.workload]; !ok {
			order = append(order, p.workload)
		}
		threads[p.workload] = append(threads[p.workload], strconv.Itoa(p.threads))
	}
	out := make([]string, len(order))
	for i, w := range order {
		ts := threads[w]
		switch {
		case len(ts) == levels[w] && len(ts) > 1:
			out[i] = w + " at every thread level"
		case len(ts) == 1 && ts[0] == "1":
			out[i] = w + " at 1 thread"
		default:
			out[i] = w + " at " + joinAnd(ts) + " threads"
		}
	}
	return strings.Join(out, ", ")
}

// joinAnd is "a", "a and b", "a, b and c".
func joinAnd(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
