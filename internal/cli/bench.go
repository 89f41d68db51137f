package cli

import (
	"context"
	"errors"
	"fmt"
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
	if c.verb != "run" {
		return job.Prepare(ctx, engine.PrepareOptions{Out: env.Stdout, Version: Version})
	}
	started := time.Now()
	res, err := job.Run(ctx, engine.RunOptions{Out: env.Stdout, Version: Version})
	if job.StorePath() != "" && res != nil {
		// Stored even when interrupted or failed: nothing measured is lost.
		if serr := storeRun(context.WithoutCancel(ctx), job, res, err, started, args); serr != nil {
			fmt.Fprintln(env.Stderr, "shakedown:", serr)
		} else {
			fmt.Fprintf(env.Stdout, "Result stored in %s\n", job.StorePath())
		}
	}
	if errors.Is(err, engine.ErrInterrupted) {
		return errors.New("interrupted: the results above cover what ran before the stop")
	}
	return err
}

func storeRun(ctx context.Context, job *engine.Job, res *result.Result, runErr error, started time.Time, args []string) error {
	st, err := store.Open(ctx, job.StorePath())
	if err != nil {
		return err
	}
	defer st.Close()
	status := store.RunOK
	msg := ""
	switch {
	case errors.Is(runErr, engine.ErrInterrupted):
		status = store.RunInterrupted
	case runErr != nil:
		status, msg = store.RunFailed, runErr.Error()
	}
	_, err = st.AddRun(ctx, &store.Run{
		Target:    res.Target.Name,
		Workload:  job.Workload,
		Threads:   job.Threads(),
		Command:   strings.Join(publicArgs(args), " "),
		Status:    status,
		Error:     msg,
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
