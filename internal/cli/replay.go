package cli

import "context"

type replayCmd struct{}

func (c *replayCmd) run(ctx context.Context, env *Env, args []string) error { return nil }
