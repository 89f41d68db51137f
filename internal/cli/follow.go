package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/follow"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/target"
)

// followCmd is "shakedown follow SOURCE TARGET".
type followCmd struct {
	withCreds
	f follow.Flags
}

func (c *followCmd) flags(_ *Env) *pflag.FlagSet {
	fs := sbflag.NewFlagSet("follow")
	c.f.Bind(fs, true)
	return fs
}

func (c *followCmd) exec(ctx context.Context, env *Env, fs *pflag.FlagSet) error {
	src, dst, err := sides(env, &c.creds, "follow", fs.Args(), func() error { _, err := c.f.Resolve("follow"); return err })
	if err != nil {
		return err
	}
	opts, _ := c.f.Resolve("follow")
	return runFollower(ctx, env, &c.f, src, dst, opts)
}

// runFollower runs a follower with its live outputs and its summary:
// follow's work, and copy --follow's after the copy.
func runFollower(ctx context.Context, env *Env, fl *follow.Flags, src, dst *target.Target, opts follow.Options) error {
	err := fl.Run(ctx, env.Stdout, env.Stderr, src, dst, opts)
	switch {
	case errors.Is(err, follow.ErrPrerequisites), errors.Is(err, follow.ErrNoPosition):
		return usagef("follow: %v", err)
	case errors.Is(err, follow.ErrDiffers):
		return ErrDifferences
	case err != nil:
		return fmt.Errorf("follow: %w", err)
	}
	return nil
}
