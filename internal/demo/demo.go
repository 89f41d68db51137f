// Package demo is "shakedown demo"'s workflow: two local sandboxes that
// differ in one respect, a sweep of them, the report, a rehearsal of
// moving a small application from one to the other (shakedown rehearse,
// ending on a readiness page), and the sandboxes gone at the end, however
// it ends.
package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/flavour"
	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/report"
	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/segment"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/sweep"
	"github.com/shakedown/shakedown/internal/usage"
)

// Target is one of the demo's two sandboxes: the control first.
type Target struct {
	Name, Role string
	// Set is what the demo prints as the difference: server settings, or
	// the placement's sandbox options.
	Set   []string
	Place sandbox.Placement
	// Flavour is the server the sandbox runs: "" for the one on PATH (or
	// Options.Basedir), TiDB, or Vitess (over the server on PATH, set as
	// the control is).
	Flavour flavour.Name
}

// Options are what the demo runs and where it writes.
type Options struct {
	Dir        string // absolute: the report, the store, the plan and the sandboxes
	Basedir    string // server to run; "" finds one
	Placement  bool   // compare CPU placement rather than durability
	TimeS      int
	MaxRepeats int
	Threads    []int
	Targets    []Target
	// Port is where the sandboxes listen: the control on Port, the
	// candidate on the next; 0 picks free ports.
	Port int

	Out, Progress io.Writer // the story and the sweep's progress
	Live          bool      // Progress is a terminal
	Getenv        func(string) string
	Version       string
}

// common are settings both sandboxes share: the binary log on, and
// sizes that suit a small demo on a small machine.
var common = []string{"log_bin=ON", "innodb_buffer_pool_size=256M", "innodb_log_file_size=128M", "max_connections=500"}

// mariaDB is added for MariaDB: its thread pool, which runs about one
// statement per core at a time. Without it, 64 threads on a small machine
// measure InnoDB's lock contention more than durability: on 2 cores the
// durable server, its threads parked in fsync, often kept pace with the
// relaxed one or beat it, while with the pool the relaxed one was 1.4x
// faster at 64 threads as at 16.
var mariaDB = []string{"thread_handling=pool-of-threads"}

// Validate checks the options a user gives, as bad usage.
func (o Options) Validate() error {
	switch {
	case o.TimeS < 1:
		return usage.Errorf("demo: --time must be >= 1")
	case o.MaxRepeats < 3:
		return usage.Errorf("demo: --max-repeats must be >= 3")
	case len(o.Threads) == 0:
		return usage.Errorf("demo: --threads needs at least one level")
	}
	for _, t := range o.Threads {
		if t < 1 {
			return usage.Errorf("demo: --threads: %d: want levels >= 1", t)
		}
	}
	return nil
}

// Run starts the sandboxes, sweeps them, writes the report and stops them.
func Run(ctx context.Context, o Options) error {
	if last := o.Port + len(o.Targets) - 1; o.Port < 0 || o.Port > 0 && last > 65535 {
		return usage.Errorf("demo: --port %d: want 1-%d (the control listens on it, the candidate on the next), or 0 for free ports", o.Port, 65536-len(o.Targets))
	}
	start := time.Now()
	home := filepath.Join(o.Dir, "sandboxes")
	insts, err := startSandboxes(ctx, o, home)
	// The sandboxes go, however the demo ends: error, Ctrl-C or success.
	defer stopSandboxes(ctx, o, home)
	if err != nil {
		return err
	}
	planPath := filepath.Join(o.Dir, "plan.yaml")
	src := PlanText(insts, o)
	if err := outfile.WriteAtomic(planPath, src); err != nil {
		return fmt.Errorf("write demo plan: %w", err)
	}
	p, err := sweep.ParsePlan(planPath, src, o.Getenv)
	if err != nil {
		return fmt.Errorf("demo plan: %w", err)
	}
	envs, err := sweep.Preflight(ctx, io.Discard, p, segment.Split{}, false)
	if err != nil {
		return err
	}
	st, err := store.Open(ctx, filepath.Join(o.Dir, "shakedown.db"))
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintf(o.Out, "sweeping %s at %s threads, %d s steps: %d steps (3 repeats), then more where a verdict is still inconclusive, up to %d repeats\n",
		strings.Join(workloadNames(p), ", "), joinInts(o.Threads), o.TimeS, len(p.Steps()), o.MaxRepeats)
	host, _ := os.Hostname()
	throttledBefore := throttling(insts)
	sum, runErr := sweep.Run(ctx, p, envs, sweep.Options{
		Store: st, Progress: o.Progress, Live: o.Live, Host: host, Version: o.Version,
	})
	if sum != nil && sum.SweepID != 0 {
		if err := writeReport(ctx, o, st, sum.SweepID); err != nil {
			return err
		}
		writeThrottling(o.Out, insts, throttledBefore)
		fmt.Fprintf(o.Out, "\nreport:  %s\nstore:   %s (sweep %d)\nplan:    %s\n",
			filepath.Join(o.Dir, "report.html"), st.Path(), sum.SweepID, planPath)
	}
	switch {
	case errors.Is(runErr, sweep.ErrInterrupted):
		return fmt.Errorf("demo interrupted: the report covers the %d of %d steps that finished", sum.OK+sum.Failed, sum.Steps)
	case runErr != nil:
		return runErr
	case sum.Failed > 0:
		return fmt.Errorf("demo: %d of %d steps failed; the report lists them", sum.Failed, sum.Steps)
	}
	if !o.Placement {
		// The second half: a migration rehearsed from the control to the
		// candidate, ending on a page that says why it is not ready.
		_, err := Rehearse(ctx, RehearseOptions{Dir: filepath.Join(o.Dir, "rehearsal"), Source: insts[0], Candidate: insts[1],
			Out: o.Out, Progress: o.Progress, Live: o.Live, Getenv: o.Getenv, Version: o.Version, Host: host, StepTime: o.TimeS})
		if err != nil {
			return err
		}
	}
	fmt.Fprintf(o.Out, "demo done in %s\n", time.Since(start).Round(time.Second))
	return nil
}

// writeReport writes DIR/report.html and prints the summary of the sweep.
func writeReport(ctx context.Context, o Options, st *store.Store, id int64) error {
	d, err := st.Load(context.WithoutCancel(ctx), id)
	if err != nil {
		return err
	}
	rep := report.Build(d)
	var b bytes.Buffer
	if err := report.WriteHTML(&b, rep); err != nil {
		return err
	}
	if err := outfile.WriteAtomic(filepath.Join(o.Dir, "report.html"), b.Bytes()); err != nil {
		return err
	}
	fmt.Fprintln(o.Out)
	return report.WriteSummary(o.Out, rep)
}

// startSandboxes creates both sandboxes, after removing any that an
// interrupted demo left. They start one after the other, each with a
// temporary directory of its own: a starting server clears the #sql temp
// files of its tmpdir, which breaks another server (or bootstrap) that
// shares it.
func startSandboxes(ctx context.Context, o Options, home string) ([]*sandbox.Instance, error) {
	for _, t := range o.Targets {
		if err := sandbox.Down(ctx, home, t.Name); err != nil && !errors.Is(err, sandbox.ErrNotFound) {
			return nil, fmt.Errorf("remove the old %s sandbox: %w", t.Name, err)
		}
	}
	srv, err := sandbox.FindServer(ctx, o.Basedir)
	if err != nil {
		return nil, fmt.Errorf("start the demo sandboxes: %w", err)
	}
	shared := common
	if srv.Flavour == "mariadb" {
		shared = append(append([]string(nil), common...), mariaDB...)
	}
	fmt.Fprintf(o.Out, "starting sandboxes %s and %s in %s\n", o.Targets[0].Name, o.Targets[1].Name, home)
	insts := make([]*sandbox.Instance, len(o.Targets))
	for i, t := range o.Targets {
		tmp := tmpDir(home, t.Name)
		if err := os.MkdirAll(tmp, 0o755); err != nil {
			return nil, fmt.Errorf("start the demo sandboxes: %w", err)
		}
		set := append([]string(nil), shared...)
		if t.Place.IsZero() {
			set = append(set, t.Set...)
		}
		port := 0
		if o.Port != 0 {
			port = o.Port + i
		}
		so := sandbox.Options{
			Name: t.Name, Home: home, Basedir: o.Basedir, Set: append(set, "tmpdir="+tmp), Placement: t.Place, Port: port,
			// The demo's servers must not outlive it, even if it is
			// killed before it can stop them.
			DieWithParent: true,
		}
		switch t.Flavour {
		case flavour.TiDB:
			so.Basedir, so.Set = "", nil
		case flavour.Vitess:
			so.Set = append(append(append([]string(nil), shared...), o.Targets[0].Set...), "tmpdir="+tmp)
		}
		if t.Flavour != "" {
			if err := so.SetFlavour(string(t.Flavour), o.Getenv); err != nil {
				return nil, err
			}
		}
		inst, err := sandbox.Up(ctx, so)
		if err != nil {
			return nil, fmt.Errorf("start the demo sandboxes: %w", err)
		}
		insts[i] = inst
		fmt.Fprintf(o.Out, "  %-8s %-9s %s on 127.0.0.1:%d  %s\n", inst.Name, t.Role, inst.Product(), inst.ClientPort(), strings.Join(t.Set, " "))
	}
	return insts, nil
}

// tmpDir is a sandbox's temporary directory, beside the sandboxes.
func tmpDir(home, name string) string { return filepath.Join(home, ".tmp-"+name) }

// stopSandboxes removes both sandboxes, also after Ctrl-C.
func stopSandboxes(ctx context.Context, o Options, home string) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	var stopped []string
	for _, t := range o.Targets {
		err := sandbox.Down(sctx, home, t.Name)
		os.RemoveAll(tmpDir(home, t.Name))
		switch {
		case err == nil:
			stopped = append(stopped, t.Name)
		case errors.Is(err, sandbox.ErrNotFound):
		default:
			fmt.Fprintf(o.Progress, "shakedown: stop sandbox %s: %v\n", t.Name, err)
		}
	}
	_ = os.Remove(home) // only if empty: nothing else of ours is in it
	if len(stopped) > 0 {
		fmt.Fprintf(o.Out, "stopped the sandboxes (%s)\n", strings.Join(stopped, ", "))
	}
}

// PlanText is the demo's plan, saved beside the report so that it can be
// read and run again. The first instance is the control in either demo.
func PlanText(insts []*sandbox.Instance, o Options) []byte {
	var b strings.Builder
	b.WriteString("# The plan \"shakedown demo\" ran. The sandboxes it names are gone when the\n")
	b.WriteString("# demo ends; with servers of your own, edit the urls and run:\n")
	b.WriteString("#   shakedown sweep plan.yaml --store shakedown.db\n")
	b.WriteString("name: demo\ntargets:\n")
	roles := []string{"control", "candidate"}
	for i, inst := range insts {
		fmt.Fprintf(&b, "  - name: %s\n    url: %s\n    role: %s\n", inst.Name, inst.URL(), roles[i])
	}
	b.WriteString("options: {tables: 4, table-size: 10000}\n")
	if o.Placement {
		b.WriteString("workloads: [oltp_point_select, oltp_read_only]\n")
	} else {
		b.WriteString("workloads: [oltp_point_select, oltp_write_only]\n")
	}
	fmt.Fprintf(&b, "threads: [%s]\n", joinInts(o.Threads))
	fmt.Fprintf(&b, "time: %d\nwarmup: 1\nrepeats: auto\nmax_repeats: %d\nnoise_threshold: 2%%\ncooldown: 0\nprepare: true\ncleanup: false\norder: counterbalanced\n",
		o.TimeS, o.MaxRepeats)
	return []byte(b.String())
}

// throttling reads the CPU throttling counters of the sandboxes with a
// cgroup, by name.
func throttling(insts []*sandbox.Instance) map[string]sandbox.CPUStat {
	out := map[string]sandbox.CPUStat{}
	for _, i := range insts {
		if i.Cgroup == "" {
			continue
		}
		if s, err := sandbox.ReadCPUStat(i.Cgroup); err == nil {
			out[i.Name] = s
		}
	}
	return out
}

// writeThrottling prints how often a quota stopped each sandbox that has
// one during the sweep: what explains a quota's slower, burstier runs.
func writeThrottling(w io.Writer, insts []*sandbox.Instance, before map[string]sandbox.CPUStat) {
	for name, now := range throttling(insts) {
		was := before[name]
		periods, throttled := now.Periods-was.Periods, now.Throttled-was.Throttled
		pct := 0.0
		if periods > 0 {
			pct = 100 * float64(throttled) / float64(periods)
		}
		fmt.Fprintf(w, "\nCPU quota of %s during the sweep (cgroup cpu.stat): throttled in %d of %d periods (%.1f%%), %s in all\n",
			name, throttled, periods, pct, (now.ThrottledTime - was.ThrottledTime).Round(time.Millisecond))
		if throttled == 0 {
			fmt.Fprintf(w, "The quota never bit: %s never used all of its CPU time in a %d ms period, so the two placements differ only in where threads may run.\n",
				name, 100)
		}
	}
}

func workloadNames(p *plan.Plan) []string {
	names := make([]string, len(p.Workloads))
	for i, w := range p.Workloads {
		names[i] = w.Name
	}
	return names
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ", ")
}

// durableRelaxed are the demo's two sandboxes without --placement: only
// the durability settings differ.
var durableRelaxed = []Target{
	{"durable", "control", []string{"innodb_flush_log_at_trx_commit=1", "sync_binlog=1"}, sandbox.Placement{}, ""},
	{"relaxed", "candidate", []string{"innodb_flush_log_at_trx_commit=0", "sync_binlog=0"}, sandbox.Placement{}, ""},
}

// Targets are the sandboxes the demo compares: the durable server against
// the candidate, the same server relaxed (mariadb), a TiDB server (tidb)
// or vtgate over the durable server's settings (vitess); with placement,
// the same server bound to the first half of the CPUs this process may use
// (at least one) against one under a quota of as much CPU time.
func Targets(placement bool, candidate string) ([]Target, error) {
	f, err := flavour.Parse(candidate)
	switch {
	case err != nil || f != flavour.MariaDB && f != flavour.TiDB && f != flavour.Vitess:
		return nil, usage.Errorf("demo: --candidate %s: want mariadb, tidb or vitess", candidate)
	case f != flavour.MariaDB && placement:
		return nil, usage.Errorf("demo: --placement compares one server placed two ways: it takes no --candidate %s", f)
	case f == flavour.TiDB:
		return []Target{durableRelaxed[0], {"tidb", "candidate", []string{"TiDB, its embedded storage"}, sandbox.Placement{}, flavour.TiDB}}, nil
	case f == flavour.Vitess:
		return []Target{durableRelaxed[0], {"vitess", "candidate", []string{"vtgate over MariaDB set as the control"}, sandbox.Placement{}, flavour.Vitess}}, nil
	case !placement:
		return durableRelaxed, nil
	}
	cpus := sandbox.AllowedCPUs()
	n := max(len(cpus)/2, 1)
	if len(cpus) == 0 {
		return nil, usage.Errorf("demo: --placement: cannot read which CPUs this process may use")
	}
	cores, err := sandbox.ParsePlacement(sandbox.FormatCPUList(cpus[:n]), "", "")
	if err != nil {
		return nil, usage.Errorf("demo: --placement: %v", err)
	}
	quota, err := sandbox.ParsePlacement("", strconv.Itoa(n*100)+"%", "")
	if err != nil {
		return nil, usage.Errorf("demo: --placement: %v", err)
	}
	return []Target{
		{"cores", "control", []string{"--cpus " + cores.CPUs}, cores, ""},
		{"quota", "candidate", []string{"--cpu-quota " + quota.QuotaString()}, quota, ""},
	}, nil
}
