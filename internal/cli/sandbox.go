package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/sbflag"
)

// sandboxCmd is "shakedown sandbox up|down|list".
type sandboxCmd struct {
	opts    sandbox.Options
	urlOnly bool
	flavour string

	cpus, cpuQuota, numa string
}

func (c *sandboxCmd) flags() *pflag.FlagSet {
	fs := sbflag.NewFlagSet("sandbox up")
	fs.IntVar(&c.opts.Port, "port", 0, "TCP port on 127.0.0.1 (default: a free one)")
	fs.StringArrayVar(&c.opts.Set, "set", nil, "server setting var=value, overriding the benchmark defaults; repeat for more (e.g. --set log_bin=ON --set sync_binlog=1)")
	fs.StringVar(&c.opts.Basedir, "basedir", "", "unpacked MariaDB/MySQL tarball to run (default: mariadbd or mysqld from PATH, /usr/sbin)")
	fs.StringVar(&c.cpus, "cpus", "", "bind the server to these CPUs, e.g. 0-3 or 0,2 (CPU affinity)")
	fs.StringVar(&c.cpuQuota, "cpu-quota", "", "limit the server to this share of CPU time in a cgroup, e.g. 200% (two CPUs) or 0.5")
	fs.StringVar(&c.numa, "numa", "", "interleave: spread the server's memory over all NUMA nodes (needs numactl and 2+ nodes)")
	fs.StringVar(&c.flavour, "flavour", "mariadb", "the server to run: mariadb (MariaDB or MySQL, from PATH or --basedir), galera (a MariaDB Galera cluster), tidb or vitess (vtgate and its tablets over MariaDB)")
	fs.IntVar(&c.opts.Nodes, "nodes", 0, "the nodes of a --flavour galera cluster (default 3)")
	fs.IntVar(&c.opts.Shards, "shards", 0, "the shards of a --flavour vitess keyspace (default 1, unsharded)")
	fs.StringVar(&c.opts.Server, "server", "", "the tidb-server of --flavour tidb (default: $SHAKEDOWN_TIDB_SERVER, else tidb-server on PATH), or the vtcombo of --flavour vitess (default: $SHAKEDOWN_VITESS_SERVER, vtcombo on PATH, else scripts/install-vitess.sh's build)")
	fs.BoolVar(&c.urlOnly, "url-only", false, "print only the target URL, for scripts")
	return fs
}

func (c *sandboxCmd) usage(w io.Writer) {
	fmt.Fprint(w, sandboxHelp)
	fmt.Fprint(w, c.flags().FlagUsages())
}

func (c *sandboxCmd) run(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		return usagef("sandbox: missing subcommand: use up, start, stop, down or list (see shakedown sandbox --help)")
	}
	switch args[0] {
	case "-h", "--help", "help":
		c.usage(env.Stdout)
		return nil
	case "up":
		return c.up(ctx, env, args[1:])
	case "start":
		return c.start(ctx, env, args[1:])
	case "stop":
		return c.stop(ctx, env, "stop", args[1:], sandbox.Stop, "sandbox NAME stopped; its data stays (shakedown sandbox up NAME starts it again, sandbox down NAME deletes it)")
	case "down":
		return c.stop(ctx, env, "down", args[1:], sandbox.Down, "sandbox NAME down")
	case "list", "ls":
		return c.list(env, args[1:])
	}
	return usagef("sandbox: unknown subcommand %q: use up, start, stop, down or list (see shakedown sandbox --help)", args[0])
}

// parse parses a subcommand's flags and returns its arguments; help
// reports that help was asked for, and printed.
func (c *sandboxCmd) parse(env *Env, verb string, fs *pflag.FlagSet, args []string) (rest []string, help bool, err error) {
	if err := fs.Parse(args); errors.Is(err, pflag.ErrHelp) {
		c.usage(env.Stdout)
		return nil, true, nil
	} else if err != nil {
		return nil, false, flagError("sandbox "+verb, "sandbox", fs, err)
	}
	return fs.Args(), false, nil
}

func (c *sandboxCmd) up(ctx context.Context, env *Env, args []string) error {
	name, err := c.nameArg(env, "up", c.flags(), args)
	if name == "" {
		return err
	}
	o := c.opts
	if o.Port < 0 || o.Port > 65535 {
		return usagef("sandbox up: --port %d: want 1-65535, or leave it out to pick a free port", o.Port)
	}
	if err := sandbox.ValidateSet(o.Set); err != nil {
		return usagef("sandbox up: %v", err)
	}
	if o.Placement, err = sandbox.ParsePlacement(c.cpus, c.cpuQuota, c.numa); err != nil {
		return usagef("sandbox up: %v", err)
	}
	if err := o.SetFlavour(c.flavour, env.Getenv); err != nil {
		return usagef("sandbox up: %v", err)
	}
	home := sandbox.DefaultHome(env.Getenv)
	if old, err := sandbox.Get(home, name); err == nil {
		// An existing sandbox is used as it is, with its data, when it
		// is what was asked for: "up" of a running one prints its URL,
		// so that a script may run it every time; a stopped one starts
		// again. Other settings are refused, saying which, since only a
		// new sandbox (or sandbox down, which deletes the data) has them.
		if err := old.CheckReuse(o.Port, o.Set, o.Basedir, o.Placement, o.Flavour, o.Shards); err != nil {
			return err
		}
		if !old.Running {
			return c.restart(ctx, env, home, name)
		}
		return c.say(env, old, "already up", true)
	}
	o.Name, o.Home = name, home
	inst, err := sandbox.Up(ctx, o)
	if errors.Is(err, sandbox.ErrInvalid) {
		return usagef("sandbox up: %v", err)
	}
	if err != nil {
		return err
	}
	return c.say(env, inst, "up", true)
}

// say prints where inst listens, or with --url-only its target URL alone.
func (c *sandboxCmd) say(env *Env, inst *sandbox.Instance, state string, socket bool) error {
	if c.urlOnly {
		_, err := fmt.Fprintln(env.Stdout, inst.URL())
		return err
	}
	_, err := fmt.Fprintln(env.Stdout, inst.Line(state, socket))
	return err
}

// restart starts a stopped sandbox again with its data.
func (c *sandboxCmd) restart(ctx context.Context, env *Env, home, name string) error {
	inst, err := sandbox.Start(ctx, home, name)
	if errors.Is(err, sandbox.ErrRunning) {
		return usagef("sandbox start: %v", err)
	}
	if err != nil {
		return err
	}
	return c.say(env, inst, "started again with its data", false)
}

func (c *sandboxCmd) start(ctx context.Context, env *Env, args []string) error {
	fs := sbflag.NewFlagSet("sandbox start")
	fs.BoolVar(&c.urlOnly, "url-only", false, "print only the target URL, for scripts")
	name, err := c.nameArg(env, "start", fs, args)
	if name == "" {
		return err
	}
	home := sandbox.DefaultHome(env.Getenv)
	if _, err := sandbox.Get(home, name); errors.Is(err, sandbox.ErrNotFound) {
		return usagef("sandbox start: %v: shakedown sandbox up %s creates it", err, name)
	}
	return c.restart(ctx, env, home, name)
}

// stop is "sandbox stop" and "sandbox down": end one sandbox's server
// (with stop, the data stays), and say so with done.
func (c *sandboxCmd) stop(ctx context.Context, env *Env, verb string, args []string, end func(ctx context.Context, home, name string) error, done string) error {
	name, err := c.nameArg(env, verb, sbflag.NewFlagSet("sandbox "+verb), args)
	if name == "" {
		return err
	}
	err = end(ctx, sandbox.DefaultHome(env.Getenv), name)
	if errors.Is(err, sandbox.ErrNotFound) {
		return usagef("sandbox %s: %v", verb, err)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(env.Stdout, strings.ReplaceAll(done, "NAME", name))
	return err
}

func (c *sandboxCmd) list(env *Env, args []string) error {
	rest, help, err := c.parse(env, "list", sbflag.NewFlagSet("sandbox list"), args)
	if help || err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("sandbox list: unexpected argument %q: list takes none", rest[0])
	}
	home := sandbox.DefaultHome(env.Getenv)
	all, err := sandbox.List(home)
	if err != nil {
		return err
	}
	if len(all) == 0 {
		_, err := fmt.Fprintf(env.Stdout, "no sandboxes in %s\n", home)
		return err
	}
	return sandbox.WriteList(env.Stdout, all)
}

// nameArg parses a subcommand's flags and returns the one sandbox NAME it
// takes; "" when help was asked for and printed (err nil) or on a fault.
func (c *sandboxCmd) nameArg(env *Env, verb string, fs *pflag.FlagSet, args []string) (string, error) {
	rest, help, err := c.parse(env, verb, fs, args)
	if help || err != nil {
		return "", err
	}
	return sandbox.NameArg(verb, rest)
}
