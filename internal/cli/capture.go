package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/capture"
	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/sbflag"
)

// captureCmd is "shakedown capture SOURCE...".
type captureCmd struct {
	withCreds
	output     string
	format     string
	port       int
	summary    bool
	top        int
	toWorkload string
	readsOnly  bool
}

func (c *captureCmd) flags(_ *Env) *pflag.FlagSet {
	fs := sbflag.NewFlagSet("capture")
	fs.StringVarP(&c.output, "output", "o", "", "write the capture file to FILE")
	fs.StringVar(&c.format, "format", "", "read every SOURCE as this format: slow, general, pcap or tcpdump-text (default: detected)")
	fs.IntVar(&c.port, "port", capture.DefaultPort, "the MySQL server's TCP port in a pcap or tcpdump text")
	sbflag.BoolVar(fs, &c.summary, "summary", false, "print the top fingerprints by total time and by count, as pt-query-digest does")
	fs.IntVar(&c.top, "top", 10, "fingerprints listed by --summary")
	fs.StringVar(&c.toWorkload, "to-workload", "", "write a weighted statement file for the sql workload to FILE (values in FILE.values/)")
	sbflag.BoolVar(fs, &c.readsOnly, "reads-only", false, "with --to-workload: read-only statements only")
	return fs
}

func (c *captureCmd) exec(ctx context.Context, env *Env, fs *pflag.FlagSet) error {
	srcArgs := fs.Args()
	if err := c.validate(srcArgs); err != nil {
		return err
	}
	// Where the results go is checked before anything is read: an output
	// that cannot be written is the tool's failure (exit 1), as in every
	// command.
	if err := outfile.Check(outfile.File{Flag: "-o", Path: c.output}, outfile.File{Flag: "--to-workload", Path: c.toWorkload}); err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	var sources []capture.Source
	var names []string
	for _, a := range srcArgs {
		src, closeFn, err := c.openSource(ctx, env, a)
		if err != nil {
			return err
		}
		defer closeFn()
		sources = append(sources, src)
		names = append(names, src.Name)
	}

	m, runErr := capture.MakeFile(ctx, sources, names, c.output, c.toWorkload != "", c.readsOnly, env.Stderr)
	if m == nil {
		return runErr
	}
	st, empty, wl := m.Stats, m.Empty, m.Workload
	if c.summary {
		if err := capture.WriteSummary(env.Stdout, m.Summary, &st, c.top); err != nil {
			return err
		}
	}
	if wl != nil && runErr == nil {
		if err := c.writeWorkload(env, wl, names); err != nil {
			return err
		}
	}
	capture.WriteNotes(env.Stderr, &st)
	if c.output != "" {
		fmt.Fprintf(env.Stderr, "capture: %d statements in %d sessions written to %s\n", st.Statements, st.Sessions, c.output)
	}
	if st.Packets.Packets > 0 && runErr == nil {
		fmt.Fprintf(env.Stderr, "capture: %s\n", &st.Packets)
	}
	if errors.Is(runErr, context.Canceled) {
		return errors.New("capture interrupted: what was read before is written")
	}
	if runErr == nil && len(empty) > 0 {
		return usagef("capture: %s", strings.Join(empty, "; "))
	}
	return runErr
}

// openSource opens one SOURCE argument and finds its format. A capture
// file is read back as a source of its own records.
func (c *captureCmd) openSource(ctx context.Context, env *Env, arg string) (capture.Source, func(), error) {
	nop := func() {}
	if strings.HasPrefix(arg, "mysql://") {
		t, err := c.creds.ParseArg(env.Getenv, "capture: SOURCE", arg)
		if err != nil {
			return capture.Source{}, nop, err
		}
		db, err := t.Connect(ctx, 1)
		if err != nil {
			return capture.Source{}, nop, fmt.Errorf("capture: %w", err)
		}
		src, closeFn, err := capture.GeneralLogSource(ctx, db, t.Redacted())
		if err != nil {
			return capture.Source{}, nop, err
		}
		return src, closeFn, nil
	}
	return capture.OpenFile(arg, c.format, c.port)
}

// validate checks the arguments and flags before anything is opened.
func (c *captureCmd) validate(srcArgs []string) error {
	switch {
	case len(srcArgs) == 0:
		return usagef("capture: name at least one SOURCE: a slow log, a general log, a pcap, or mysql://.../mysql for the general_log table")
	case c.output == "" && !c.summary && c.toWorkload == "":
		return usagef("capture: say what to make: -o CAPTURE, --summary or --to-workload FILE")
	case c.format != "" && c.format != "slow" && c.format != "general" && c.format != "pcap" && c.format != "tcpdump-text":
		return usagef("capture: --format %q: read formats are %s", c.format, strings.Join(capture.Formats, ", "))
	case c.port < 1 || c.port > 65535:
		return usagef("capture: --port must be 1-65535")
	case c.top < 1:
		return usagef("capture: --top must be >= 1")
	case c.readsOnly && c.toWorkload == "":
		return usagef("capture: --reads-only goes with --to-workload")
	}
	return nil
}

// writeWorkload writes the workload --to-workload names.
func (c *captureCmd) writeWorkload(env *Env, wl *capture.WorkloadBuilder, names []string) error {
	n, err := wl.Write(c.toWorkload, strings.Join(names, ", "))
	switch {
	case errors.Is(err, capture.ErrNoWorkload):
		return usagef("capture: %v", err)
	case err != nil:
		return fmt.Errorf("capture: %w", err)
	}
	fmt.Fprintf(env.Stderr, "capture: workload of %d statements written to %s (values in %s.values/); run it with: shakedown run sql --file %s --target URL\n", n, c.toWorkload, c.toWorkload, c.toWorkload)
	return nil
}
