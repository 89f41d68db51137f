package cli

import (
	"cmp"
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/monitor"
	"github.com/shakedown/shakedown/internal/progress"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/stall"
)

// watchCmd is "shakedown watch TARGET".
type watchCmd struct {
	withCreds
	interval time.Duration
	count    int
	json     bool
	wide     bool
	cores    int
	stall    monitor.WatchStallOptions
}

func (c *watchCmd) flags(_ *Env) *pflag.FlagSet {
	fs := sbflag.NewFlagSet("watch")
	fs.DurationVar(&c.interval, "interval", time.Second, "time between samples")
	fs.IntVar(&c.count, "count", 0, "stop after this many samples (0 = until Ctrl-C)")
	fs.BoolVar(&c.json, "json", false, "print one JSON object per sample instead of the table")
	fs.BoolVar(&c.wide, "wide", false, "print every column, however wide the lines")
	fs.IntVar(&c.cores, "cores", -1, "the server host's CPU cores, to mark threads running above them (default: this host's when the server is local, else not judged)")
	sbflag.OptionalVar(fs, &c.stall.Spec, "stall", "default", "capture the processlist, InnoDB status, lock waits and transactions when a trigger holds, e.g. 'threads_running>25 for 5s,qps<50%' (alone: "+stall.DefaultSpec+"); reads only", stall.LooksLikeSpec)
	fs.DurationVar(&c.stall.Cooldown, "stall-cooldown", 60*time.Second, "quiet period after a stall capture in which no other is taken")
	fs.IntVar(&c.stall.Max, "stall-max", 5, "most stall captures")
	fs.BoolVar(&c.stall.Stacks, "stall-stacks", false, "with --stall, also read the server's thread stacks with gdb; this STOPS the server while gdb reads them; a server on this machine only")
	return fs
}

func (c *watchCmd) exec(ctx context.Context, env *Env, fs *pflag.FlagSet) error {
	switch {
	case fs.NArg() == 0:
		return usagef("watch: missing TARGET, e.g. shakedown watch mysql://user@127.0.0.1:3306/")
	case fs.NArg() > 1:
		return usagef("watch: unexpected argument %q: give one TARGET", fs.Arg(1))
	case c.interval < 10*time.Millisecond:
		return usagef("watch: --interval must be at least 10ms")
	case c.count < 0:
		return usagef("watch: --count must be >= 0")
	}
	if err := c.stall.Validate(); err != nil {
		return err
	}
	tgt, db, err := c.creds.ConnectArg(ctx, env.Getenv, "watch", fs.Arg(0), 1)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)

	ep := tgt.Endpoints()[0]
	s, pid, local := monitor.WatchSampler(ctx, db, tgt, c.cores)
	defer s.Close()
	c.stall.PID = pid
	width := 0
	if !c.wide && !c.json {
		width = terminalWidth(env)
	}
	write := monitor.WatchWriter(env.Stdout, c.json, tgt.String(), c.interval, local, width)
	if c.stall.Spec == "" {
		return monitor.Watch(ctx, s, c.interval, c.count, write)
	}
	c.stall.JSON = c.json
	sw, err := monitor.StartWatchStall(ctx, tgt, ep, c.interval, c.stall, env.Stdout)
	if err != nil {
		return err
	}
	err = monitor.Watch(ctx, s, c.interval, c.count, func(smp result.Sample, due time.Time) error {
		if err := write(smp, due); err != nil {
			return err
		}
		return sw.Observe(ctx, smp)
	})
	return errors.Join(err, sw.Close())
}

// terminalWidth is the width watch fits its table to: $COLUMNS, else the
// terminal's when standard output is one, else 80.
func terminalWidth(env *Env) int {
	if n, err := strconv.Atoi(env.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return cmp.Or(progress.Columns(env.Stdout), 80)
}
