package cli

import (
	"context"
	"errors"

	"github.com/shakedown/shakedown/internal/engine"
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
		return job.Prepare(ctx, env.Stdout)
	}
	_, err = job.Run(ctx, engine.RunOptions{Out: env.Stdout})
	if errors.Is(err, engine.ErrInterrupted) {
		return errors.New("interrupted: the results above cover what ran before the stop")
	}
	return err
}
