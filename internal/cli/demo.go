package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/report"
	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/sweep"
)

const demoUsage = `usage: shakedown demo [--out DIR] [--placement]

The main job on this machine alone: starts two local sandboxes of the same
server, "durable" (innodb_flush_log_at_trx_commit=1, sync_binlog=1) as the
control and "relaxed" (both 0) as the candidate, both with the binary log on
(and, for MariaDB, its thread pool) so that only the durability settings
differ; sweeps oltp_point_select
and oltp_write_only over 1, 4, 16 and 64 threads, short steps repeated
(repeats: auto: 3, then more where a verdict is still inconclusive, up to
--max-repeats) in counterbalanced order; prints the comparison with each
ratio's 95% interval and state, writes DIR/report.html, and stops the
sandboxes. DIR also keeps the results store (shakedown.db) and the plan
(plan.yaml). It takes about six minutes.

With --placement it compares CPU placement instead: the same server,
"cores" bound to half this machine's CPUs (sandbox up --cpus) as the
control, against "quota" limited to as much CPU time in a cgroup (sandbox up
--cpu-quota) as the candidate, over oltp_point_select and oltp_read_only,
and prints the quota's throttling counters (cgroup cpu.stat) beside the
verdict: a quota lets a server's threads run on every CPU until the
period's time is spent, then stops them all.

Options:
`

// demoCmd is "shakedown demo".
type demoCmd struct {
	out        string
	timeS      int
	maxRepeats int
	threads    []int
	basedir    string
	placement  bool
	help       bool
}

func (c *demoCmd) flags() *pflag.FlagSet {
	fs := sbflag.NewFlagSet("demo")
	fs.StringVar(&c.out, "out", "shakedown-demo", "directory for the report, the store and the plan")
	fs.IntVar(&c.timeS, "time", 2, "seconds per step (after a 1 s warm-up)")
	fs.IntVar(&c.maxRepeats, "max-repeats", 6, "most repeats of a workload and thread level while its verdict is inconclusive")
	fs.IntSliceVar(&c.threads, "threads", []int{1, 4, 16, 64}, "thread levels")
	fs.StringVar(&c.basedir, "basedir", "", "unpacked MariaDB/MySQL tarball to run (default: mariadbd or mysqld from PATH, /usr/sbin)")
	fs.BoolVar(&c.placement, "placement", false, "compare a server bound to cores with the same server under an equal CPU quota")
	fs.BoolVarP(&c.help, "help", "h", false, "show this help")
	return fs
}

// demoTarget is one of the demo's two sandboxes.
type demoTarget struct {
	name, role string
	set        []string
	place      sandbox.Placement
}

// demoTargets are the two sandboxes: only the durability settings differ.
var demoTargets = []demoTarget{
	{"durable", "control", []string{"innodb_flush_log_at_trx_commit=1", "sync_binlog=1"}, sandbox.Placement{}},
	{"relaxed", "candidate", []string{"innodb_flush_log_at_trx_commit=0", "sync_binlog=0"}, sandbox.Placement{}},
}

// targets are the sandboxes this demo compares: with --placement, the
// same server bound to the first half of the CPUs this process may use
// (at least one) against one under a quota of as much CPU time.
func (c *demoCmd) targets() ([]demoTarget, error) {
	if !c.placement {
		return demoTargets, nil
	}
	cpus := sandbox.AllowedCPUs()
	n := max(len(cpus)/2, 1)
	if len(cpus) == 0 {
		return nil, usagef("demo: --placement: cannot read which CPUs this process may use")
	}
	cores, err := sandbox.ParsePlacement(sandbox.FormatCPUList(cpus[:n]), "", "")
	if err != nil {
		return nil, usagef("demo: --placement: %v", err)
	}
	quota, err := sandbox.ParsePlacement("", strconv.Itoa(n*100)+"%", "")
	if err != nil {
		return nil, usagef("demo: --placement: %v", err)
	}
	return []demoTarget{
		{"cores", "control", []string{"--cpus " + cores.CPUs}, cores},
		{"quota", "candidate", []string{"--cpu-quota " + quota.QuotaString()}, quota},
	}, nil
}

// demoCommon are settings both sandboxes share: the binary log on, and
// sizes that suit a small demo on a small machine.
var demoCommon = []string{"log_bin=ON", "innodb_buffer_pool_size=256M", "innodb_log_file_size=128M", "max_connections=500"}

// demoMariaDB is added for MariaDB: its thread pool, which runs about one
// statement per core at a time. Without it, 64 threads on a small machine
// measure InnoDB's lock contention more than durability: on 2 cores the
// durable server, its threads parked in fsync, often kept pace with the
// relaxed one or beat it, while with the pool the relaxed one was 1.4x
// faster at 64 threads as at 16.
var demoMariaDB = []string{"thread_handling=pool-of-threads"}

func (c *demoCmd) run(ctx context.Context, env *Env, args []string) error {
	fs := c.flags()
	if err := fs.Parse(args); err != nil {
		return flagError("demo", "demo", fs, err)
	}
	if c.help {
		fmt.Fprint(env.Stdout, demoUsage)
		fmt.Fprint(env.Stdout, fs.FlagUsages())
		return nil
	}
	if fs.NArg() > 0 {
		return usagef("demo: unexpected argument %q (see shakedown demo --help)", fs.Arg(0))
	}
	if c.timeS < 1 {
		return usagef("demo: --time must be >= 1")
	}
	if c.maxRepeats < 3 {
		return usagef("demo: --max-repeats must be >= 3")
	}
	if len(c.threads) == 0 {
		return usagef("demo: --threads needs at least one level")
	}
	for _, t := range c.threads {
		if t < 1 {
			return usagef("demo: --threads: %d: want levels >= 1", t)
		}
	}
	targets, err := c.targets()
	if err != nil {
		return err
	}
	dir, err := filepath.Abs(c.out)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("demo: --out %s: cannot be created: %w", c.out, plainPathError(err))
	}
	start := time.Now()
	home := filepath.Join(dir, "sandboxes")

	insts, err := c.startSandboxes(ctx, env, home, targets)
	// The sandboxes go, however the demo ends: error, Ctrl-C or success.
	defer c.stopSandboxes(ctx, env, home, targets)
	if err != nil {
		return err
	}

	planPath := filepath.Join(dir, "plan.yaml")
	src := c.planText(insts)
	if err := os.WriteFile(planPath, src, 0o644); err != nil {
		return fmt.Errorf("write demo plan: %w", err)
	}
	p, err := plan.Parse(planPath, src, env.Getenv)
	if err != nil {
		return fmt.Errorf("demo plan: %w", err)
	}
	envs, err := sweep.Check(ctx, p)
	if err != nil {
		return err
	}
	st, err := store.Open(ctx, filepath.Join(dir, "shakedown.db"))
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintf(env.Stdout, "sweeping %s at %s threads, %d s steps: %d steps (3 repeats), then more where a verdict is still inconclusive, up to %d repeats\n",
		strings.Join(workloadNames(p), ", "), joinInts(c.threads), c.timeS, len(p.Steps()), c.maxRepeats)
	host, _ := os.Hostname()
	throttledBefore := throttling(insts)
	sum, runErr := sweep.Run(ctx, p, envs, sweep.Options{
		Store: st, Progress: env.Stderr, Live: isTerminal(env.Stderr), Host: host, Version: Version,
	})
	if sum != nil && sum.SweepID != 0 {
		rec := context.WithoutCancel(ctx)
		d, err := st.Load(rec, sum.SweepID)
		if err != nil {
			return err
		}
		rep := report.Build(d)
		var b bytes.Buffer
		if err := report.WriteHTML(&b, rep); err != nil {
			return err
		}
		if err := writeFileAtomic(filepath.Join(dir, "report.html"), b.Bytes()); err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout)
		if err := report.WriteSummary(env.Stdout, rep); err != nil {
			return err
		}
		writeThrottling(env, insts, throttledBefore)
		fmt.Fprintf(env.Stdout, "\nreport:  %s\nstore:   %s (sweep %d)\nplan:    %s\n",
			filepath.Join(dir, "report.html"), st.Path(), sum.SweepID, planPath)
	}
	switch {
	case errors.Is(runErr, sweep.ErrInterrupted):
		return fmt.Errorf("demo interrupted: the report covers the %d of %d steps that finished", sum.OK+sum.Failed, sum.Steps)
	case runErr != nil:
		return runErr
	case sum.Failed > 0:
		return fmt.Errorf("demo: %d of %d steps failed; the report lists them", sum.Failed, sum.Steps)
	}
	fmt.Fprintf(env.Stdout, "demo done in %s\n", time.Since(start).Round(time.Second))
	return nil
}

// startSandboxes creates both sandboxes, after removing any that an
// interrupted demo left. They start one after the other, each with a
// temporary directory of its own: a starting server clears the #sql temp
// files of its tmpdir, which breaks another server (or bootstrap) that
// shares it.
func (c *demoCmd) startSandboxes(ctx context.Context, env *Env, home string, targets []demoTarget) ([]*sandbox.Instance, error) {
	for _, t := range targets {
		if err := sandbox.Down(ctx, home, t.name); err != nil && !errors.Is(err, sandbox.ErrNotFound) {
			return nil, fmt.Errorf("remove the old %s sandbox: %w", t.name, err)
		}
	}
	srv, err := sandbox.FindServer(ctx, c.basedir)
	if err != nil {
		return nil, fmt.Errorf("start the demo sandboxes: %w", err)
	}
	common := demoCommon
	if srv.Flavour == "mariadb" {
		common = append(append([]string(nil), demoCommon...), demoMariaDB...)
	}
	fmt.Fprintf(env.Stdout, "starting sandboxes %s and %s in %s\n", targets[0].name, targets[1].name, home)
	insts := make([]*sandbox.Instance, len(targets))
	for i, t := range targets {
		tmp := demoTmp(home, t.name)
		if err := os.MkdirAll(tmp, 0o755); err != nil {
			return nil, fmt.Errorf("start the demo sandboxes: %w", err)
		}
		set := append([]string(nil), common...)
		if t.place.IsZero() {
			set = append(set, t.set...)
		}
		inst, err := sandbox.Up(ctx, sandbox.Options{
			Name: t.name, Home: home, Basedir: c.basedir, Set: append(set, "tmpdir="+tmp), Placement: t.place,
			// The demo's servers must not outlive it, even if it is
			// killed before it can stop them.
			DieWithParent: true,
		})
		if err != nil {
			return nil, fmt.Errorf("start the demo sandboxes: %w", err)
		}
		insts[i] = inst
		fmt.Fprintf(env.Stdout, "  %-8s %-9s %s on 127.0.0.1:%d  %s\n", inst.Name, t.role, inst.Product(), inst.Port, strings.Join(t.set, " "))
	}
	return insts, nil
}

// demoTmp is a sandbox's temporary directory, beside the sandboxes.
func demoTmp(home, name string) string { return filepath.Join(home, ".tmp-"+name) }

// stopSandboxes removes both sandboxes, also after Ctrl-C.
func (c *demoCmd) stopSandboxes(ctx context.Context, env *Env, home string, targets []demoTarget) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	var stopped []string
	for _, t := range targets {
		err := sandbox.Down(sctx, home, t.name)
		os.RemoveAll(demoTmp(home, t.name))
		switch {
		case err == nil:
			stopped = append(stopped, t.name)
		case errors.Is(err, sandbox.ErrNotFound):
		default:
			fmt.Fprintf(env.Stderr, "shakedown: stop sandbox %s: %v\n", t.name, err)
		}
	}
	_ = os.Remove(home) // only if empty: nothing else of ours is in it
	if len(stopped) > 0 {
		fmt.Fprintf(env.Stdout, "stopped the sandboxes (%s)\n", strings.Join(stopped, ", "))
	}
}

// planText is the demo's plan, saved beside the report so that it can be
// read and run again.
func (c *demoCmd) planText(insts []*sandbox.Instance) []byte {
	var b strings.Builder
	b.WriteString("# The plan \"shakedown demo\" ran. The sandboxes it names are gone when the\n")
	b.WriteString("# demo ends; with servers of your own, edit the urls and run:\n")
	b.WriteString("#   shakedown sweep plan.yaml --store shakedown.db\n")
	b.WriteString("name: demo\ntargets:\n")
	for i, inst := range insts {
		fmt.Fprintf(&b, "  - name: %s\n    url: %s\n    role: %s\n", inst.Name, inst.URL(), demoTargets[i].role) // control first in either demo
	}
	b.WriteString("options: {tables: 4, table-size: 10000}\n")
	if c.placement {
		b.WriteString("workloads: [oltp_point_select, oltp_read_only]\n")
	} else {
		b.WriteString("workloads: [oltp_point_select, oltp_write_only]\n")
	}
	fmt.Fprintf(&b, "threads: [%s]\n", joinInts(c.threads))
	fmt.Fprintf(&b, "time: %d\nwarmup: 1\nrepeats: auto\nmax_repeats: %d\nnoise_threshold: 2%%\ncooldown: 0\nprepare: true\ncleanup: false\norder: counterbalanced\n",
		c.timeS, c.maxRepeats)
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
func writeThrottling(env *Env, insts []*sandbox.Instance, before map[string]sandbox.CPUStat) {
	for name, now := range throttling(insts) {
		was := before[name]
		periods, throttled := now.Periods-was.Periods, now.Throttled-was.Throttled
		pct := 0.0
		if periods > 0 {
			pct = 100 * float64(throttled) / float64(periods)
		}
		fmt.Fprintf(env.Stdout, "\nCPU quota of %s during the sweep (cgroup cpu.stat): throttled in %d of %d periods (%.1f%%), %s in all\n",
			name, throttled, periods, pct, (now.ThrottledTime - was.ThrottledTime).Round(time.Millisecond))
		if throttled == 0 {
			fmt.Fprintf(env.Stdout, "The quota never bit: %s never used all of its CPU time in a %d ms period, so the two placements differ only in where threads may run.\n",
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
