package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/helptext"
	"github.com/shakedown/shakedown/internal/monitor"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/target"
)

// watchCmd is "shakedown watch TARGET".
type watchCmd struct {
	interval time.Duration
	count    int
	json     bool
	wide     bool
	cores    int
	creds    target.Credentials
}

func (c *watchCmd) flags() *pflag.FlagSet {
	fs := sbflag.NewFlagSet("watch")
	fs.DurationVar(&c.interval, "interval", time.Second, "time between samples")
	fs.IntVar(&c.count, "count", 0, "stop after this many samples (0 = until Ctrl-C)")
	fs.BoolVar(&c.json, "json", false, "print one JSON object per sample instead of the table")
	fs.BoolVar(&c.wide, "wide", false, "print every column, however wide the lines")
	fs.IntVar(&c.cores, "cores", -1, "the server host's CPU cores, to mark threads running above them (default: this host's when the server is local, else not judged)")
	c.creds.Bind(fs)
	return fs
}

func (c *watchCmd) run(ctx context.Context, env *Env, args []string) error {
	fs := c.flags()
	if help, err := parseFlags(env, fs, args, "watch", helptext.Watch); help || err != nil {
		return err
	}
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
	tgt, db, err := c.creds.ConnectArg(ctx, env.Getenv, "watch", fs.Arg(0), 1)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)

	s, local := monitor.WatchSampler(ctx, db, tgt.Endpoints()[0], c.cores)
	var write func(result.Sample, time.Time) error
	if c.json {
		enc := json.NewEncoder(env.Stdout)
		// Each sample as JSON, with the time its reading came back.
		write = func(smp result.Sample, _ time.Time) error { return enc.Encode(monitor.Record(smp)) }
	} else {
		fmt.Fprintf(env.Stdout, "watching %s every %s\n", tgt, c.interval)
		width := 0
		if !c.wide {
			width = terminalWidth(env)
		}
		tb := monitor.NewTableWidth(env.Stdout, local, width)
		tb.Interval = c.interval
		write = tb.WriteAt
	}
	return monitor.Watch(ctx, s, c.interval, c.count, write)
}

// terminalWidth is the width watch fits its table to: $COLUMNS, else the
// terminal's when standard output is one, else 80.
func terminalWidth(env *Env) int {
	if n, err := strconv.Atoi(env.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if f, ok := env.Stdout.(interface{ Fd() uintptr }); ok && isTerminal(env.Stdout) {
		if n := terminalColumns(f.Fd()); n > 0 {
			return n
		}
	}
	return 80
}
