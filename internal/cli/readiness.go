package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/readiness"
	"github.com/shakedown/shakedown/internal/store"
)

// readinessCmd is "shakedown readiness SOURCE TARGET".
type readinessCmd struct {
	storePath string
	sweep     int64
	format    string
	out       string
}

func (c *readinessCmd) flags(env *Env) *pflag.FlagSet {
	fs := storeFlagSet("readiness", env, &c.storePath, "")
	fs.Int64Var(&c.sweep, "sweep", 0, "sweep whose verdicts to show (default: the latest with TARGET as a candidate)")
	fs.StringVar(&c.format, "format", "text", "text, md, json or html; with -o and no --format, taken from the file's extension")
	fs.StringVarP(&c.out, "output", "o", "", "write to FILE instead of standard output")
	fs.String("html", "", "write the page as a self-contained HTML page to FILE (as -o FILE --format html)")
	return fs
}

func (c *readinessCmd) exec(ctx context.Context, env *Env, fset *pflag.FlagSet) error {
	rest := fset.Args()
	if len(rest) != 2 {
		return usagef("readiness: want SOURCE and TARGET, got %d argument(s): shakedown readiness mysql://user@source/db mysql://user@target/db", len(rest))
	}
	if err := chooseFormat("readiness", fset, &c.out, &c.format, readiness.Formats); err != nil {
		return err
	}
	if c.sweep < 0 {
		return usagef("readiness: --sweep must be a sweep ID (see shakedown report --list)")
	}
	src, err := sideArg("readiness", "SOURCE", rest[0])
	if err != nil {
		return err
	}
	dst, err := sideArg("readiness", "TARGET", rest[1])
	if err != nil {
		return err
	}
	// The commands the page suggests name this very store, so that what
	// they save is what readiness reads next time.
	storeFlag := storeArg(store.Display(c.storePath))
	if store.Missing(c.storePath) {
		return usagef("readiness: no store at %s: save evidence first (shakedown check %s %s %s), or name the store with --store",
			c.storePath, src.Redacted(), dst.Redacted(), storeFlag)
	}
	st, err := store.OpenFlag(ctx, env.Getenv, "--store", c.storePath)
	if err != nil {
		return err
	}
	defer st.Close()
	page, err := readiness.Build(ctx, st, readiness.Options{Source: src, Target: dst, SweepID: c.sweep, StoreFlag: storeFlag, Now: time.Now().UTC()})
	switch {
	case errors.Is(err, readiness.ErrNoCandidate):
		return usagef("readiness: --sweep: %v (see shakedown report --list)", err)
	case errors.Is(err, store.ErrNotFound):
		return usagef("readiness: --sweep %d: %v (see shakedown report --list)", c.sweep, err)
	case err != nil:
		return err
	}
	if c.out == "" {
		err = readiness.Write(env.Stdout, c.format, page)
	} else if err = outfile.Create(c.out, func(w io.Writer) error { return readiness.Write(w, c.format, page) }); err == nil {
		fmt.Fprintf(env.Stdout, "%s: %s, %d reason(s)\n", c.out, page.Verdict, len(page.Reasons))
	}
	if err != nil {
		return err
	}
	if page.Verdict == readiness.NotReady {
		return ErrDifferences
	}
	return nil
}
