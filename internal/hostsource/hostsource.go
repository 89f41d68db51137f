// Package hostsource reads host facts for what host facts and host diff
// name: a server process, a sandbox, a target (its server-side rows, and
// its process and datadir when it runs on this machine), a facts file
// written earlier, or this machine alone. It finds the process and the
// connection; package host reads the facts.
package hostsource

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/host"
	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/usage"
)

// Source is what one set of facts is read for: a process, a sandbox, a
// target, or none of them (this machine alone).
type Source struct {
	PID     int
	Sandbox string
	DataDir string
	URL     string
}

// Collect reads the facts of the source. A sandbox or target that cannot
// be found or reached is an error; what cannot be read on the host is a
// row that says why. what names the command in messages.
func (s Source) Collect(ctx context.Context, getenv func(string) string, creds *target.Credentials, what string) (*host.Facts, error) {
	name, _ := os.Hostname()
	opts := host.Options{PID: s.PID, DataDir: s.DataDir, Hostname: name, Now: time.Now()}
	subject := host.Subject{Sandbox: s.Sandbox}
	url := s.URL
	if s.Sandbox != "" {
		inst, err := sandbox.Get(sandbox.DefaultHome(getenv), s.Sandbox)
		if errors.Is(err, sandbox.ErrNotFound) {
			return nil, usage.Errorf("%s: no sandbox %q (see: shakedown sandbox list)", what, s.Sandbox)
		}
		if err != nil {
			return nil, err
		}
		if !inst.Running {
			return nil, usage.Errorf("%s: sandbox %s is not running (shakedown sandbox start %s)", what, s.Sandbox, s.Sandbox)
		}
		opts.PID = inst.PID
		if opts.DataDir == "" {
			opts.DataDir = inst.DataDir
		}
		url = inst.URL()
	}
	if url != "" {
		tgt, db, err := creds.ConnectArg(ctx, getenv, what, url, 1)
		if err != nil {
			return nil, err
		}
		defer db.Close()
		opts.SQL = db
		subject.Target = tgt.String()
		ep := tgt.Endpoints()[0]
		if ep.Socket == "" && !isLoopback(ep.Host) {
			opts.Remote = ep.Host
		} else if s.Sandbox == "" {
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

// ParseDiffArg reads one argument of host diff: a facts file (read now,
// so that a bad one fails before any server is reached), or what to
// collect.
func ParseDiffArg(getenv func(string) string, creds *target.Credentials, a string) (Source, *host.Facts, error) {
	switch {
	case a == "local":
		return Source{}, nil, nil
	case strings.HasPrefix(a, "pid:"):
		pid, err := strconv.Atoi(a[4:])
		if err != nil || pid <= 0 {
			return Source{}, nil, usage.Errorf("host diff: %q: pid:PID needs a process id", a)
		}
		return Source{PID: pid}, nil, nil
	case strings.HasPrefix(a, "sandbox:"):
		if a[8:] == "" {
			return Source{}, nil, usage.Errorf("host diff: %q: sandbox:NAME needs a name", a)
		}
		return Source{Sandbox: a[8:]}, nil, nil
	case strings.HasPrefix(a, "mysql://"):
		if _, err := creds.ParseArg(getenv, "host diff", a); err != nil {
			return Source{}, nil, err
		}
		return Source{URL: a}, nil, nil
	}
	in, err := os.Open(a)
	if errors.Is(err, fs.ErrNotExist) {
		return Source{}, nil, usage.Errorf("host diff: %q is no file, pid:PID, sandbox:NAME, TARGET URL or local", target.RedactArg(a))
	}
	if err != nil {
		return Source{}, nil, usage.Errorf("host diff: %v", err)
	}
	defer in.Close()
	f, err := host.ReadJSON(in, a)
	if err != nil {
		return Source{}, nil, usage.Errorf("host diff: %v", err)
	}
	return Source{}, f, nil
}

// WriteFile writes the facts' JSON document to a file, for host diff on
// another machine.
func WriteFile(path string, f *host.Facts) error {
	if err := outfile.Create(path, func(w io.Writer) error { return host.WriteJSON(w, f) }); err != nil {
		return fmt.Errorf("host facts: --json: %w", err)
	}
	return nil
}

// Check says, as bad usage, what in a host facts source cannot go
// together: a negative --pid, --pid with --sandbox, --sandbox with a
// TARGET.
func (s Source) Check() error {
	switch {
	case s.PID < 0:
		return usage.Errorf("host facts: --pid must be a process id, got %d", s.PID)
	case s.PID > 0 && s.Sandbox != "":
		return usage.Errorf("host facts: give --pid or --sandbox, not both")
	case s.Sandbox != "" && s.URL != "":
		return usage.Errorf("host facts: give --sandbox or a TARGET, not both (a sandbox's variables are read from it)")
	}
	return nil
}

// Known counts the facts of f that could be read.
func Known(f *host.Facts) int {
	known := 0
	for _, x := range f.Facts {
		if x.Known() {
			known++
		}
	}
	return known
}

// CollectAll reads the facts of every host diff argument, in order: facts
// files are all read, and every other argument checked, before the first
// server or process is reached.
func CollectAll(ctx context.Context, getenv func(string) string, creds *target.Credentials, args []string) ([]*host.Facts, error) {
	srcs := make([]Source, len(args))
	sets := make([]*host.Facts, len(args))
	for i, a := range args {
		src, f, err := ParseDiffArg(getenv, creds, a)
		if err != nil {
			return nil, err
		}
		srcs[i], sets[i] = src, f
	}
	for i := range srcs {
		if sets[i] != nil {
			continue
		}
		f, err := srcs[i].Collect(ctx, getenv, creds, "host diff")
		if err != nil {
			return nil, err
		}
		sets[i] = f
	}
	return sets, nil
}
