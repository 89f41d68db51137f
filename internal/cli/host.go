package cli

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/hostsource"
	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/sbflag"
)

// hostCmd is "shakedown host facts".
type hostCmd struct {
	withCreds
	pid     int
	sandbox string
	datadir string
	json    string
}

func (c *hostCmd) flags(_ *Env) *pflag.FlagSet {
	fs := sbflag.NewFlagSet("host facts")
	fs.IntVar(&c.pid, "pid", 0, "the server process `PID` to read facts of (allowed CPUs, cgroup, limits)")
	fs.StringVar(&c.sandbox, "sandbox", "", "a sandbox `NAME`: its server process, datadir and variables")
	fs.StringVar(&c.datadir, "datadir", "", "the server's data directory `DIR`, for the disk rows (a sandbox's or a local target's is found)")
	fs.StringVar(&c.json, "json", "", "write the facts as JSON to `FILE` (- for standard output)")
	return fs
}

func (c *hostCmd) run(ctx context.Context, env *Env, args []string) error {
	return runVerbs(env, args, "host", hostHelp, commandFlags(env, c), []verb{
		{"facts", func(args []string) error { return runParsed(ctx, env, args, "host facts", hostHelp, c) }},
		{"diff", func(args []string) error {
			return runParsed(ctx, env, args, "host diff", hostHelp, &hostDiffCmd{})
		}},
	})
}

// exec is "shakedown host facts".
func (c *hostCmd) exec(ctx context.Context, env *Env, fs *pflag.FlagSet) error {
	if fs.NArg() > 1 {
		return usagef("host facts: give at most one TARGET, got %d", fs.NArg())
	}
	src := hostsource.Source{PID: c.pid, Sandbox: c.sandbox, DataDir: c.datadir}
	if fs.NArg() == 1 {
		src.URL = fs.Arg(0)
	}
	if err := src.Check(); err != nil {
		return err
	}
	if err := outfile.Check(outfile.File{Flag: "--json", Path: c.json}); err != nil {
		return err
	}
	facts, err := src.Collect(ctx, env.Getenv, &c.creds, "host facts")
	if err != nil {
		return err
	}
	if err := hostsource.Write(env.Stdout, c.json, facts); err != nil {
		return err
	}
	if hostsource.Known(facts) == 0 {
		return fmt.Errorf("host facts: no fact could be read (each row says why)")
	}
	return nil
}
