package cli

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/mirror"
	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/progress"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/store"
)

// mirrorCmd is "shakedown mirror".
type mirrorCmd struct {
	withCreds
	control    string
	candidates []string
	accounts   string
	jsonPath   string
	storePath  string
	tlsCert    string
	tlsKey     string
	every      time.Duration
	rotate     bool
	opts       mirror.Options
}

func (c *mirrorCmd) flags(_ *Env) *pflag.FlagSet {
	fs := sbflag.NewFlagSet("mirror")
	o := &c.opts
	fs.StringVar(&o.Listen, "listen", "127.0.0.1:3307", "the address clients connect to (loopback only unless --tls-cert or --insecure-listen)")
	fs.StringVar(&c.control, "control", "", "the control, which serves every client: mysql://user@host:port/db (required)")
	fs.StringArrayVar(&c.candidates, "candidate", nil, "a candidate the reads are mirrored to: NAME=URL (required; repeat for more)")
	fs.StringVar(&c.accounts, "accounts", "", "the accounts clients log in with, one user:password a line (default: the control URL's user and password)")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "serve clients TLS with this certificate (PEM, with its chain); with a --listen beyond this host every client must use it")
	fs.StringVar(&c.tlsKey, "tls-key", "", "the private key of --tls-cert (PEM)")
	sbflag.BoolVar(fs, &o.InsecureListen, "insecure-listen", false, "allow a --listen address beyond this host, without TLS")
	sbflag.BoolVar(fs, &o.KeepLiterals, "keep-literals", false, "show the statements of differences with their literals (default: as ?)")
	sbflag.BoolVar(fs, &o.Writes, "writes", false, "mirror the writes too, and their transactions, compared by affected rows and errors: this CHANGES the candidates (throwaway copies that follow does not feed)")
	fs.IntVar(&o.Queue, "queue", 64, "mirrored statements a session may hold per candidate; past it they are dropped and counted")
	fs.DurationVar(&o.Timeout, "timeout", 10*time.Second, "give up on a candidate's statement when it sends nothing for this long")
	fs.StringVar(&o.HTTP, "http", "", "serve a live page and /metrics (Prometheus) on this address, e.g. 127.0.0.1:9104 (loopback only unless --insecure-listen)")
	fs.StringVar(&c.storePath, "store", "", "store each snapshot period's figures in FILE (shakedown report --mirror ID; readiness)")
	fs.DurationVar(&o.Snapshot, "snapshot", 10*time.Minute, "the snapshot period (a new one at each SIGHUP too)")
	fs.StringVar(&c.jsonPath, "json", "", "write the summary as JSON to FILE at the end")
	fs.DurationVar(&c.every, "progress", time.Second, "progress line interval on stderr")
	sbflag.BoolVar(fs, &c.rotate, "rotate", false, "end the snapshot period under way of the mirror whose live page is on --http (as SIGHUP does) and exit")
	return fs
}

// rotateRunning is mirror --rotate: the running mirror whose page is on
// --http ends its period under way, and the period is printed.
func (c *mirrorCmd) rotateRunning(ctx context.Context, env *Env, fs *pflag.FlagSet) error {
	if c.opts.HTTP == "" {
		return usagef("mirror --rotate: name the running mirror's live page with --http HOST:PORT")
	}
	var others []string
	fs.Visit(func(f *pflag.Flag) {
		if f.Name != "rotate" && f.Name != "http" {
			others = append(others, "--"+f.Name)
		}
	})
	if len(others) > 0 || fs.NArg() > 0 {
		return usagef("mirror --rotate takes --http only, got %s: it asks a running mirror, which has its options", strings.Join(append(others, fs.Args()...), " "))
	}
	r, err := mirror.RequestRotate(ctx, c.opts.HTTP)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "mirror on %s: period %d ended (%s to %s: %d statements through, %d differing); the next one has begun\n",
		c.opts.HTTP, r.Period, r.Start.Format(time.DateTime), r.End.Format(time.DateTime), r.Statements, r.Differing)
	return nil
}

func (c *mirrorCmd) exec(ctx context.Context, env *Env, fs *pflag.FlagSet) error {
	if c.rotate {
		return c.rotateRunning(ctx, env, fs)
	}
	if fs.NArg() > 0 {
		return usagef("mirror: takes no arguments, got %q: name the servers with --control and --candidate", fs.Args())
	}
	if c.opts.Queue < 1 {
		return usagef("mirror: --queue must be >= 1")
	}
	var err error
	if c.opts.TLS, err = mirror.LoadTLS(c.tlsCert, c.tlsKey); err != nil {
		return err
	}
	if c.opts.Control, c.opts.Candidates, err = mirror.ParseTargets(&c.creds, env.Getenv, c.control, c.candidates); err != nil {
		return err
	}
	if c.accounts != "" {
		if c.opts.Accounts, err = mirror.ReadAccounts(c.accounts); err != nil {
			return err
		}
	}
	jsonOut := outfile.File{Flag: "--json", Path: c.jsonPath}
	if err := outfile.Check(jsonOut); err != nil {
		return err
	}
	out := mirror.Output{Stderr: env.Stderr, StderrLive: progress.IsTerminal(env.Stderr), Every: c.every}
	if env.Notify != nil {
		hup, stop := env.Notify(syscall.SIGHUP)
		defer stop()
		out.Rotate = hup
	}
	if c.storePath != "" {
		st, err := store.OpenFlag(ctx, env.Getenv, "--store", c.storePath)
		if err != nil {
			return err
		}
		defer st.Close()
		rec := mirror.NewRecorder(st, c.opts, "shakedown "+Version)
		// A canary goes on when its store fails once: the error is said.
		out.OnPeriod = func(p mirror.Period) {
			if err := rec.Record(ctx, p); err != nil {
				fmt.Fprintf(env.Stderr, "mirror: --store %s: %v\n", store.Display(c.storePath), err)
			}
		}
		defer func() {
			fmt.Fprintf(env.Stdout, "stored in %s as mirror run %d (shakedown report --mirror %d)\n", store.Display(c.storePath), rec.ID(), rec.ID())
		}()
	}
	sum, runErr := mirror.Run(ctx, c.opts, out)
	if sum == nil {
		return runErr
	}
	if err := mirror.WriteText(env.Stdout, sum); err != nil {
		return err
	}
	if c.jsonPath != "" {
		var b bytes.Buffer
		if err := mirror.WriteJSON(&b, sum); err != nil {
			return err
		}
		if err := outfile.Write(env.Stdout, jsonOut, b.Bytes()); err != nil {
			return err
		}
	}
	if runErr != nil {
		return runErr
	}
	if sum.Differing > 0 {
		return ErrDifferences
	}
	return nil
}
