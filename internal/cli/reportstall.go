package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/report"
	"github.com/shakedown/shakedown/internal/store"
)

// validateStall checks report --stall ID, which goes alone.
func (c *reportCmd) validateStall(fset *pflag.FlagSet, files []string) error {
	switch {
	case c.stall < 1:
		return usagef("report: --stall %d: want a run ID (the reports name each capture's run)", c.stall)
	case len(files) > 0 || c.list || c.history || c.runs != "" || fset.Changed("sweep") || c.baseline != "" || c.bisect != "" || c.control != "":
		return usagef("report: --stall prints one run's captures: leave out files, --list, --history, --runs, --sweep, --baseline, --bisect and --control")
	}
	if err := chooseFormat("report --stall", fset, &c.out, &c.format, report.StallFormats); err != nil {
		return err
	}
	return nil
}

// writeStalls prints one run's stall captures in full.
func (c *reportCmd) writeStalls(ctx context.Context, env *Env, st *store.Store) error {
	runs, err := st.RunsByID(ctx, []int64{c.stall})
	if errors.Is(err, store.ErrNotFound) {
		return usagef("report --stall: %v in %s", err, store.Display(c.storePath))
	}
	if err != nil {
		return err
	}
	return c.emit(env, func(w io.Writer) error { return report.WriteRunStalls(w, c.format, runs[0]) }, fmt.Sprintf("run %d's stall captures", c.stall))
}
