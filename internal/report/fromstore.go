package report

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/usage"
)

// What report reads from a store beside a sweep: the list, runs made one
// by one, runners' unsaved results, a bisect's result file. where is the
// store as messages show it; faults of what the user named are bad usage.

// List writes the sweeps in st and the runs made outside them.
func List(ctx context.Context, w io.Writer, st *store.Store, where string) error {
	sweeps, err := st.Sweeps(ctx)
	if err != nil {
		return err
	}
	runs, err := st.LooseRuns(ctx, nil)
	if err != nil {
		return err
	}
	return WriteList(w, where, sweeps, runs)
}

// NoSweeps is the error for a store without sweeps: it points to the
// runs made one by one when there are some.
func NoSweeps(ctx context.Context, st *store.Store, where string) error {
	runs, err := st.LooseRuns(ctx, nil)
	if err != nil {
		return err
	}
	if len(runs) > 0 {
		return usage.Errorf("report: %s holds no sweeps, but %d runs made one by one: report them with shakedown report --store %s --runs all (or pick some: --runs ID,... from --list)",
			where, len(runs), where)
	}
	return usage.Errorf("report: %s holds no sweeps yet: run shakedown sweep PLAN.yaml --store %s", where, where)
}

// LooseRuns are the runs made outside sweeps that ids names (nil: all);
// none is bad usage.
func LooseRuns(ctx context.Context, st *store.Store, ids []int64, where string) ([]store.Run, error) {
	runs, err := st.LooseRuns(ctx, ids)
	if errors.Is(err, store.ErrNotFound) {
		return nil, usage.Errorf("report: --runs: %v in %s (see shakedown report --list)", err, where)
	}
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, usage.Errorf("report: %s holds no runs made outside sweeps: store some with shakedown run ... --store %s", where, where)
	}
	return runs, nil
}

// Import adds the results that runners of a split load kept in files
// when they lost the store, saying on out what each added. Every file is
// read before the store is opened.
func Import(ctx context.Context, out io.Writer, getenv func(string) string, storePath string, files []string) error {
	var docs []*store.Unsaved
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return usage.Errorf("report --import: %v", outfile.PlainPathError(err))
		}
		u, err := store.ReadUnsaved(fh)
		fh.Close()
		if err != nil {
			return usage.Errorf("report --import %s: %v (a runner that lost its store writes such a file and names it)", f, err)
		}
		docs = append(docs, u)
	}
	st, err := store.OpenExisting(ctx, getenv, storePath, "report --import")
	if err != nil {
		return err
	}
	defer st.Close()
	for i, u := range docs {
		n, err := st.Import(ctx, u)
		if errors.Is(err, store.ErrReported) {
			return usage.Errorf("report --import %s: %v: it is in the store already (imported before?)", files[i], err)
		}
		if err != nil {
			return fmt.Errorf("report --import %s: %w", files[i], err)
		}
		fmt.Fprintf(out, "imported %d step(s) of segment %s (%s) from %s into %s\n", n, u.Runner.Label, u.Runner.Host, files[i], st.Path())
	}
	return nil
}

// ReadBisect reads the file report --bisect names.
func ReadBisect(path string) (*result.Bisect, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usage.Errorf("report --bisect %s: %v", path, outfile.PlainPathError(err))
	}
	defer f.Close()
	res, err := result.ReadBisect(f)
	if err != nil {
		return nil, usage.Errorf("report --bisect %s: %v: give the file shakedown vars bisect --json wrote", path, err)
	}
	return res, nil
}

// LoadSweep loads the sweep id from st, the latest one when id is 0. A
// store without sweeps, or without that one, is bad usage (NoSweeps).
func LoadSweep(ctx context.Context, st *store.Store, id int64, where string) (*store.SweepData, int64, error) {
	if id == 0 {
		var err error
		if id, err = st.Latest(ctx); errors.Is(err, store.ErrNoSweeps) {
			return nil, 0, NoSweeps(ctx, st, where)
		} else if err != nil {
			return nil, 0, err
		}
	}
	d, err := st.Load(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, usage.Errorf("report: no sweep %d in %s (see shakedown report --list)", id, where)
	}
	return d, id, err
}

// StoredHistory is the history of every sweep in st that f lets
// through; no sweep, or no successful run that f matches, is bad usage.
func StoredHistory(ctx context.Context, st *store.Store, where string, f HistoryFilter) (*History, error) {
	all, err := LoadAll(ctx, st)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, NoSweeps(ctx, st, where)
	}
	h := BuildHistory(where, all, f)
	if len(h.Series) == 0 {
		return nil, usage.Errorf("report --history: no successful runs in %s match --workload %q --target %q --threads %d", where, f.Workload, f.Target, f.Threads)
	}
	return h, nil
}
