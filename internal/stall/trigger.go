// Package stall catches what a server was doing when its throughput fell:
// triggers read the per-second figures the monitor's sampler already takes
// (and the client's latency), a ring buffer keeps the seconds before a
// trigger, and a capture reads the processlist, SHOW ENGINE INNODB STATUS,
// the lock waits and the open transactions, each read bounded by a
// timeout. Captures are bounded in number and size and spaced by a
// cooldown. A capture only reads: it never changes a server setting.
//
// The package owns no clock and no sampling of its own: the monitor calls
// Watcher.Observe with each sample and ObserveLatency with each of the
// runner's intervals.
package stall

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DefaultSpec is pt-stalk's default trigger.
const DefaultSpec = "threads_running>25 for 5s"

// Trigger is one condition: a figure compared with a limit for a number of
// consecutive seconds.
type Trigger struct {
	// Metric is "threads_running", "qps" or "pNN" (client latency
	// percentile, in milliseconds).
	Metric string
	// Less is true for "<", false for ">".
	Less bool
	// Limit is the bound; for a Relative trigger, a fraction of the run's
	// median so far (0.5 for 50%).
	Limit    float64
	Relative bool
	// For is how long the condition must hold; 0 means one sample.
	For time.Duration
	// Text is the trigger as written.
	Text string
}

// Percentile is the latency percentile of a pNN trigger, or 0.
func (t Trigger) Percentile() float64 {
	if !strings.HasPrefix(t.Metric, "p") {
		return 0
	}
	p, _ := strconv.ParseFloat(t.Metric[1:], 64)
	return p
}

// Parse reads a comma-separated list of triggers such as
// "threads_running>25 for 5s,qps<50%,p99>200ms". "" and "default" mean
// DefaultSpec. An error names the token that does not parse.
func Parse(spec string) ([]Trigger, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" || spec == "default" || spec == "on" {
		spec = DefaultSpec
	}
	var out []Trigger
	for _, tok := range strings.Split(spec, ",") {
		t, err := parseOne(strings.TrimSpace(tok))
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// LooksLikeSpec reports whether s reads as a spec rather than as another
// argument of a command line: every trigger compares a figure (< or >),
// or s is a word Parse takes for DefaultSpec. A bare --stall takes the
// next argument as its value when it does, and Parse says whether it is
// right; a target after watch --stall is left alone.
func LooksLikeSpec(s string) bool {
	return strings.ContainsAny(s, "<>") || s == "default" || s == "on"
}

func parseOne(tok string) (Trigger, error) {
	bad := func(why string) (Trigger, error) {
		return Trigger{}, fmt.Errorf("--stall: trigger %q: %s (want e.g. threads_running>25 for 5s, qps<50%%, p99>200ms)", tok, why)
	}
	t := Trigger{Text: tok}
	cond := tok
	if i := strings.Index(tok, " for "); i >= 0 {
		cond = strings.TrimSpace(tok[:i])
		d, err := time.ParseDuration(strings.TrimSpace(tok[i+5:]))
		if err != nil || d <= 0 {
			return bad("the duration after \"for\" must be positive, such as 5s")
		}
		t.For = d
	}
	i := strings.IndexAny(cond, "<>")
	if i <= 0 {
		return bad("no figure and comparison")
	}
	t.Metric, t.Less = strings.TrimSpace(cond[:i]), cond[i] == '<'
	val := strings.TrimSpace(cond[i+1:])
	switch {
	case t.Metric == "threads_running" || t.Metric == "qps":
	case t.Percentile() > 0 && t.Percentile() <= 100 && !strings.ContainsAny(t.Metric[1:], "eE+-"):
	default:
		return bad("unknown figure " + strconv.Quote(t.Metric) + "; know threads_running, qps, pNN")
	}
	switch {
	case strings.HasSuffix(val, "%"):
		if t.Metric != "qps" || !t.Less {
			return bad("a percentage applies to qps< only (of the run's median so far)")
		}
		v, err := strconv.ParseFloat(strings.TrimSuffix(val, "%"), 64)
		if err != nil || v <= 0 || v >= 100 {
			return bad("the percentage must be between 0 and 100")
		}
		t.Limit, t.Relative = v/100, true
	case t.Percentile() > 0:
		d, err := time.ParseDuration(val)
		if err != nil || d <= 0 {
			return bad("a latency limit is a positive duration such as 200ms")
		}
		t.Limit = float64(d) / float64(time.Millisecond)
	default:
		v, err := strconv.ParseFloat(val, 64)
		if err != nil || v < 0 {
			return bad("the limit must be a number >= 0")
		}
		t.Limit = v
	}
	return t, nil
}
