package cli

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/vars"
)

// varsCmd is "shakedown vars diff".
type varsCmd struct {
	serverDiff
}

func (c *varsCmd) flags(_ *Env) *pflag.FlagSet {
	return c.serverDiff.flagSet("vars diff", "list every variable: equal ones too (after the differences), and each of those only some servers have")
}

func (c *varsCmd) run(ctx context.Context, env *Env, args []string) error {
	return runVerbs(env, args, "vars", varsHelp, commandFlags(env, c), []verb{
		{"diff", func(args []string) error { return runParsed(ctx, env, args, "vars diff", varsHelp, c) }},
		{"bisect", func(args []string) error { return (&bisectCmd{}).run(ctx, env, args) }},
	})
}

// exec is "shakedown vars diff".
func (c *varsCmd) exec(ctx context.Context, env *Env, fs *pflag.FlagSet) error {
	if fs.NArg() < 2 {
		return usagef("vars diff: give at least two TARGETs, the control first")
	}
	for _, raw := range fs.Args() {
		if _, err := c.creds.ParseArg(env.Getenv, "vars diff", raw); err != nil {
			return err
		}
	}
	names := make([]string, fs.NArg())
	sets := make([]map[string]string, fs.NArg())
	for i, raw := range fs.Args() {
		tgt, db, err := c.creds.ConnectArg(ctx, env.Getenv, "vars diff", raw, 1)
		if err != nil {
			return err
		}
		sets[i], err = vars.Collect(ctx, db)
		db.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", tgt, err)
		}
		names[i] = tgt.String()
	}
	diffs := vars.Compare(sets, c.all)
	var err error
	if c.json {
		err = vars.WriteJSON(env.Stdout, names, diffs)
	} else {
		err = vars.WriteText(env.Stdout, names, diffs, c.all)
	}
	if err != nil {
		return err
	}
	if vars.Differ(diffs) {
		return ErrDifferences
	}
	return nil
}
