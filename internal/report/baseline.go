package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/shakedown/shakedown/internal/stats"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/usage"
)

// runOptions are the run options that do not change what is measured, and
// so may differ between a baseline and new results: the thread level is
// compared level by level, the rest say how the run was watched or where
// it connected.
var runOptions = map[string]bool{
	"threads": true, "mysql-host": true, "mysql-port": true, "mysql-user": true, "mysql-db": true, "mysql-socket": true,
	"report-interval": true, "monitor": true, "metrics-addr": true, "histogram": true, "percentile": true,
	"name": true, "client-io": true, "verbosity": true,
}

// AgainstBaseline lays out new runs against a baseline's, to be reported
// (Build) and judged like any comparison: the baseline's runs are the
// control, named "baseline NAME", and the new runs of the baseline's
// target (else of the new results' control) the candidate. New runs of a
// workload the baseline lacks, or taken with other options, are refused
// with an error that says which (bad input).
func AgainstBaseline(b store.Baseline, base, fresh []store.Run) (*store.SweepData, error) {
	pick := picked(b, fresh)
	var mine []store.Run
	for _, r := range fresh {
		if r.Target == pick {
			mine = append(mine, r)
		}
	}
	if len(mine) == 0 {
		return nil, usage.Errorf("baseline %s: no new runs to compare with it", b.Name)
	}
	baseOpts, newOpts := optionsByWorkload(base), optionsByWorkload(mine)
	var problems []string
	for _, w := range slices.Sorted(maps.Keys(newOpts)) {
		bo, ok := baseOpts[w]
		if !ok {
			problems = append(problems, fmt.Sprintf("it has no runs of %s (it has %s)", w, strings.Join(slices.Sorted(maps.Keys(baseOpts)), ", ")))
			continue
		}
		if d := optionDiff(bo, newOpts[w]); len(d) > 0 {
			problems = append(problems, fmt.Sprintf("%s was run with other options: %s", w, strings.Join(d, ", ")))
		}
	}
	if len(problems) > 0 {
		return nil, usage.Errorf("baseline %s (%s of %s) does not match the new results: %s; compare like with like, or save a new baseline",
			b.Name, b.Source, b.Target, strings.Join(problems, "; "))
	}
	control := "baseline " + b.Name
	var runs []store.Run
	for _, r := range base {
		r.Target, r.Role = control, "control"
		runs = append(runs, r)
	}
	for _, r := range mine {
		r.Role = "candidate"
		runs = append(runs, r)
	}
	d, err := FromRuns(fmt.Sprintf("%s against baseline %s", pick, b.Name), runs, control)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// optionsByWorkload are the options of the first counted run of each
// workload, less runOptions.
func optionsByWorkload(runs []store.Run) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, r := range runs {
		if _, ok := out[r.Workload]; ok || !Counted(r) {
			continue
		}
		o := map[string]string{}
		for k, v := range r.Result.Options {
			if !runOptions[k] {
				o[k] = v
			}
		}
		out[r.Workload] = o
	}
	return out
}

// optionDiff lists the options whose values differ, "--time 5 (baseline)
// against 10".
func optionDiff(base, cur map[string]string) []string {
	keys := map[string]bool{}
	for k := range base {
		keys[k] = true
	}
	for k := range cur {
		keys[k] = true
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if base[k] != cur[k] {
			out = append(out, fmt.Sprintf("--%s %s (baseline) against %s", k, orNone(base[k]), orNone(cur[k])))
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(unset)"
	}
	return s
}

// Slower lists the comparisons of r where the candidate came out slower
// in QPS, TPS, p95 or p99, as "oltp_point_select at 16 threads: QPS 0.870
// [0.840..0.900]".
func (r *Report) Slower() []string {
	var out []string
	for _, w := range r.Workloads {
		for _, c := range w.Comparisons() {
			for _, f := range []struct {
				name string
				c    stats.Comparison
			}{{"QPS", c.QPS}, {"TPS", c.TPS}, {"p95", c.P95}, {"p99", c.P99}} {
				if f.c.State == stats.Slower {
					out = append(out, fmt.Sprintf("%s at %d threads: %s %s [%s]", w.Name, c.Threads, f.name, f3(f.c.Ratio), intervalText(f.c)))
				}
			}
		}
	}
	return out
}
