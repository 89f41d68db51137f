package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/shakedown/shakedown/internal/outfile"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/helptext"
	"github.com/shakedown/shakedown/internal/host"
	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/target"
)

// hostCmd is "shakedown host facts".
type hostCmd struct {
	pid     int
	sandbox string
	datadir string
	json    string
	creds   target.Credentials
}

func (c *hostCmd) flags() *pflag.FlagSet {
	fs := sbflag.NewFlagSet("host facts")
	fs.IntVar(&c.pid, "pid", 0, "the server process `PID` to read facts of (allowed CPUs, cgroup, limits)")
	fs.StringVar(&c.sandbox, "sandbox", "", "a sandbox `NAME`: its server process, datadir and variables")
	fs.StringVar(&c.datadir, "datadir", "", "the server's data directory `DIR`, for the disk rows (a sandbox's or a local target's is found)")
	fs.StringVar(&c.json, "json", "", "write the facts as JSON to `FILE` (- for standard output)")
	c.creds.Bind(fs)
	return fs
}

func (c *hostCmd) run(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		return usagef("host: missing subcommand: use facts or diff (see shakedown host --help)")
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(env.Stdout, helptext.Host, c.flags().FlagUsages())
		return nil
	case "facts":
	case "diff":
		return (&hostDiffCmd{}).run(ctx, env, args[1:])
	default:
		return usagef("host: unknown subcommand %q: use facts or diff (see shakedown host --help)", args[0])
	}
	fs := c.flags()
	if help, err := parseFlags(env, fs, args[1:], "host facts", helptext.Host); help || err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usagef("host facts: give at most one TARGET, got %d", fs.NArg())
	}
	if c.pid < 0 {
		return usagef("host facts: --pid must be a process id, got %d", c.pid)
	}
	if c.pid > 0 && c.sandbox != "" {
		return usagef("host facts: give --pid or --sandbox, not both")
	}
	if c.sandbox != "" && fs.NArg() > 0 {
		return usagef("host facts: give --sandbox or a TARGET, not both (a sandbox's variables are read from it)")
	}
	src := hostSource{pid: c.pid, sandbox: c.sandbox, datadir: c.datadir}
	if fs.NArg() == 1 {
		src.url = fs.Arg(0)
	}
	if err := outfile.Check(outfile.File{Flag: "--json", Path: c.json}); err != nil {
		return err
	}
	facts, err := src.collect(ctx, env, &c.creds, "host facts")
	if err != nil {
		return err
	}
	known := 0
	for _, f := range facts.Facts {
		if f.Known() {
			known++
		}
	}
	switch c.json {
	case "":
		err = host.WriteText(env.Stdout, facts)
	case "-":
		err = host.WriteJSON(env.Stdout, facts)
	default:
		err = writeFactsFile(c.json, facts)
		if err == nil {
			err = host.WriteText(env.Stdout, facts)
		}
	}
	if err != nil {
		return err
	}
	if known == 0 {
		return fmt.Errorf("host facts: no fact could be read (each row says why)")
	}
	return nil
}

// writeFactsFile writes the JSON document to a file.
func writeFactsFile(path string, f *host.Facts) error {
	out, err := os.Create(path)
	if err != nil {
		return usagef("host facts: --json %s: %v", path, err)
	}
	if err := host.WriteJSON(out, f); err != nil {
		out.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return out.Close()
}

// hostSource is what one set of facts is read for: a process, a sandbox, a
// target, or none of them (this machine alone).
type hostSource struct {
	pid     int
	sandbox string
	datadir string
	url     string
}

// collect reads the facts of the source. A sandbox or target that cannot
// be found or reached is an error; what cannot be read on the host is a
// row that says why.
func (s hostSource) collect(ctx context.Context, env *Env, creds *target.Credentials, what string) (*host.Facts, error) {
	name, _ := os.Hostname()
	opts := host.Options{PID: s.pid, DataDir: s.datadir, Hostname: name, Now: time.Now()}
	subject := host.Subject{Sandbox: s.sandbox}
	url := s.url
	if s.sandbox != "" {
		inst, err := sandbox.Get(sandbox.DefaultHome(env.Getenv), s.sandbox)
		if errors.Is(err, sandbox.ErrNotFound) {
			return nil, usagef("%s: no sandbox %q (see: shakedown sandbox list)", what, s.sandbox)
		}
		if err != nil {
			return nil, err
		}
		if !inst.Running {
			return nil, usagef("%s: sandbox %s is not running (shakedown sandbox start %s)", what, s.sandbox, s.sandbox)
		}
		opts.PID = inst.PID
		if opts.DataDir == "" {
			opts.DataDir = inst.DataDir
		}
		url = inst.URL()
	}
	if url != "" {
		tgt, db, err := creds.ConnectArg(ctx, env.Getenv, what, url, 1)
		if err != nil {
			return nil, err
		}
		defer db.Close()
		opts.SQL = db
		subject.Target = tgt.String()
		ep := tgt.Endpoints()[0]
		if ep.Socket == "" && !isLoopback(ep.Host) {
			opts.Remote = ep.Host
		} else if s.sandbox == "" {
			pid, dir, _ := host.LocalServer(ctx, db)
			if opts.PID == 0 {
				opts.PID = pid
			}
			if opts.DataDir == "" {
				opts.DataDir = dir
			}
		}
	}
	f := host.Collect(ctx, opts)
	subject.PID, subject.DataDir, subject.Remote = f.Subject.PID, f.Subject.DataDir, f.Subject.Remote
	f.Subject = subject
	return f, nil
}

// isLoopback says whether a target host is this machine.
func isLoopback(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
