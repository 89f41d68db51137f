package cli

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/host"
	"github.com/shakedown/shakedown/internal/hostsource"
)

// hostDiffCmd is "shakedown host diff".
type hostDiffCmd struct {
	serverDiff
}

func (c *hostDiffCmd) flags(_ *Env) *pflag.FlagSet {
	return c.serverDiff.flagSet("host diff", "list every fact: equal ones too, after the differences")
}

func (c *hostDiffCmd) exec(ctx context.Context, env *Env, fs *pflag.FlagSet) error {
	if fs.NArg() < 2 {
		return usagef("host diff: give at least two hosts, the control first: FILE, pid:PID, sandbox:NAME, a TARGET URL or local")
	}
	sets, err := hostsource.CollectAll(ctx, env.Getenv, &c.creds, fs.Args())
	if err != nil {
		return err
	}
	diffs := host.Compare(sets, c.all)
	if c.json {
		err = host.WriteDiffJSON(env.Stdout, sets, diffs)
	} else {
		err = host.WriteDiffText(env.Stdout, sets, diffs)
	}
	if err != nil {
		return err
	}
	if host.Differ(diffs) {
		return ErrDifferences
	}
	return nil
}
