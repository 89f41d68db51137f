package cli

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/helptext"
	"github.com/shakedown/shakedown/internal/host"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/target"
)

// hostDiffCmd is "shakedown host diff".
type hostDiffCmd struct {
	all   bool
	json  bool
	creds target.Credentials
}

func (c *hostDiffCmd) flags() *pflag.FlagSet {
	fs := sbflag.NewFlagSet("host diff")
	fs.BoolVar(&c.all, "all", false, "list every fact: equal ones too, after the differences")
	fs.BoolVar(&c.json, "json", false, "print the comparison as JSON")
	c.creds.Bind(fs)
	return fs
}

func (c *hostDiffCmd) run(ctx context.Context, env *Env, args []string) error {
	fs := c.flags()
	if help, err := parseFlags(env, fs, args, "host diff", helptext.Host); help || err != nil {
		return err
	}
	if fs.NArg() < 2 {
		return usagef("host diff: give at least two hosts, the control first: FILE, pid:PID, sandbox:NAME, a TARGET URL or local")
	}
	srcs := make([]hostSource, fs.NArg())
	files := make([]*host.Facts, fs.NArg())
	for i, a := range fs.Args() {
		src, f, err := parseHostArg(env, &c.creds, a)
		if err != nil {
			return err
		}
		srcs[i], files[i] = src, f
	}
	sets := make([]*host.Facts, len(srcs))
	for i := range srcs {
		if files[i] != nil {
			sets[i] = files[i]
			continue
		}
		f, err := srcs[i].collect(ctx, env, &c.creds, "host diff")
		if err != nil {
			return err
		}
		sets[i] = f
	}
	diffs := host.Compare(sets, c.all)
	var err error
	if c.json {
		err = host.WriteDiffJSON(env.Stdout, sets, diffs)
	} else {
		err = host.WriteDiffText(env.Stdout, sets, diffs)
	}
	if err != nil {
		return err
	}
	for _, d := range diffs {
		if d.Counts() {
			return ErrDifferences
		}
	}
	return nil
}

// parseHostArg reads one argument of host diff: a facts file (read now,
// so that a bad one fails before any server is reached), or what to
// collect.
func parseHostArg(env *Env, creds *target.Credentials, a string) (hostSource, *host.Facts, error) {
	switch {
	case a == "local":
		return hostSource{}, nil, nil
	case strings.HasPrefix(a, "pid:"):
		pid, err := strconv.Atoi(a[4:])
		if err != nil || pid <= 0 {
			return hostSource{}, nil, usagef("host diff: %q: pid:PID needs a process id", a)
		}
		return hostSource{pid: pid}, nil, nil
	case strings.HasPrefix(a, "sandbox:"):
		if a[8:] == "" {
			return hostSource{}, nil, usagef("host diff: %q: sandbox:NAME needs a name", a)
		}
		return hostSource{sandbox: a[8:]}, nil, nil
	case strings.HasPrefix(a, "mysql://"):
		if _, err := creds.ParseArg(env.Getenv, "host diff", a); err != nil {
			return hostSource{}, nil, err
		}
		return hostSource{url: a}, nil, nil
	}
	in, err := os.Open(a)
	if errors.Is(err, fs.ErrNotExist) {
		return hostSource{}, nil, usagef("host diff: %q is no file, pid:PID, sandbox:NAME, TARGET URL or local", target.RedactArg(a))
	}
	if err != nil {
		return hostSource{}, nil, usagef("host diff: %v", err)
	}
	defer in.Close()
	f, err := host.ReadJSON(in, a)
	if err != nil {
		return hostSource{}, nil, usagef("host diff: %v", err)
	}
	return hostSource{}, f, nil
}
