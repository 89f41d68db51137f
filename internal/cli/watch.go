package cli

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/monitor"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/target"
)

const watchUsage = `usage: shakedown watch TARGET [--interval 1s] [--count N] [--json] [--cores N]

Per-second server status, orzdba / mysqladmin ext -i1 -r style: statements,
transactions, threads, rows, buffer pool, redo, network and InnoDB figures,
plus host CPU and the server process's CPU when the server runs on this
host. Rates are over the real time between two reads of SHOW GLOBAL STATUS;
a counter that goes back (a restart) shows 0. Figures that need attention
are marked with '*' and explained once. TARGET is a URL such as
mysql://user:password@host:port/db. Ctrl-C stops.

Options:
`

// watchCmd is "shakedown watch TARGET".
type watchCmd struct {
	interval time.Duration
	count    int
	json     bool
	cores    int
}

func (c *watchCmd) flags() *pflag.FlagSet {
	fs := sbflag.NewFlagSet("watch")
	fs.DurationVar(&c.interval, "interval", time.Second, "time between samples")
	fs.IntVar(&c.count, "count", 0, "stop after this many samples (0 = until Ctrl-C)")
	fs.BoolVar(&c.json, "json", false, "print one JSON object per sample instead of the table")
	fs.IntVar(&c.cores, "cores", -1, "the server host's CPU cores, to mark threads running above them (default: this host's when the server is local, else not judged)")
	return fs
}

func (c *watchCmd) run(ctx context.Context, env *Env, args []string) error {
	fs := c.flags()
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprint(env.Stdout, watchUsage, fs.FlagUsages())
			return nil
		}
		return flagError("watch", "watch", fs, err)
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
	tgt, db, err := connectURL(ctx, "watch", fs.Arg(0), 1)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)

	ep := tgt.Endpoints()[0]
	opt := monitor.Options{}
	local := monitor.IsLocal(ep)
	if local {
		pid, _ := monitor.FindServerPID("/proc", ep.Port, monitor.PIDFile(ctx, db))
		opt.Host = &monitor.HostOptions{ServerPID: pid}
		opt.Limits.Cores = runtime.NumCPU()
	}
	if c.cores >= 0 {
		opt.Limits.Cores = c.cores
	}
	s := monitor.NewSampler(db, opt)
	var out sampleWriter
	if c.json {
		out = jsonSamples{enc: json.NewEncoder(env.Stdout)}
	} else {
		fmt.Fprintf(env.Stdout, "watching %s every %s\n", tgt, c.interval)
		out = monitor.NewTable(env.Stdout, local)
	}
	read := func() (monitor.Sample, bool) {
		rctx, cancel := context.WithTimeout(ctx, 5*c.interval+5*time.Second)
		defer cancel()
		return s.Next(rctx)
	}
	read() // the baseline
	start := time.Now()
	tick := time.NewTicker(c.interval)
	defer tick.Stop()
	for n := 0; c.count == 0 || n < c.count; n++ {
		select {
		case <-ctx.Done():
			return nil // Ctrl-C is how watch normally ends
		case <-tick.C:
		}
		smp, ok := read()
		if !ok {
			continue
		}
		smp.AtS = float64(smp.At().Sub(start).Round(time.Millisecond)) / float64(time.Second)
		if err := out.Write(smp); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
	}
	return nil
}

type sampleWriter interface{ Write(monitor.Sample) error }

type jsonSamples struct{ enc *json.Encoder }

func (j jsonSamples) Write(s monitor.Sample) error { return j.enc.Encode(monitor.Record(s)) }

// connectURL parses a target URL and opens a checked pool of size
// connections on its first endpoint, without a default database (watch and
// vars need none). Connection failures come back explained.
func connectURL(ctx context.Context, verb, raw string, size int) (*target.Target, *sql.DB, error) {
	tgt, err := parseURL(verb, raw)
	if err != nil {
		return nil, nil, err
	}
	ep := tgt.Endpoints()[0]
	db, err := tgt.OpenNoDB(ep, size)
	if err != nil {
		return nil, nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, tgt.ConnectTimeout+time.Second)
	defer cancel()
	if err := db.PingContext(cctx); err != nil {
		db.Close()
		return nil, nil, tgt.Explain(ep, err)
	}
	return tgt, db, nil
}

// parseURL reads a target URL; a malformed one is a usage error.
func parseURL(verb, raw string) (*target.Target, error) {
	if !strings.HasPrefix(raw, "mysql://") {
		return nil, usagef("%s: %q is not a target URL: use mysql://user:password@host:port/db", verb, redactArg(raw))
	}
	tgt, err := target.Parse(raw)
	if err != nil {
		return nil, usagef("%s: %v", verb, err)
	}
	return tgt, nil
}

// redactArg keeps what looks like a password out of an error about a
// malformed argument.
func redactArg(s string) string {
	if at := strings.LastIndex(s, "@"); at >= 0 {
		if i := strings.Index(s, "://"); i >= 0 && i < at {
			return s[:i+3] + "...@" + s[at+1:]
		}
		return "...@" + s[at+1:]
	}
	return s
}
