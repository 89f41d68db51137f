package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/bench"
	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/splitload"
	"github.com/shakedown/shakedown/internal/store"
)

// benchCmd is "shakedown prepare|run|cleanup WORKLOAD [options]", with
// sysbench's option names and meaning.
type benchCmd struct {
	verb string
}

func (c *benchCmd) run(ctx context.Context, env *Env, args []string) error {
	job, err := bench.Parse(c.verb, args, env.Stdout)
	if errors.Is(err, bench.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, w := range job.Warnings {
		// sysbench's form, which runbooks may grep for; on standard error,
		// so that --json=- keeps standard output to the document.
		fmt.Fprintln(env.Stderr, "WARNING:", w)
	}
	if err := job.Target.LoadPassword(env.Getenv); err != nil {
		return err
	}
	if c.verb != "run" {
		if job.SplitGiven() {
			return usagef("%s %s: --segment is for run: prepare and clean up once, from one process", c.verb, job.Workload())
		}
		return job.Prepare(ctx, bench.PrepareOptions{Out: env.Stdout, Version: Version})
	}
	sp, err := job.ResolveSplit(env.Getenv, time.Now())
	if err != nil {
		return err
	}
	// Where the result goes is checked before the load: nothing is
	// measured that cannot be kept.
	jsonOut := outfile.File{Flag: "--json", Path: job.JSONPath()}
	if err := outfile.Check(jsonOut); err != nil {
		return err
	}
	st, out, closeStore, err := loadOutputs(ctx, env, job.StorePath(), jsonOut.Path)
	if err != nil {
		return err
	}
	defer closeStore()
	var ivs []result.IntervalHDR
	opt := bench.RunOptions{Out: out, Version: Version, IOTuning: client.ReadIOTuning(env.Getenv)}
	sr, err := job.SplitRunner(ctx, out, env.Stderr, st, sp, filepath.Dir(store.DefaultPath(env.Getenv)), args)
	if err != nil {
		return err
	}
	if sr != nil {
		opt.Intervals = &ivs
	}
	started := time.Now()
	res, err := job.Run(ctx, opt)
	if res != nil && sr != nil {
		res.Segment.Host = sr.Host()
	}
	// The command ends with the status the run is stored with.
	status, endErr := bench.Ending(res, err, errors.Is(err, bench.ErrInterrupted) || res == nil && ctx.Err() != nil)
	if sr != nil {
		defer sr.Finish(context.WithoutCancel(ctx), status)
	}
	var serr error
	if res != nil {
		// Kept even when interrupted or failed: nothing measured is lost.
		serr = c.save(context.WithoutCancel(ctx), env, out, job, st, sr, ivs, res, err, started, args)
	}
	return loadEnd(env, endErr, serr)
}

// save writes the result to --json and records it in the store, saying so
// on out. What cannot be saved goes to standard error as JSON, and the
// command fails.
func (c *benchCmd) save(ctx context.Context, env *Env, out io.Writer, job *bench.Job, st *store.Store, sr *splitload.Runner, ivs []result.IntervalHDR,
	res *result.Result, runErr error, started time.Time, args []string) error {
	var errs []error
	if p := job.JSONPath(); p != "" {
		if err := outfile.Write(env.Stdout, outfile.File{Flag: "--json", Path: p}, resultJSON(res)); err != nil {
			errs = append(errs, err)
		} else if p != "-" {
			fmt.Fprintf(out, "\nResult written to %s\n", p)
		}
	}
	if st != nil {
		if err := job.Keep(ctx, out, st, sr, ivs, res, runErr, started, args); err != nil && sr != nil {
			// The result is safe in the runner's own file: say where,
			// and fail, without printing it all again.
			fmt.Fprintln(env.Stderr, "shakedown:", err)
			return errSilent
		} else if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return rescue(env.Stderr, errors.Join(errs...), res)
	}
	return nil
}

func resultJSON(res *result.Result) []byte {
	var b strings.Builder
	res.WriteJSON(&b) // a result always encodes: its floats are finite
	return []byte(b.String())
}
