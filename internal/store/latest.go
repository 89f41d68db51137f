package store

import "fmt"

// Counted says whether a run's figures count: failed, interrupted and
// degraded runs (the server could not be reached for part of the run) are
// left out of every figure and verdict. It is the one place that decides;
// the report and the sweep both ask it.
func Counted(run Run) bool {
	return run.Status == RunOK && !run.Degraded && run.Result != nil
}

// Latest keeps the last run of each step (target, workload, threads and
// repeat), in the order given: a resumed sweep runs a failed or
// interrupted step again, or a thread level again from its first repeat
// on fresh data, and then only the later run (by ID) stands.
func Latest(runs []Run) []Run {
	latest, _ := SplitLatest(runs)
	return latest
}

// SplitLatest is Latest, with the runs that a later run of their step
// replaced beside it.
func SplitLatest(runs []Run) (latest, again []Run) {
	key := func(r Run) string {
		return fmt.Sprint(r.Target, "\x00", r.Workload, "\x00", r.Threads, "\x00", r.Repeat)
	}
	last := map[string]int{}
	for i, r := range runs {
		// The later run: the one stored later, else the later given.
		if j, ok := last[key(r)]; !ok || r.ID == 0 || runs[j].ID == 0 || r.ID > runs[j].ID {
			last[key(r)] = i
		}
	}
	for i, r := range runs {
		if last[key(r)] == i {
			latest = append(latest, r)
		} else {
			again = append(again, r)
		}
	}
	return latest, again
}
