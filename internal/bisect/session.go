package bisect

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/stats"
	"github.com/shakedown/shakedown/internal/vars"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/runspec"
	"github.com/shakedown/shakedown/internal/target"
)

// session is one bisect under way: the control's connection and the state
// bisect has put it in.
type session struct {
	cfg  Config
	spec runspec.Spec // what each measurement runs, on the control or the candidate
	res  *result.Bisect
	ctl  *server
	sb   *sandbox.Instance // the control as a sandbox, or nil

	orig     map[string]string       // the control's variables before any change
	expected map[string]string       // what they must read now
	testable []result.BisectVariable // in search order: runtime first, restart last

	undo      *undoFile
	changed   bool     // the undo file is written: changes may be in place
	restartOn []string // restart variables at the candidate's value now

	base        []float64 // the control's own measurements, oldest first
	lastBase    bool      // the last run made is base's last, on the control as it is
	runWall     time.Duration
	runs        int
	restartWall time.Duration
	restarts    int
	threshold   float64 // the relative change that matters
	deadline    time.Time
	round       int
}

func newSession(ctx context.Context, cfg Config, run runspec.Spec, res *result.Bisect) (*session, error) {
	ctl, err := openServer(ctx, cfg.Control)
	if err != nil {
		return nil, err
	}
	s := &session{cfg: cfg, spec: run, res: res, ctl: ctl}
	if s.orig, err = ctl.read(ctx); err != nil {
		ctl.Close()
		return nil, err
	}
	s.expected = s.orig
	cand, err := openServer(ctx, cfg.Candidate)
	if err != nil {
		ctl.Close()
		return nil, err
	}
	candVars, err := cand.read(ctx)
	cand.Close()
	if err != nil {
		ctl.Close()
		return nil, err
	}
	res.Differences = differences(s.orig, candVars)
	if res.Differences == nil {
		res.Differences = []result.BisectVariable{}
	}
	if s.sb, err = findSandbox(cfg.SandboxHome, cfg.Control); err != nil {
		ctl.Close()
		return nil, err
	}
	if cfg.Budget > 0 {
		s.deadline = time.Now().Add(cfg.Budget)
	}
	return s, nil
}

func (s *session) close() { s.ctl.Close() }

func (s *session) printf(format string, args ...any) { fmt.Fprintf(s.cfg.Progress, format, args...) }

// computed are read-only variables the server works out for itself (its
// version, what it was built with): no option sets them.
func computed(name string) bool {
	for _, p := range []string{"version", "have_", "innodb_version"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	switch name {
	case "lower_case_file_system", "license", "protocol_version", "system_time_zone",
		"large_files_support", "large_page_size":
		return true
	}
	return false
}

// classify sorts the differences into what can be applied at runtime, by a
// restart, or not at all, with a probe that changes nothing (SET GLOBAL v =
// @@GLOBAL.v). A user who may not SET GLOBAL is stopped here.
func (s *session) classify(ctx context.Context) error {
	var runtime, restart []result.BisectVariable
	notTestable := func(v result.BisectVariable, why string) {
		s.res.NotTestable = append(s.res.NotTestable, result.BisectNotTestable{Name: v.Name, Reason: why})
	}
	for _, v := range s.res.Differences {
		switch {
		case v.Control == vars.Missing:
			notTestable(v, "the control has no such variable")
			continue
		case v.Candidate == vars.Missing:
			notTestable(v, "the candidate has no such variable")
			continue
		case secret(v.Name):
			notTestable(v, "it holds a credential")
			continue
		}
		err := s.ctl.probe(ctx, v.Name)
		switch errorNumber(err) {
		case 0:
			if err != nil {
				return fmt.Errorf("probe %s on %s: %w", v.Name, s.ctl.tgt, err)
			}
			runtime = append(runtime, v)
		case target.ERSpecificAccessDenied:
			return privilegeError(s.ctl.tgt, v.Name, err)
		case target.ERIncorrectGlobalLocalVar:
			switch {
			case computed(v.Name):
				notTestable(v, "the server works it out itself: no option sets it")
			case s.sb == nil:
				notTestable(v, "not testable here: needs a restart (bisect restarts only a local sandbox)")
			case sandbox.FixedAtCreation(v.Name):
				notTestable(v, "fixed when the sandbox was created: a restart cannot change it")
			default:
				v.Restart = true
				restart = append(restart, v)
			}
		case target.ERLocalVariable:
			notTestable(v, "a session variable: SET GLOBAL does not apply")
		case target.ERUnknownSystemVariable:
			notTestable(v, "the control does not know it")
		default:
			notTestable(v, "SET GLOBAL refused: "+err.Error())
		}
	}
	s.testable = append(runtime, restart...)
	return nil
}

// measureBoth measures the control and the candidate as they are,
// interleaved (A B B A ...), after a run of each that is not compared (the
// first runs after a pause are slower: caches, pools, background flushing
// catching up), and compares them; an inconclusive answer gets one more
// pair of runs at a time, up to MaxRepeats a side.
func (s *session) measureBoth(ctx context.Context) error {
	s.printf("measuring the control and the candidate as they are: %s of %s %s, after one run each to warm them up\n", s.runsEach(), s.cfg.Workload, strings.Join(runOptions(s.cfg), " "))
	for _, on := range []string{"control", "candidate"} {
		if _, err := s.runAs(ctx, on, nil, true); err != nil {
			return err
		}
	}
	var ctl, cand []float64
	var c result.Effect
	for i := 0; ; i++ {
		order := []string{"control", "candidate"}
		if i%2 == 1 {
			order = []string{"candidate", "control"}
		}
		for _, on := range order {
			q, err := s.run(ctx, on, nil)
			if err != nil {
				return err
			}
			if on == "control" {
				s.lastBase = true
				ctl = append(ctl, q)
			} else {
				cand = append(cand, q)
			}
		}
		if len(ctl) < s.cfg.Repeats {
			continue
		}
		c = compare(ctl, cand, minThreshold)
		if c.State != stats.Inconclusive || len(ctl) >= s.cfg.MaxRepeats {
			break
		}
	}
	s.base = append(s.base, ctl...)
	s.res.ControlQPS, s.res.CandidateQPS = ctl, cand
	d := c
	s.res.Difference = &d
	s.printf("control %.1f qps, candidate %.1f qps: %s\n", stats.Median(ctl), stats.Median(cand), d.String())
	s.setThresholds(d.Ratio)
	return nil
}

// runsEach is how many runs of each side measureBoth makes, warm-ups
// left out: --repeats, and up to --max-repeats while the answer is open.
func (s *session) runsEach() string {
	if s.cfg.MaxRepeats > s.cfg.Repeats {
		return fmt.Sprintf("%d runs each (up to %d while the answer is open)", s.cfg.Repeats, s.cfg.MaxRepeats)
	}
	return fmt.Sprintf("%d runs each", s.cfg.Repeats)
}

// setThresholds derives, from the whole difference (a ratio), the change
// that matters and the margin within which a group is cleared.
func (s *session) setThresholds(ratio float64) {
	r := math.Max(ratio, 1/ratio)
	s.threshold = math.Max(minThreshold, math.Pow(r, matterShare)-1)
	s.res.Threshold = math.Round(s.threshold*1000) / 1000
}

// run measures the workload once on one side. Before a run on the control
// it checks that nobody else changed the control's variables.
func (s *session) run(ctx context.Context, on string, applied []string) (float64, error) {
	return s.runAs(ctx, on, applied, false)
}

// warmUp runs the workload on the control after a restart, which left it
// cold (an empty buffer pool, threads and caches to build up again), until
// its throughput stops rising: a run no more than 10% above the one before,
// or maxWarmups runs. One run was not enough on a busy machine: the first
// runs after a restart came out at a third to a half of the control's
// pace. The runs are listed and compared with nothing.
func (s *session) warmUp(ctx context.Context, applied []string) error {
	s.printf("  warming the restarted control up until its throughput stops rising\n")
	prev := 0.0
	for i := 0; i < maxWarmups; i++ {
		q, err := s.runAs(ctx, "control", applied, true)
		if err != nil {
			return err
		}
		if i > 0 && q <= prev*1.1 {
			return nil
		}
		prev = q
	}
	return nil
}

// maxWarmups is the most runs a warm-up after a restart makes.
const maxWarmups = 3

func (s *session) runAs(ctx context.Context, on string, applied []string, warmup bool) (float64, error) {
	tgt := s.cfg.Candidate
	if on == "control" {
		tgt = s.cfg.Control
		if err := s.checkUnchanged(ctx); err != nil {
			return 0, err
		}
	}
	if ctx.Err() != nil {
		return 0, ErrInterrupted
	}
	start := time.Now()
	q, secs, err := runOnce(ctx, tgt, s.cfg.Version, s.cfg.Workload, s.spec)
	if err != nil {
		return 0, err
	}
	s.runWall += time.Since(start)
	s.runs++
	s.lastBase = false
	if applied == nil {
		applied = []string{}
	}
	s.res.Measurements = append(s.res.Measurements, result.BisectMeasurement{N: len(s.res.Measurements) + 1, Round: s.round, On: on,
		Applied: applied, QPS: q, Seconds: secs, Warmup: warmup})
	return q, nil
}

// checkUnchanged re-reads the control's variables: any change bisect did
// not make means another session is at work, and bisect stops.
func (s *session) checkUnchanged(ctx context.Context) error {
	now, err := s.ctl.read(ctx)
	if err != nil {
		return err
	}
	return s.absorb(now, nil)
}

// absorb compares what the control reads now with what it must read. The
// variables in own are those bisect has just set: their new values become
// what they must read. Any other difference is another session at work.
func (s *session) absorb(now map[string]string, own map[string]bool) error {
	var changed []string
	for _, n := range differing(s.expected, now) {
		if !own[n] {
			changed = append(changed, fmt.Sprintf("%s was %s, now %s", n, s.expected[n], now[n]))
		}
	}
	if len(changed) > 0 {
		return fmt.Errorf("%w: %s (another session?); stopped", ErrChanged, strings.Join(changed, "; "))
	}
	exp := make(map[string]string, len(s.expected))
	for k, v := range s.expected {
		exp[k] = v
	}
	for n := range own {
		if v, ok := now[n]; ok {
			exp[n] = v
		}
	}
	s.expected = exp
	return nil
}

// own is every variable bisect may set: the differences it tests, their
// aliases, and after a restart whatever it set back.
func (s *session) own() map[string]bool {
	m := map[string]bool{}
	for _, n := range s.undo.Changes {
		m[n] = true
	}
	for _, v := range s.testable {
		for _, n := range allNames(v) {
			m[n] = true
		}
	}
	return m
}

// names of the testable variables in set.
func (s *session) names(set []int) []string {
	out := make([]string, len(set))
	for i, x := range set {
		out[i] = s.testable[x].Name
	}
	return out
}

// apply puts the candidate's values of set on the control and the control's
// own values of every other testable variable, restarting the sandbox when
// the restart variables in set are not the ones in place, or always when
// fresh is set. It records what the control reads afterwards as what it
// must keep reading.
func (s *session) apply(ctx context.Context, set []int, fresh bool) error {
	in := map[int]bool{}
	var restart []string
	for _, x := range set {
		in[x] = true
		if s.testable[x].Restart {
			restart = append(restart, s.testable[x].Name)
		}
	}
	sort.Strings(restart)
	restarted := false
	if fresh || !slices.Equal(restart, s.restartOn) {
		if err := s.restartWith(ctx, restart); err != nil {
			return err
		}
		restarted = true
	}
	now, err := s.ctl.read(ctx)
	if err != nil {
		return err
	}
	for x, v := range s.testable {
		if v.Restart {
			continue
		}
		want := v.Control
		if in[x] {
			want = v.Candidate
		}
		if vars.Normalize(now[v.Name]) != vars.Normalize(want) {
			if err := s.ctl.setGlobal(ctx, v.Name, want); err != nil {
				return err
			}
		}
	}
	if restarted {
		// A restart resets what was set at runtime before bisect began.
		if err := s.resetOthers(ctx, now); err != nil {
			return err
		}
	}
	s.undo.Applied = s.names(set)
	if err := s.undo.write(s.cfg.UndoPath); err != nil {
		return err
	}
	if err := s.reread(ctx, restarted); err != nil {
		return err
	}
	switch {
	case fresh:
		// Both sides of the round restart alike (see roundRuns.blocks):
		// one run takes the first queries' cost, and what is left of a
		// cold start is the same on both sides of every pair.
		_, err := s.runAs(ctx, "control", s.undo.Applied, true)
		return err
	case restarted:
		return s.warmUp(ctx, s.undo.Applied)
	}
	return nil
}

// resetOthers sets back, after a restart, the variables outside the
// search that no longer read as they did before bisect began.
// reread reads the control's variables after a change of its own and takes
// in what changed. After a restart every change counts as its own: a
// restart also moves what the server derives from its settings, and a
// change by another session cannot be told from it.
func (s *session) reread(ctx context.Context, restarted bool) error {
	now, err := s.ctl.read(ctx)
	if err != nil {
		return err
	}
	own := s.own()
	if restarted {
		for n := range now {
			own[n] = true
		}
	}
	return s.absorb(now, own)
}

func (s *session) resetOthers(ctx context.Context, now map[string]string) error {
	skip := map[string]bool{}
	for _, v := range s.testable {
		skip[v.Name] = true
	}
	for _, n := range differing(s.orig, now) {
		if skip[n] || secret(n) {
			continue
		}
		if err := s.ctl.setGlobal(ctx, n, s.orig[n]); err != nil {
			return fmt.Errorf("after restarting the control: %w", err)
		}
	}
	return nil
}

// restarting reports whether applying set would restart the control.
func (s *session) restarting(set []int) bool {
	var restart []string
	for _, x := range set {
		if s.testable[x].Restart {
			restart = append(restart, s.testable[x].Name)
		}
	}
	sort.Strings(restart)
	return !slices.Equal(restart, s.restartOn)
}

// restartWith restarts the control sandbox with its own settings plus the
// candidate's values of the named restart variables.
func (s *session) restartWith(ctx context.Context, names []string) error {
	settings := append([]string(nil), s.undo.Sandbox.Settings...)
	for _, v := range s.testable {
		for _, n := range names {
			if v.Name == n {
				settings = append(settings, n+"="+v.Candidate)
			}
		}
	}
	s.undo.Restarted = true
	if err := s.undo.write(s.cfg.UndoPath); err != nil {
		return err
	}
	what := "its own settings"
	if len(names) > 0 {
		what = "the candidate's " + strings.Join(names, ", ")
	}
	s.printf("  restarting sandbox %s with %s\n", s.sb.Name, what)
	start := time.Now()
	rctx, cancel := context.WithTimeout(ctx, restartTimeout)
	_, err := sandbox.Restart(rctx, s.sb.Home, s.sb.Name, settings)
	cancel()
	if err != nil {
		return err
	}
	s.restartWall += time.Since(start)
	s.restarts++
	s.restartOn = names
	return s.ctl.reconnect(ctx)
}

// restore puts the control back as it was and verifies it, also after an
// error or a cancel; the undo file goes once the control reads as before.
func (s *session) restore(ctx context.Context) error {
	if !s.changed {
		return nil
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*restartTimeout)
	defer cancel()
	s.printf("restoring the control\n")
	r, err := restore(rctx, s.ctl, s.undo)
	if err != nil {
		s.printf("the control is NOT fully restored; after fixing the cause run: shakedown vars bisect --undo %s\n", s.cfg.UndoPath)
		return err
	}
	s.res.Restored = true
	s.changed = false
	if err := os.Remove(s.cfg.UndoPath); err != nil {
		return fmt.Errorf("the control is restored, but the undo file stays: %w", err)
	}
	how := ""
	if r.Restarted {
		how = "restarted with its own settings; "
	}
	s.printf("restored: %s%d variables set back; %d variables read back at their original values\n", how, len(r.Set), r.Checked)
	return nil
}
