package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/engine"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/store"
)

// benchCmd is "shakedown prepare|run|cleanup WORKLOAD [options]", with
// sysbench's option names and meaning.
type benchCmd struct {
	verb string
}

func (c *benchCmd) run(ctx context.Context, env *Env, args []string) error {
	job, err := engine.Parse(c.verb, args, env.Stdout)
	if errors.Is(err, engine.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := job.Target.LoadPassword(env.Getenv); err != nil {
		return err
	}
	if c.verb != "run" {
		return job.Prepare(ctx, engine.PrepareOptions{Out: env.Stdout, Version: Version})
	}
	// Where the result goes is checked before the load: nothing is
	// measured that cannot be kept.
	jsonOut := outputFile{"--json", job.JSONPath()}
	if err := checkOutputs(jsonOut); err != nil {
		return err
	}
	var st *store.Store
	if job.StorePath() != "" {
		if st, err = openStoreFlag(ctx, "--store", job.StorePath()); err != nil {
			return err
		}
		defer st.Close()
	}
	out := env.Stdout
	if jsonOut.path == "-" {
		out = env.Stderr // standard output is the document's
	}
	started := time.Now()
	res, err := job.Run(ctx, engine.RunOptions{Out: out, Version: Version})
	if res != nil {
		// Kept even when interrupted or failed: nothing measured is lost.
		if serr := c.save(context.WithoutCancel(ctx), env, out, job, st, res, err, started, args); serr != nil {
			if err != nil {
				fmt.Fprintln(env.Stderr, "shakedown:", runError(err))
			}
			return serr
		}
	}
	return runError(err)
}

// runError is what the command says about a run that did not end well.
func runError(err error) error {
	if errors.Is(err, engine.ErrInterrupted) {
		return errors.New("interrupted: the results above cover what ran before the stop")
	}
	return err
}

// save writes the result to --json and records it in the store, saying so
// on out. What cannot be saved goes to standard error as JSON, and the
// command fails.
func (c *benchCmd) save(ctx context.Context, env *Env, out io.Writer, job *engine.Job, st *store.Store, res *result.Result, runErr error, started time.Time, args []string) error {
	var errs []error
	if p := job.JSONPath(); p != "" {
		if err := writeOutput(env.Stdout, outputFile{"--json", p}, resultJSON(res)); err != nil {
			errs = append(errs, err)
		} else if p != "-" {
			fmt.Fprintf(out, "\nResult written to %s\n", p)
		}
	}
	if st != nil {
		if err := storeRun(ctx, st, job, res, runErr, started, args); err != nil {
			errs = append(errs, fmt.Errorf("--store %s: %w", st.Path(), err))
		} else {
			fmt.Fprintf(out, "Result stored in %s\n", st.Path())
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

func storeRun(ctx context.Context, st *store.Store, job *engine.Job, res *result.Result, runErr error, started time.Time, args []string) error {
	status := store.RunOK
	msg := ""
	switch {
	case errors.Is(runErr, engine.ErrInterrupted):
		status = store.RunInterrupted
	case runErr != nil:
		status, msg = store.RunFailed, runErr.Error()
	}
	_, err := st.AddRun(ctx, &store.Run{
		Target:    res.Target.Name,
		Workload:  job.Workload,
		Threads:   job.Threads(),
		Command:   strings.Join(publicArgs(args), " "),
		Status:    status,
		Error:     msg,
		Degraded:  res.Degraded,
		StartedAt: started,
		WallS:     time.Since(started).Seconds(),
		Result:    res,
	})
	return err
}

// publicArgs drops the options that may carry a password.
func publicArgs(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name := strings.ReplaceAll(strings.SplitN(strings.TrimLeft(a, "-"), "=", 2)[0], "_", "-")
		if strings.HasPrefix(a, "-") && (name == "target" || name == "mysql-password") {
			if !strings.Contains(a, "=") {
				i++ // the value is the next argument
			}
			continue
		}
		out = append(out, a)
	}
	return out
}
