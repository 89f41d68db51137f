package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/capture"
	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/readiness"
	"github.com/shakedown/shakedown/internal/replay"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/store"
)

// replayCmd is "shakedown replay CAPTURE".
type replayCmd struct {
	withCreds
	control    string
	candidates []string
	opts       replay.Options
	top        int
	out        findings
}

func (c *replayCmd) flags(env *Env) *pflag.FlagSet {
	fs := sbflag.NewFlagSet("replay")
	o := &c.opts
	fs.StringVar(&c.control, "control", "", "the control: [NAME=]mysql://user@host:port/db (required)")
	fs.StringArrayVar(&c.candidates, "candidate", nil, "a candidate, same form as --control (required; repeat for more)")
	fs.Float64Var(&o.Speed, "speed", 0, "1 keeps the captured timing, N runs N times faster, 0 runs as fast as possible")
	fs.IntVar(&o.Concurrency, "concurrency", 0, "at most this many statements at once (0: no cap); every session keeps its connections")
	sbflag.BoolVar(fs, &o.AllowWrites, "allow-writes", false, "also run statements that may write (on every target!)")
	client.BindIO(fs, &o.IO.Mode)
	fs.DurationVar(&o.Timeout, "timeout", time.Minute, "give up on a statement when a target sends nothing for this long (counted as an error)")
	c.out.bindFiles(fs, "report")
	fs.IntVar(&c.top, "top", 20, "fingerprints listed in the text report")
	fs.DurationVar(&o.ProgressInterval, "progress", 5*time.Second, "progress line interval on stderr (0: none)")
	c.out.bindStore(fs, env, "save the result for shakedown readiness, one piece of evidence per candidate,")
	return fs
}

func (c *replayCmd) exec(ctx context.Context, env *Env, fs *pflag.FlagSet) error {
	rest := fs.Args()
	switch {
	case len(rest) != 1:
		return usagef("replay: want one CAPTURE file, got %d argument(s): shakedown replay app.capture --control URL --candidate URL", len(rest))
	case c.control == "":
		return usagef("replay: --control URL is required")
	case len(c.candidates) == 0:
		return usagef("replay: --candidate URL is required (repeat it for more candidates)")
	case c.top < 1:
		return usagef("replay: --top must be >= 1")
	}
	if err := c.opts.Validate(); err != nil {
		return err
	}
	path := rest[0]
	targets, err := replay.ParseTargets(&c.creds, env.Getenv, c.control, c.candidates)
	if err != nil {
		return err
	}
	// Where the results go is checked before anything runs.
	if err := c.out.check(ctx, env); err != nil {
		return err
	}
	f, rd, err := openCapture(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if c.opts.AllowWrites {
		if err := replay.AnnounceWrites(ctx, env.Stderr, path, targets); err != nil {
			return err
		}
	}
	opts := c.opts
	opts.Progress, opts.IO.Tuning = env.Stderr, client.ReadIOTuning(env.Getenv)
	rep, runErr := replay.Run(ctx, rd, targets, opts)
	if rep == nil {
		return runErr
	}
	rep.Capture = path
	if err := replay.WriteText(env.Stdout, rep, c.top); err != nil {
		return err
	}
	err = c.out.keep(ctx, env, func(w io.Writer) error { return replay.WriteJSON(w, rep) },
		func(w io.Writer) error { return replay.WriteHTML(w, rep) },
		func() ([]*store.Evidence, error) { return readiness.ReplayEvidence(rep, Version) })
	if err != nil {
		return err
	}
	switch {
	case errors.Is(runErr, replay.ErrInterrupted):
		return errors.New("replay interrupted: the report above covers the statements that ran")
	case runErr != nil:
		return runErr
	case rep.Differences > 0 || rep.NewErrors > 0:
		return ErrDifferences
	}
	return nil
}

// openCapture opens the capture file to replay; faults are bad input.
func openCapture(path string) (*os.File, *capture.Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, usagef("replay: %v", err)
	}
	rd, err := capture.NewReader(f)
	if err != nil {
		f.Close()
		return nil, nil, usagef("replay: %s: %v", path, err)
	}
	return f, rd, nil
}
