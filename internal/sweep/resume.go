package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/shakedown/shakedown/internal/clock"
	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/store"
)

// DefaultDownWait is how long a target that does not answer is waited for
// before its steps are skipped.
const DefaultDownWait = 30 * time.Second

// resumeData settles, before a resumed sweep runs anything, what happens
// to the data under the steps still to run, so that the data under a
// thread level already begun never changes part way through it. The data
// the interrupted sweep left (its notes say which) is kept when its
// workload finds it there and whole; otherwise it is made again, and each
// level begun on the old data starts again from its first repeat: its
// keys leave done. Both are said and noted.
func (s *sweeper) resumeData(ctx context.Context, d *store.SweepData, todo []plan.Step, done map[string]bool) {
	// The highest repeat stored of each target at each level: with
	// repeats: auto a level may have more than the plan's first round.
	top := map[string]int{}
	for _, r := range d.Runs {
		k := stepKey(r.Target, r.Workload, r.Threads, 0)
		top[k] = max(top[k], r.Repeat)
	}
	left := s.restore(d.Notes)
	for home, sets := range left {
		s.data[home] = sets
	}
	seen := map[string]bool{}
	for _, st := range todo {
		t, w := st.Target, st.Workload
		if _, down := s.down[t.Name]; down {
			continue
		}
		home := s.homes[t.Name]
		ds, ok, err := s.dataOf(t, w)
		if err != nil || !ok || seen[home+"\x00"+ds.key] {
			continue
		}
		seen[home+"\x00"+ds.key] = true
		why := "the interrupted sweep had not prepared it"
		if cur := s.holds(home, ds.key); cur != nil {
			err := checkData(ctx, t, s.p.RunSpec(w, 1))
			if err == nil {
				msg := fmt.Sprintf("resuming: keeping %s data on %s as the interrupted sweep left it (found there and whole); the steps still to run go on on it",
					w.Label(), t.Name)
				s.pr.Printf("%s", msg)
				s.note(st.Index, store.NoteKept, t, w, msg)
				continue
			}
			why = "it is not as the interrupted sweep left it: " + err.Error()
			s.drop(home, ds.key)
		}
		s.restart(st, ds.key, why, done, top)
	}
}

// later are the steps of a resumed sweep's later rounds (repeats: auto)
// whose last run is not ok, in step order: they are run again before any
// new round is decided.
func (s *sweeper) later(d *store.SweepData, firstRound int, done map[string]bool) []plan.Step {
	byLabel := map[string]*plan.Workload{}
	for _, w := range s.p.Workloads {
		byLabel[w.Label()] = w
	}
	var out []plan.Step
	for _, r := range store.Latest(d.Runs) {
		w, t := byLabel[r.Workload], s.target(r.Target)
		if r.Step <= firstRound || w == nil || t == nil || done[stepKey(r.Target, r.Workload, r.Threads, r.Repeat)] {
			continue
		}
		out = append(out, plan.Step{Index: r.Step, Target: t, Workload: w, Threads: r.Threads, Repeat: r.Repeat})
	}
	return out
}

// restart makes every thread level of data key on step's data home that
// was begun (some repeats stored as ok) start again from its first
// repeat, as its data is about to be made again.
func (s *sweeper) restart(step plan.Step, key, why string, done map[string]bool, top map[string]int) {
	home := s.homes[step.Target.Name]
	var begun []string
	for _, c := range s.p.Cells() {
		if s.dataKey(c.Workload) != key {
			continue
		}
		for _, t := range s.p.Targets {
			if s.homes[t.Name] != home {
				continue
			}
			var reps []string
			all := true
			last := max(s.p.Repeats, top[stepKey(t.Name, c.Workload.Label(), c.Threads, 0)])
			for r := 1; r <= last; r++ {
				k := stepKey(t.Name, c.Workload.Label(), c.Threads, r)
				if done[k] {
					reps = append(reps, fmt.Sprint(r))
				} else {
					all = false
				}
			}
			if len(reps) == 0 || all {
				continue // not begun, or finished: its data no longer matters
			}
			for r := 1; r <= last; r++ {
				delete(done, stepKey(t.Name, c.Workload.Label(), c.Threads, r))
			}
			msg := fmt.Sprintf("resuming: the %d-thread level of %s on %s was begun on data that is made again (%s): repeats %s, stored, are run again on the fresh data with the rest, so that the level runs on one data set; the report counts the new runs only",
				c.Threads, c.Workload.Label(), t.Name, why, strings.Join(reps, ", "))
			s.pr.Printf("%s", msg)
			s.note(step.Index, store.NoteRestarted, t, c.Workload, msg)
			begun = append(begun, msg)
		}
	}
	if len(begun) == 0 {
		s.pr.Printf("resuming: %s data on %s is made before its next step (%s); no thread level begun on the old data runs on the new",
			step.Workload.Label(), step.Target.Name, why)
	}
}

// restore is the data the notes say the sweep left on each data home.
func (s *sweeper) restore(notes []store.Note) map[string][]*dataSet {
	byLabel := map[string]*plan.Workload{}
	for _, w := range s.p.Workloads {
		byLabel[w.Label()] = w
	}
	byName := map[string]*plan.Target{}
	for _, t := range s.p.Targets {
		byName[t.Name] = t
	}
	left := map[string][]*dataSet{}
	for _, n := range notes {
		t, w := byName[n.Target], byLabel[n.Workload]
		if t == nil || w == nil {
			continue
		}
		home := s.homes[t.Name]
		ds, ok, err := s.dataOf(t, w)
		if err != nil || !ok {
			continue
		}
		var keep []*dataSet
		for _, cur := range left[home] {
			both, _ := collide(ds, cur)
			if cur.key != ds.key && len(both) == 0 {
				keep = append(keep, cur)
			}
		}
		switch n.Kind {
		case store.NotePrepared, store.NoteKept:
			keep = append(keep, ds)
		case store.NoteDropped:
		default:
			continue
		}
		left[home] = keep
	}
	return left
}

// drop forgets the data set of key on home.
func (s *sweeper) drop(home, key string) {
	var keep []*dataSet
	for _, ds := range s.data[home] {
		if ds.key != key {
			keep = append(keep, ds)
		}
	}
	s.data[home] = keep
}

func firstIndex(steps []plan.Step) int {
	if len(steps) == 0 {
		return 0
	}
	return steps[0].Index
}

// skipped is a step of a target found down, to store as failed.
func (s *sweeper) skipped(step plan.Step, why string, now func() time.Time) store.Run {
	return store.Run{Step: step.Index, Target: step.Target.Name, Role: string(step.Target.Role), Workload: step.Workload.Label(),
		Threads: step.Threads, Repeat: step.Repeat, Command: strings.Join(s.p.RunSpec(step.Workload, step.Threads).Args(), " "), StartedAt: now(),
		Status: store.RunFailed, Error: "skipped: target " + step.Target.Name + " did not answer: " + why}
}

// sayDown says once, for each target found down before the sweep began,
// that its steps are skipped.
func (s *sweeper) sayDown(todo []plan.Step) {
	count := map[string]int{}
	for _, st := range todo {
		count[st.Target.Name]++
	}
	var names []string
	for n := range s.down {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		msg := fmt.Sprintf("target %s does not answer (%s): its %d steps are skipped, stored as failed; once it is back, %s runs them",
			n, s.down[n], count[n], s.resumeCommand())
		s.pr.Printf("%s", msg)
		s.note(firstIndex(todo), store.NoteSkipped, s.target(n), nil, msg)
	}
}

// resumeCommand is the command line that resumes the sweep.
func (s *sweeper) resumeCommand() string {
	path := ""
	if s.st != nil {
		path = s.st.Path()
	}
	return ResumeCommand(s.id, path)
}

// ResumeCommand is the command line that resumes sweep id of the store at
// storePath ("" leaves --store out).
func ResumeCommand(id int64, storePath string) string {
	cmd := fmt.Sprintf("shakedown sweep --resume %d", id)
	if storePath != "" {
		cmd += " --store " + Quote(storePath)
	}
	return cmd
}

// Quote writes s as one word of a shell command line: as it is when no
// character of it needs quoting, else in single quotes.
func Quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:@%+=,-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func (s *sweeper) target(name string) *plan.Target {
	for _, t := range s.p.Targets {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// probe looks, after a failed step, whether its target still answers: a
// target that does not answer within downWait is taken as down, said
// once, and its later steps are skipped instead of failing one by one.
func (s *sweeper) probe(ctx context.Context, step plan.Step) {
	t := step.Target
	if _, ok := s.down[t.Name]; ok || ctx.Err() != nil {
		return
	}
	err := ping(ctx, t)
	if err == nil {
		return
	}
	s.pr.startStep(step, "waiting for the target")
	s.pr.Printf("target %s does not answer (%v); waiting up to %s for it", t.Name, err, s.downWait)
	if err = waitFor(ctx, t, s.downWait); err == nil {
		s.pr.Printf("target %s answers again; the sweep goes on", t.Name)
		return
	}
	if ctx.Err() != nil {
		return
	}
	why := fmt.Sprintf("%v, for %s after step %d failed", err, s.downWait, step.Index)
	s.down[t.Name] = why
	msg := fmt.Sprintf("target %s did not answer for %s: its remaining steps are skipped, stored as failed; once it is back, %s runs them",
		t.Name, s.downWait, s.resumeCommand())
	s.pr.Printf("%s", msg)
	s.note(step.Index, store.NoteSkipped, t, nil, msg)
}

// ping connects to t once, bounded by its connect timeout.
func ping(ctx context.Context, t *plan.Target) error {
	db, err := t.Target.Connect(ctx, 1)
	if err != nil {
		return err
	}
	db.Close()
	return nil
}

// waitFor pings t once a second until it answers or wait has passed; it
// returns the last error.
func waitFor(ctx context.Context, t *plan.Target, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		err := ping(ctx, t)
		if err == nil || ctx.Err() != nil {
			return err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return err
		}
		if !clock.Sleep(ctx, clock.Real{}, min(time.Second, left)) {
			return ctx.Err()
		}
	}
}

// CheckWait is Check for a resumed sweep: a target that does not answer
// is waited for, up to wait (said once on w), and then left with Down set,
// so that the sweep skips its steps and runs the others. It fails, as
// Check does, when no target answers.
func CheckWait(ctx context.Context, p *plan.Plan, wait time.Duration, w io.Writer) ([]Env, error) {
	envs := make([]Env, len(p.Targets))
	errs := make([]error, len(p.Targets))
	var mu sync.Mutex
	var wg sync.WaitGroup
	said := false
	for i, t := range p.Targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			deadline := time.Now().Add(wait)
			for {
				envs[i], errs[i] = checkTarget(ctx, t)
				if errs[i] == nil || ctx.Err() != nil || !time.Now().Before(deadline) {
					return
				}
				mu.Lock()
				if !said {
					fmt.Fprintf(w, "target %s does not answer (%v); waiting up to %s for it\n", t.Name, errs[i], wait)
					said = true
				}
				mu.Unlock()
				if !clock.Sleep(ctx, clock.Real{}, min(time.Second, time.Until(deadline))) {
					return
				}
			}
		}()
	}
	wg.Wait()
	var lines []string
	up := 0
	for i, err := range errs {
		t := p.Targets[i]
		if err == nil {
			up++
			continue
		}
		if errors.Is(err, context.Canceled) || ctx.Err() != nil {
			return nil, ctx.Err()
		}
		lines = append(lines, fmt.Sprintf("%s:%d: target %s (%s): %v", p.Path, t.Line, t.Name, t.Target.Redacted(), err))
		envs[i] = Env{Target: t, Down: fmt.Sprintf("%v, for %s", err, wait)}
	}
	if up == 0 {
		return nil, &CheckError{Lines: lines}
	}
	return envs, nil
}
