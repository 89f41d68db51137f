package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/demo"
	"github.com/shakedown/shakedown/internal/helptext"
	"github.com/shakedown/shakedown/internal/outfile"
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
	help       bool
}

func (c *demoCmd) flags() *pflag.FlagSet {
	fs := sbflag.NewFlagSet("demo")
	fs.StringVar(&c.out, "out", "shakedown-demo", "directory for the report, the store and the plan")
	fs.IntVar(&c.timeS, "time", 2, "seconds per step (after a 1 s warm-up)")
	fs.IntVar(&c.maxRepeats, "max-repeats", 6, "most repeats of a workload and thread level while its verdict is inconclusive")
	fs.IntSliceVar(&c.threads, "threads", []int{1, 4, 16, 64}, "thread levels")
	fs.StringVar(&c.basedir, "basedir", "", "unpacked MariaDB/MySQL tarball to run (default: mariadbd or mysqld from PATH, /usr/sbin)")
	fs.BoolVar(&c.placement, "placement", false, "compare a server bound to cores with the same server under an equal CPU quota")
	fs.BoolVarP(&c.help, "help", "h", false, "show this help")
	return fs
}

// demoTarget is one of the demo's two sandboxes.
type demoTarget struct {
	name, role string
	set        []string
	place      sandbox.Placement
}

// demoTargets are the two sandboxes: only the durability settings differ.
var demoTargets = []demoTarget{
	{"durable", "control", []string{"innodb_flush_log_at_trx_commit=1", "sync_binlog=1"}, sandbox.Placement{}},
	{"relaxed", "candidate", []string{"innodb_flush_log_at_trx_commit=0", "sync_binlog=0"}, sandbox.Placement{}},
}

// targets are the sandboxes this demo compares: with --placement, the
// same server bound to the first half of the CPUs this process may use
// (at least one) against one under a quota of as much CPU time.
func (c *demoCmd) targets() ([]demoTarget, error) {
	if !c.placement {
		return demoTargets, nil
	}
	cpus := sandbox.AllowedCPUs()
	n := max(len(cpus)/2, 1)
	if len(cpus) == 0 {
		return nil, usagef("demo: --placement: cannot read which CPUs this process may use")
	}
	cores, err := sandbox.ParsePlacement(sandbox.FormatCPUList(cpus[:n]), "", "")
	if err != nil {
		return nil, usagef("demo: --placement: %v", err)
	}
	quota, err := sandbox.ParsePlacement("", strconv.Itoa(n*100)+"%", "")
	if err != nil {
		return nil, usagef("demo: --placement: %v", err)
	}
	return []demoTarget{
		{"cores", "control", []string{"--cpus " + cores.CPUs}, cores},
		{"quota", "candidate", []string{"--cpu-quota " + quota.QuotaString()}, quota},
	}, nil
}

func (c *demoCmd) run(ctx context.Context, env *Env, args []string) error {
	fs := c.flags()
	if err := fs.Parse(args); err != nil {
		return flagError("demo", "demo", fs, err)
	}
	if c.help {
		fmt.Fprint(env.Stdout, helptext.Demo)
		fmt.Fprint(env.Stdout, fs.FlagUsages())
		return nil
	}
	if fs.NArg() > 0 {
		return usagef("demo: unexpected argument %q (see shakedown demo --help)", fs.Arg(0))
	}
	if c.timeS < 1 {
		return usagef("demo: --time must be >= 1")
	}
	if c.maxRepeats < 3 {
		return usagef("demo: --max-repeats must be >= 3")
	}
	if len(c.threads) == 0 {
		return usagef("demo: --threads needs at least one level")
	}
	for _, t := range c.threads {
		if t < 1 {
			return usagef("demo: --threads: %d: want levels >= 1", t)
		}
	}
	targets, err := c.targets()
	if err != nil {
		return err
	}
	dir, err := filepath.Abs(c.out)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("demo: --out %s: cannot be created: %w", c.out, outfile.PlainPathError(err))
	}
	var ts []demo.Target
	for _, t := range targets {
		ts = append(ts, demo.Target{Name: t.name, Role: t.role, Set: t.set, Place: t.place})
	}
	return demo.Run(ctx, c.options(env, dir, ts))
}

// options are the demo's settings from the flags.
func (c *demoCmd) options(env *Env, dir string, targets []demo.Target) demo.Options {
	return demo.Options{
		Dir: dir, Basedir: c.basedir, Placement: c.placement, TimeS: c.timeS, MaxRepeats: c.maxRepeats, Threads: c.threads,
		Targets: targets, Out: env.Stdout, Progress: env.Stderr, Live: isTerminal(env.Stderr), Getenv: env.Getenv,
		Version: Version,
	}
}

// planText is the plan the demo runs on insts.
func (c *demoCmd) planText(insts []*sandbox.Instance) []byte {
	return demo.PlanText(insts, c.options(&Env{}, "", nil))
}
