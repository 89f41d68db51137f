package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/report"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/store"
)

const reportUsage = `usage: shakedown report [--store FILE] [--sweep ID|latest] [--format text|md|csv|json|html] [-o FILE]
       shakedown report --list [--store FILE]

Shows a stored sweep: for each workload a table per target, every candidate
against the control at each thread level with the ratio and a verdict
(faster, slower, or within noise, judged from the spread of repeats), the
peak QPS, and the environment of each target. It reads the store and never
runs anything. The HTML report is one file that opens offline, with charts.

Options:
`

// reportCmd is "shakedown report".
type reportCmd struct {
	storePath string
	sweep     string
	format    string
	out       string
	list      bool
	help      bool
}

func (c *reportCmd) flags(env *Env) *pflag.FlagSet {
	fs := sbflag.NewFlagSet("report")
	fs.StringVar(&c.storePath, "store", store.DefaultPath(env.Getenv), "results store (SQLite file)")
	fs.StringVar(&c.sweep, "sweep", "latest", "sweep to report: its ID, or latest")
	fs.StringVar(&c.format, "format", "text", "text, md, csv, json or html; with -o and no --format, taken from the file's extension")
	fs.StringVarP(&c.out, "output", "o", "", "write to FILE instead of standard output")
	fs.BoolVar(&c.list, "list", false, "list the sweeps in the store")
	fs.BoolVarP(&c.help, "help", "h", false, "show this help")
	return fs
}

var formatByExt = map[string]string{".txt": "text", ".md": "md", ".csv": "csv", ".json": "json", ".html": "html", ".htm": "html"}

func (c *reportCmd) run(ctx context.Context, env *Env, args []string) error {
	fset := c.flags(env)
	if err := fset.Parse(args); err != nil {
		return usagef("report: %v (see shakedown report --help)", err)
	}
	if c.help {
		fmt.Fprint(env.Stdout, reportUsage)
		fmt.Fprint(env.Stdout, fset.FlagUsages())
		return nil
	}
	if fset.NArg() > 0 {
		return usagef("report: unexpected argument %q (see shakedown report --help)", fset.Arg(0))
	}
	if !fset.Changed("format") && c.out != "" {
		if f, ok := formatByExt[strings.ToLower(filepath.Ext(c.out))]; ok {
			c.format = f
		}
	}
	if !oneOf(report.Formats, c.format) {
		return usagef("report: --format %q: want one of %s", c.format, strings.Join(report.Formats, ", "))
	}
	var id int64
	if c.sweep != "latest" {
		n, err := strconv.ParseInt(c.sweep, 10, 64)
		if err != nil || n < 1 {
			return usagef("report: --sweep %q: want a sweep ID (see --list) or latest", c.sweep)
		}
		id = n
	}
	if _, err := os.Stat(c.storePath); errors.Is(err, fs.ErrNotExist) {
		return usagef("report: no store at %s: run a sweep first, or name the store with --store", c.storePath)
	}
	st, err := store.Open(ctx, c.storePath)
	if err != nil {
		return err
	}
	defer st.Close()
	if c.list {
		return c.listSweeps(ctx, env, st)
	}
	if id == 0 {
		if id, err = st.Latest(ctx); err != nil {
			if errors.Is(err, store.ErrNoSweeps) {
				return usagef("report: %s holds no sweeps yet: run shakedown sweep PLAN.yaml --store %s", c.storePath, c.storePath)
			}
			return err
		}
	}
	d, err := st.Load(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return usagef("report: no sweep %d in %s (see shakedown report --list)", id, c.storePath)
	}
	if err != nil {
		return err
	}
	rep := report.Build(d)
	if c.out == "" {
		return report.Write(env.Stdout, c.format, rep)
	}
	var b bytes.Buffer
	if err := report.Write(&b, c.format, rep); err != nil {
		return err
	}
	if err := writeFileAtomic(c.out, b.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "report of sweep %d written to %s\n", id, c.out)
	return nil
}

func (c *reportCmd) listSweeps(ctx context.Context, env *Env, st *store.Store) error {
	sweeps, err := st.Sweeps(ctx)
	if err != nil {
		return err
	}
	if len(sweeps) == 0 {
		fmt.Fprintf(env.Stdout, "no sweeps in %s\n", c.storePath)
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSTATUS\tSTARTED\tSTEPS\tWORKLOADS")
	for _, s := range sweeps {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\n", s.ID, s.Name, s.Status, s.StartedAt.Local().Format("2006-01-02 15:04"), s.Steps,
			strings.Join(s.Settings.Workloads, ","))
	}
	return tw.Flush()
}

// writeFileAtomic writes data to path through a temporary file, so that a
// failed write leaves no half file.
func writeFileAtomic(path string, data []byte) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func oneOf(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
