package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/store"
)

// FromRuns gathers runs made one by one ("shakedown run", stored or saved
// with --json) into the shape of a sweep, so that they are reported like
// one: grouped by workload, target and threads, runs of the same three
// taken as repeats. control names the target the others are compared
// with; empty means the first target that appears. name says where the
// runs came from. The result has sweep ID 0, which the writers take to
// mean loose runs.
func FromRuns(name string, runs []store.Run, control string) (*store.SweepData, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("no runs to report")
	}
	runs = slices.Clone(runs)
	d := &store.SweepData{Sweep: store.Sweep{Name: name, Status: store.SweepDone, Steps: len(runs)}}
	var targets []string
	first := map[string]*store.Run{}
	repeats := map[string]int{}
	times := map[int]bool{}
	threads := map[int]bool{}
	for i := range runs {
		r := runs[i]
		if _, ok := first[r.Target]; !ok {
			first[r.Target] = &runs[i]
			targets = append(targets, r.Target)
		}
		if !slices.Contains(d.Sweep.Settings.Workloads, r.Workload) {
			d.Sweep.Settings.Workloads = append(d.Sweep.Settings.Workloads, r.Workload)
		}
		threads[r.Threads] = true
		key := fmt.Sprint(r.Workload, "\x00", r.Target, "\x00", r.Threads)
		repeats[key]++
		r.Repeat = repeats[key]
		r.Step = i + 1
		if res := r.Result; res != nil {
			times[int(res.TimeS+0.5)] = true
			if d.Sweep.Tool == "" {
				d.Sweep.Tool = res.Tool
			}
		}
		if d.Sweep.StartedAt.IsZero() || r.StartedAt.Before(d.Sweep.StartedAt) {
			d.Sweep.StartedAt = r.StartedAt
		}
		if end := r.StartedAt.Add(time.Duration(r.WallS * float64(time.Second))); end.After(d.Sweep.FinishedAt) {
			d.Sweep.FinishedAt = end
		}
		runs[i] = r
	}
	if control == "" {
		control = targets[0]
	} else if first[control] == nil {
		return nil, fmt.Errorf("no target %q among the runs; they are of %s", control, strings.Join(targets, ", "))
	}
	for _, t := range targets {
		role := "candidate"
		if t == control {
			role = "control"
		}
		tg := store.Target{Name: t, Role: role}
		if res := first[t].Result; res != nil {
			tg.URL, tg.Version, tg.Flavour = res.Target.URL, res.Target.Version, res.Target.Flavour
		}
		d.Targets = append(d.Targets, tg)
	}
	for i := range runs {
		runs[i].Role = "candidate"
		if runs[i].Target == control {
			runs[i].Role = "control"
		}
	}
	for t := range threads {
		d.Sweep.Settings.Threads = append(d.Sweep.Settings.Threads, t)
	}
	sort.Ints(d.Sweep.Settings.Threads)
	for _, n := range repeats {
		d.Sweep.Settings.Repeats = max(d.Sweep.Settings.Repeats, n)
	}
	if len(times) == 1 {
		for t := range times {
			d.Sweep.Settings.TimeS = t
		}
	}
	d.Runs = runs
	return d, nil
}
