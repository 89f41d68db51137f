package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/demo"
	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/progress"
	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/sbflag"
)

// demoCmd is "shakedown demo".
type demoCmd struct {
	out        string
	timeS      int
	maxRepeats int
	threads    []int
	basedir    string
	placement  bool
	port       int
	candidate  string
	help       bool
}

func (c *demoCmd) flags() *pflag.FlagSet {
	fs := sbflag.NewFlagSet("demo")
	fs.StringVar(&c.out, "out", "shakedown-demo", "directory for the report, the store and the plan")
	fs.IntVar(&c.timeS, "time", 2, "seconds per load step (after a 1 s warm-up), in the sweep and in the rehearsal")
	fs.IntVar(&c.maxRepeats, "max-repeats", 6, "most repeats of a workload and thread level while its verdict is inconclusive")
	fs.IntSliceVar(&c.threads, "threads", []int{1, 4, 16, 64}, "thread levels")
	fs.StringVar(&c.basedir, "basedir", "", "unpacked MariaDB/MySQL tarball to run (default: mariadbd or mysqld from PATH, /usr/sbin)")
	fs.BoolVar(&c.placement, "placement", false, "compare a server bound to cores with the same server under an equal CPU quota")
	fs.IntVar(&c.port, "port", 0, "the control's sandbox listens on this port, the candidate's on the next (0: free ports)")
	fs.StringVar(&c.candidate, "candidate", "mariadb", "the candidate: mariadb (the control's server, relaxed), tidb (a TiDB sandbox: $SHAKEDOWN_TIDB_SERVER, else tidb-server on PATH) or vitess (vtgate over the control's server and settings: $SHAKEDOWN_VITESS_SERVER, vtcombo on PATH, else scripts/install-vitess.sh's build)")
	fs.BoolVarP(&c.help, "help", "h", false, "show this help")
	return fs
}

func (c *demoCmd) run(ctx context.Context, env *Env, args []string) error {
	fs := c.flags()
	if help, err := parseFlags(env, fs, args, "demo", demoHelp); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("demo: unexpected argument %q (see shakedown demo --help)", fs.Arg(0))
	}
	targets, err := demo.Targets(c.placement, c.candidate)
	if err != nil {
		return err
	}
	if err := c.options(env, "", targets).Validate(); err != nil {
		return err
	}
	dir, err := filepath.Abs(c.out)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("demo: --out %s: cannot be created: %w", c.out, outfile.PlainPathError(err))
	}
	return demo.Run(ctx, c.options(env, dir, targets))
}

// options are the demo's settings from the flags.
func (c *demoCmd) options(env *Env, dir string, targets []demo.Target) demo.Options {
	return demo.Options{
		Dir: dir, Basedir: c.basedir, Placement: c.placement, TimeS: c.timeS, MaxRepeats: c.maxRepeats, Threads: c.threads,
		Targets: targets, Out: env.Stdout, Progress: env.Stderr, Live: progress.IsTerminal(env.Stderr), Getenv: env.Getenv,
		Version: Version, Port: c.port,
	}
}

// planText is the plan the demo runs on insts.
func (c *demoCmd) planText(insts []*sandbox.Instance) []byte {
	return demo.PlanText(insts, c.options(&Env{}, "", nil))
}
