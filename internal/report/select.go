package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/usage"
)

// What a report reads: the sweep, runs, baseline or result files a
// command names, found in the store or on disk. A name that is not there
// is bad input (usage), said with what names it; where is the store as
// messages show it.

// ParseRunIDs reads --runs: "all" (nil) or run IDs such as 4,5,7; ok is
// false for anything else.
func ParseRunIDs(s string) (ids []int64, ok bool) {
	if s == "all" {
		return nil, true
	}
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil || n < 1 {
			return nil, false
		}
		ids = append(ids, n)
	}
	return ids, true
}

// SweepID resolves "latest" or an ID to a stored sweep's ID.
func SweepID(ctx context.Context, st *store.Store, s, where, what string) (int64, error) {
	if s == "latest" {
		id, err := st.Latest(ctx)
		if errors.Is(err, store.ErrNoSweeps) {
			return 0, usage.Errorf("%s: %s holds no sweeps", what, where)
		}
		return id, err
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 1 {
		return 0, usage.Errorf("%s: --sweep %q: want a sweep ID (see shakedown report --list) or latest", what, s)
	}
	if _, err := st.Sweep(ctx, id); errors.Is(err, store.ErrNotFound) {
		return 0, usage.Errorf("%s: no sweep %d in %s (see shakedown report --list)", what, id, where)
	} else if err != nil {
		return 0, err
	}
	return id, nil
}

// LookupBaseline finds a baseline by name; a name not there is bad input
// that lists those there are.
func LookupBaseline(ctx context.Context, st *store.Store, name, what string) (store.Baseline, error) {
	bs, err := st.Baselines(ctx)
	if err != nil {
		return store.Baseline{}, err
	}
	var names []string
	for _, b := range bs {
		if b.Name == name {
			return b, nil
		}
		names = append(names, b.Name)
	}
	if len(names) == 0 {
		return store.Baseline{}, usage.Errorf("%s: no baseline %q in %s: there are none yet; save one with shakedown baseline save NAME", what, name, st.Path())
	}
	return store.Baseline{}, usage.Errorf("%s: no baseline %q in %s; baselines: %s", what, name, st.Path(), strings.Join(names, ", "))
}

// BaselineRuns are the runs "baseline save" keeps: the runs --runs names
// (runs not "") or else the sweep, with a word on where they came from and
// the control among them.
func BaselineRuns(ctx context.Context, st *store.Store, runs, sweep, where string) (rs []store.Run, source, control string, err error) {
	if runs != "" {
		ids, ok := ParseRunIDs(runs)
		if !ok {
			return nil, "", "", usage.Errorf("baseline save: --runs %q: want all, or run IDs such as 4,5,7 (see shakedown report --list)", runs)
		}
		loose, err := st.LooseRuns(ctx, ids)
		if errors.Is(err, store.ErrNotFound) {
			return nil, "", "", usage.Errorf("baseline save: --runs: %v in %s (see shakedown report --list)", err, where)
		}
		if err != nil {
			return nil, "", "", err
		}
		if len(loose) > 0 {
			control = loose[0].Target
		}
		return loose, "runs " + runs, control, nil
	}
	id, err := SweepID(ctx, st, sweep, where, "baseline save")
	if err != nil {
		return nil, "", "", err
	}
	d, err := st.Load(ctx, id)
	if err != nil {
		return nil, "", "", err
	}
	for _, t := range d.Targets {
		if t.Role == "control" {
			control = t.Name
		}
	}
	return d.Runs, fmt.Sprintf("sweep %d", id), control, nil
}

// FromFiles reads result documents ("shakedown run --json", or the lists
// "shakedown slap --json" writes) as runs, compared with control (""
// for the first target).
func FromFiles(files []string, control string) (*store.SweepData, error) {
	var runs []store.Run
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, usage.Errorf("report: %v", err)
		}
		var docs []*result.Result
		if err := json.Unmarshal(b, &docs); err != nil {
			var one result.Result
			if json.Unmarshal(b, &one) == nil {
				docs = []*result.Result{&one}
			}
		}
		if len(docs) == 0 || slices.ContainsFunc(docs, func(r *result.Result) bool { return r == nil || r.Workload == "" || r.Threads == 0 }) {
			return nil, usage.Errorf("report: %s is not a result document (shakedown run --json FILE and shakedown slap --json FILE write them)", f)
		}
		for _, res := range docs {
			status, why := res.Status()
			runs = append(runs, store.Run{
				Target: res.Target.Name, Workload: res.Workload, Threads: res.Threads, Command: f,
				Status: status, Error: ErrText(why), StartedAt: res.StartedAt, WallS: res.TimeS + res.WarmupS, Result: res,
			})
		}
	}
	d, err := FromRuns(strings.Join(files, ", "), runs, control)
	if err != nil {
		return nil, usage.Errorf("report: --control: %v", err)
	}
	return d, nil
}

// ErrText is an error's text, "" for none.
func ErrText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// LoadAll loads every stored sweep, for a history; nil when there are none.
func LoadAll(ctx context.Context, st *store.Store) ([]*store.SweepData, error) {
	sweeps, err := st.Sweeps(ctx)
	if err != nil || len(sweeps) == 0 {
		return nil, err
	}
	var all []*store.SweepData
	for _, sw := range sweeps {
		d, err := st.Load(ctx, sw.ID)
		if err != nil {
			return nil, err
		}
		all = append(all, d)
	}
	return all, nil
}

// WriteList lists the sweeps in a store, and the runs made outside them.
func WriteList(w io.Writer, where string, sweeps []store.Sweep, runs []store.Run) error {
	if len(sweeps) == 0 {
		fmt.Fprintf(w, "no sweeps in %s\n", where)
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tSTATUS\tSTARTED\tSTEPS\tWORKLOADS")
		for _, s := range sweeps {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\n", s.ID, s.Name, s.Status, s.StartedAt.Local().Format("2006-01-02 15:04"), s.Steps,
				strings.Join(s.Settings.Workloads, ","))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(runs) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nRuns outside sweeps (shakedown report --runs ID,...):\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tTARGET\tWORKLOAD\tTHREADS\tSTATUS\tSTARTED\tQPS")
	for _, r := range runs {
		qps := "-"
		if r.Result != nil {
			qps = strconv.FormatFloat(r.Result.QPS, 'f', 1, 64)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\t%s\n", r.ID, r.Target, r.Workload, r.Threads, r.Status,
			r.StartedAt.Local().Format("2006-01-02 15:04"), qps)
	}
	return tw.Flush()
}

// WriteBaselines lists the saved baselines.
func WriteBaselines(w io.Writer, where string, bs []store.Baseline) error {
	if len(bs) == 0 {
		_, err := fmt.Fprintf(w, "no baselines in %s: save one with shakedown baseline save NAME\n", where)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSAVED\tTARGET\tFROM\tRUNS")
	for _, b := range bs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", b.Name, b.CreatedAt.Local().Format("2006-01-02 15:04"), b.Target, b.Source, len(b.RunIDs))
	}
	return tw.Flush()
}
