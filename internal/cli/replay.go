package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/capture"
	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/helptext"
	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/readiness"
	"github.com/shakedown/shakedown/internal/replay"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/target"
)

// replayCmd is "shakedown replay CAPTURE".
type replayCmd struct {
	control     string
	candidates  []string
	speed       float64
	concurrency int
	allowWrites bool
	timeout     time.Duration
	jsonFile    string
	htmlFile    string
	top         int
	progress    time.Duration
	storePath   string
	clientIO    string
	creds       target.Credentials
}

func (c *replayCmd) flags(env *Env) *pflag.FlagSet {
	fs := sbflag.NewFlagSet("replay")
	fs.StringVar(&c.control, "control", "", "the control: [NAME=]mysql://user@host:port/db (required)")
	fs.StringArrayVar(&c.candidates, "candidate", nil, "a candidate, same form as --control (required; repeat for more)")
	fs.Float64Var(&c.speed, "speed", 0, "1 keeps the captured timing, N runs N times faster, 0 runs as fast as possible")
	fs.IntVar(&c.concurrency, "concurrency", 0, "at most this many statements at once (0: no cap); every session keeps its connections")
	sbflag.BoolVar(fs, &c.allowWrites, "allow-writes", false, "also run statements that may write (on every target!)")
	fs.StringVar(&c.clientIO, "client-io", "auto", "how sessions wait for the targets: loop, blocking, polled or auto (loop), as for run")
	fs.DurationVar(&c.timeout, "timeout", time.Minute, "give up on a statement when a target sends nothing for this long (counted as an error)")
	fs.StringVar(&c.jsonFile, "json", "", "write the report as JSON to FILE")
	fs.StringVar(&c.htmlFile, "html", "", "write the report as a self-contained HTML page to FILE")
	fs.IntVar(&c.top, "top", 20, "fingerprints listed in the text report")
	fs.DurationVar(&c.progress, "progress", 5*time.Second, "progress line interval on stderr (0: none)")
	fs.StringVar(&c.storePath, "store", "", store.FlagUsage(env.Getenv, "save the result for shakedown readiness, one piece of evidence per candidate,"))
	c.creds.Bind(fs)
	return fs
}

func (c *replayCmd) run(ctx context.Context, env *Env, args []string) error {
	fs := c.flags(env)
	if help, err := parseFlags(env, fs, args, "replay", helptext.Replay); help || err != nil {
		return err
	}
	rest := fs.Args()
	if err := c.validate(rest); err != nil {
		return err
	}
	path := rest[0]
	targets, err := c.targets(env)
	if err != nil {
		return err
	}

	// Where the results go is checked before anything runs.
	if err := outfile.Check(outfile.File{Flag: "--json", Path: c.jsonFile}, outfile.File{Flag: "--html", Path: c.htmlFile}); err != nil {
		return err
	}
	var st *store.Store
	if c.storePath != "" {
		if st, err = store.OpenFlag(ctx, nil, "--store", c.storePath); err != nil {
			return err
		}
		defer st.Close()
	}

	f, rd, err := openCapture(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if c.allowWrites {
		if err := replay.AnnounceWrites(ctx, env.Stderr, path, targets); err != nil {
			return err
		}
	}
	opts := replay.Options{
		Speed: c.speed, Concurrency: c.concurrency, AllowWrites: c.allowWrites, Timeout: c.timeout,
		Progress: env.Stderr, ProgressInterval: c.progress, ClientIO: c.clientIO,
	}
	rep, runErr := replay.Run(ctx, rd, targets, opts)
	if rep == nil {
		return runErr
	}
	rep.Capture = path
	if err := replay.WriteText(env.Stdout, rep, c.top); err != nil {
		return err
	}
	if err := c.keep(ctx, env, st, rep); err != nil {
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

// urlNamesDB reports whether a mysql:// URL has a database path.
func urlNamesDB(raw string) bool {
	rest := strings.TrimPrefix(raw, "mysql://")
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		rest = rest[:i]
	}
	i := strings.IndexByte(rest, '/')
	return i >= 0 && i < len(rest)-1
}

// storeReplay saves the replay as evidence for readiness pages.
func storeReplay(ctx context.Context, st *store.Store, rep *replay.Report) error {
	ctx = context.WithoutCancel(ctx) // an interrupted replay is saved too
	evs, err := readiness.ReplayEvidence(rep, Version)
	if err != nil {
		return err
	}
	for _, ev := range evs {
		if _, err := st.AddEvidence(ctx, ev); err != nil {
			return err
		}
	}
	return nil
}

// validate checks the arguments and the flags' values.
func (c *replayCmd) validate(rest []string) error {
	switch {
	case len(rest) != 1:
		return usagef("replay: want one CAPTURE file, got %d argument(s): shakedown replay app.capture --control URL --candidate URL", len(rest))
	case c.control == "":
		return usagef("replay: --control URL is required")
	case len(c.candidates) == 0:
		return usagef("replay: --candidate URL is required (repeat it for more candidates)")
	case c.speed < 0:
		return usagef("replay: --speed must be >= 0 (0: as fast as possible)")
	case c.concurrency < 0:
		return usagef("replay: --concurrency must be >= 0")
	case c.timeout <= 0:
		return usagef("replay: --timeout must be > 0")
	case client.CheckIO(c.clientIO) != nil:
		return usagef("replay: %v", client.CheckIO(c.clientIO))
	case c.top < 1:
		return usagef("replay: --top must be >= 1")
	case c.progress < 0:
		return usagef("replay: --progress must be >= 0")
	}
	return nil
}

// targets are the control and the candidates, named.
func (c *replayCmd) targets(env *Env) ([]replay.Target, error) {
	targets := make([]replay.Target, 0, 1+len(c.candidates))
	for i, raw := range append([]string{c.control}, c.candidates...) {
		what, name := "--control", "control"
		if i > 0 {
			what, name = "--candidate", "candidate"
			if len(c.candidates) > 1 {
				name = fmt.Sprintf("candidate%d", i)
			}
		}
		if n, u, ok := strings.Cut(raw, "="); ok && !strings.Contains(n, "://") {
			name, raw = n, u
		}
		if !strings.HasPrefix(raw, "mysql://") {
			return nil, usagef("replay: %s must be a URL mysql://user@host:port/db (optionally NAME=URL)", what)
		}
		t, err := c.creds.ParseArg(env.Getenv, "replay: "+what, raw)
		if err != nil {
			return nil, err
		}
		t.Name = name
		targets = append(targets, replay.Target{Name: name, Target: t, FixedDB: urlNamesDB(raw)})
	}
	seen := map[string]bool{}
	for _, t := range targets {
		if seen[t.Name] {
			return nil, usagef("replay: two targets are named %q: name them NAME=URL", t.Name)
		}
		seen[t.Name] = true
	}
	return targets, nil
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

// keep writes the report to the files and the store the flags name.
func (c *replayCmd) keep(ctx context.Context, env *Env, st *store.Store, rep *replay.Report) error {
	if c.jsonFile != "" {
		if err := outfile.Create(c.jsonFile, func(w io.Writer) error { return replay.WriteJSON(w, rep) }); err != nil {
			return err
		}
	}
	if c.htmlFile != "" {
		if err := outfile.Create(c.htmlFile, func(w io.Writer) error { return replay.WriteHTML(w, rep) }); err != nil {
			return err
		}
	}
	if st != nil {
		if err := storeReplay(ctx, st, rep); err != nil {
			return fmt.Errorf("--store %s: %w", store.Display(c.storePath), err)
		}
		fmt.Fprintf(env.Stdout, "stored in %s (shakedown readiness)\n", store.Display(c.storePath))
	}
	return nil
}
