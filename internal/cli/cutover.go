package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/follow"
	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/sbflag"
)

// cutoverCmd is "shakedown cutover SOURCE TARGET".
type cutoverCmd struct {
	withCreds
	f        follow.Flags
	opts     follow.CutoverOptions
	jsonFile string
}

func (c *cutoverCmd) flags(_ *Env) *pflag.FlagSet {
	fs := sbflag.NewFlagSet("cutover")
	o := &c.opts
	fs.BoolVar(&o.AllowSetGlobal, "allow-set-global", false, "set read_only on SOURCE (required; restored at the end of a rehearsal, also on Ctrl-C)")
	fs.BoolVar(&o.Rehearse, "rehearse", true, "a rehearsal: make SOURCE writable again at the end (--rehearse=false leaves it read-only, the real switch)")
	fs.BoolVar(&o.KeepReadOnly, "keep-read-only", false, "leave SOURCE read-only at the end")
	fs.BoolVar(&o.KillWriters, "kill-writers", false, "once SOURCE is read-only, end its sessions with an open transaction that has written")
	fs.DurationVar(&o.MaxLag, "max-lag", time.Second, "the follower's lag must be under this before SOURCE is made read-only")
	fs.DurationVar(&o.LagWait, "lag-wait", 5*time.Minute, "how long to wait for the lag, and then for the final position, before giving up")
	fs.StringVar(&o.Verify, "verify", follow.VerifyFull, "full: verify the followed databases while SOURCE is read-only; none: skip it")
	fs.StringVar(&c.jsonFile, "json", "", "write the timeline as JSON to FILE (- for standard output)")
	fs.StringSliceVar(&c.f.Databases, "databases", nil, "the followed databases, by the same names on TARGET (default: SOURCE's database into TARGET's)")
	fs.IntVar(&c.f.Workers, "workers", 4, "the connections of the follower this command runs when none is at work")
	return fs
}

func (c *cutoverCmd) exec(ctx context.Context, env *Env, fs *pflag.FlagSet) error {
	c.f.AllowWrite = true // the follower writes only the changes the source made
	src, dst, err := sides(env, &c.creds, "cutover", fs.Args(), func() error {
		fo, err := c.f.Resolve("cutover")
		c.opts.Follow = fo
		if err == nil {
			err = c.opts.Validate()
		}
		if err == nil {
			err = outfile.Check(outfile.File{Flag: "--json", Path: c.jsonFile})
		}
		return err
	})
	if err != nil {
		return err
	}
	c.opts.Log = env.Stderr
	res, err := follow.Cutover(ctx, src, dst, c.opts)
	if res != nil && c.jsonFile != "-" {
		fmt.Fprint(env.Stdout, res.Text())
	}
	if res != nil && c.jsonFile != "" {
		b, jerr := json.MarshalIndent(res, "", "  ")
		if jerr == nil {
			jerr = outfile.Write(env.Stdout, outfile.File{Flag: "--json", Path: c.jsonFile}, append(b, '\n'))
		}
		err = errors.Join(err, jerr)
	}
	switch {
	case errors.Is(err, follow.ErrNoPosition):
		return usagef("cutover: %v", err)
	case err != nil:
		return fmt.Errorf("cutover: %w", err)
	case res.Verified && !res.Equal, res.WrittenAfter != nil:
		return ErrDifferences
	}
	return nil
}
