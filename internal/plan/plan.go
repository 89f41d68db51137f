// Package plan reads and validates a sweep plan: the targets to compare (one
// control, the rest candidates), the workloads with their options, the thread
// levels, and how long, how often and in what order each step runs.
//
// A plan is YAML:
//
//	name: durability                # optional; default: the file's base name
//	targets:
//	  - name: durable
//	    url: mysql://shakedown@127.0.0.1:3307/sbtest
//	    role: control
//	  - name: relaxed
//	    url: mysql://bench@10.0.0.2:3306/sbtest
//	    password_env: RELAXED_PW    # the password comes from this variable
//	    role: candidate             # the default
//	options: {tables: 4}            # for every workload that has the
//	                                # option; one without it (sql has no
//	                                # tables) runs without; an option no
//	                                # workload has is an error
//	workloads:
//	  - oltp_point_select           # a bare name, or:
//	  - name: oltp_read_write
//	    options: {table-size: 10000}
//	threads: [1, 4, 16, 64]
//	time: 10                        # seconds per step (or "1m"); or events: N
//	warmup: 2                       # seconds of load before measuring
//	repeats: 5                      # or auto: 3, more where inconclusive
//	max_repeats: 10                 # with repeats: auto
//	noise_threshold: 2%             # smaller differences count as the same
//	cooldown: 1                     # seconds of rest between steps
//	prepare: true                   # create the data once per target; an
//	                                # existing table with rows is refused
//	                                # unless prepare: replace
//	prepare_threads: 4
//	cleanup: false                  # drop the data at the end
//	order: counterbalanced          # or interleave, sequential
//	capacity: {slo: "p99<=20ms"}    # after the sweep, search each target's
//	                                # capacity for the first workload at the
//	                                # highest thread level; also step_time,
//	                                # warmup, searches, bracket, repeats
//	production_peak: 1200 qps       # for capacity: events a second, or a
//	                                # file watch --json wrote
//	split: {connect: 30s}           # run over several runners (--segment):
//	                                # time to connect before each step
//	                                # (5s), rest between steps (settle,
//	                                # 2s), time from the data being ready
//	                                # to its first step (ready, 5s)
//
// Parse checks everything it can without a connection and reports every
// problem at once, each with the file and line it is on. Passwords are never
// part of a plan: a URL with one is refused, so the plan text can be stored
// as it is.
package plan

import (
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/shakedown/shakedown/internal/runspec"
	"github.com/shakedown/shakedown/internal/suggest"
	"github.com/shakedown/shakedown/internal/target"
)

// Role is what a target is in the comparison.
type Role string

// Roles.
const (
	Control   Role = "control"
	Candidate Role = "candidate"
)

// Order is the order in which steps run.
type Order string

// Orders.
const (
	// Counterbalanced runs every target at one workload, thread level and
	// repeat before moving on, as Interleave does, but turns the order of
	// the targets round at each repeat and each new thread level (A B,
	// B A, A B... with two targets: A B B A; a rotation with more), so
	// that no target always runs first after a change of workload or
	// level, or always second. It is the default.
	Counterbalanced Order = "counterbalanced"
	// Interleave runs every target at one workload, thread level and repeat
	// before moving on, always in plan order, so that drift (a warming
	// cache, a noisy neighbour) hits all targets alike, but the control
	// always runs first.
	Interleave Order = "interleave"
	// Sequential runs everything on one target, then the next.
	Sequential Order = "sequential"
)

// Plan is a parsed, validated plan.
type Plan struct {
	Name      string
	Targets   []*Target
	Options   []Option // for every workload; a workload's own override them
	Workloads []*Workload
	Threads   []int
	// TimeS and Events limit each step as --time and --events do.
	TimeS   int
	Events  int64
	WarmupS int
	// Repeats is the number of repeats of every step; with AutoRepeats it
	// is the first round's (MinAutoRepeats), and cells still inconclusive
	// get more, up to MaxRepeats.
	Repeats     int
	AutoRepeats bool
	MaxRepeats  int
	// NoiseThreshold is the fraction (0.02 is 2%) within which a
	// difference counts as the same.
	NoiseThreshold float64
	CooldownS      int
	Prepare        bool
	// PrepareReplace allows prepare to drop tables that already hold
	// rows (prepare: replace); with plain prepare: true they are refused.
	PrepareReplace bool
	PrepareThreads int
	Cleanup        bool
	Order          Order
	// Capacity is nil when the plan asks for no capacity search.
	Capacity *Capacity
	// ProductionPeak is the production peak as written, for capacity,
	// on the line ProductionPeakLine; "" when none.
	ProductionPeak     string
	ProductionPeakLine int
	// Split is the timetable's margins when the sweep is split over
	// runners (split:); zero where the plan leaves one to its default.
	Split SplitMargins

	// Path is the file name used in messages.
	Path string
	// Source is the plan text as read. It holds no password.
	Source []byte
	// engine answers which options each workload takes; nil in a plan
	// not made by Parse.
	engine Engine
}

// SplitMargins are the margins of a split sweep's timetable, in seconds
// (see sweep's timetable, timetable.go): the time before each step's load in which the
// runners connect, the least rest between steps, and the time from the
// first runner's word that the data is ready to the start of the steps
// on it. 0 leaves a margin to its default.
type SplitMargins struct {
	ConnectS, SettleS, ReadyS int
}

// Engine is what a plan asks of the load engine, which lies above it:
// whether a workload takes an option, so that a plan-level option reaches
// only the workloads that have it, and what is wrong, if anything, with
// the run of a step (verb is run or prepare). The caller hands it over
// (bench.Grammar), so that the plan does not import the engine.
type Engine interface {
	Takes(workload, option string) bool
	Check(verb string, run runspec.Spec) error
}

// Target is one database of the comparison.
type Target struct {
	Name        string
	URL         string // as written; without a password
	PasswordEnv string
	Role        Role
	Line        int

	// Target is the parsed URL with the password from PasswordEnv. It
	// holds the password: never print it; use Target.Redacted().
	Target *target.Target
}

// Workload is one workload of the plan with its own options.
type Workload struct {
	Name    string // the workload run, as in the registry
	Options []Option
	Line    int

	label string // given in the plan, else empty
}

// Label is what the workload's results are grouped and reported by: the
// plan's label for it, else its name.
func (w *Workload) Label() string {
	if w.label != "" {
		return w.label
	}
	return w.Name
}

// Option is one workload option, named as on the command line without the
// leading dashes.
type Option struct {
	Key, Value string
	Line       int
}

// Problem is one thing wrong with a plan.
type Problem struct {
	Line int
	Msg  string
}

// Error lists everything wrong with a plan. It is the user's to fix.
type Error struct {
	Path     string
	Problems []Problem
}

func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		if p.Line > 0 {
			lines[i] = fmt.Sprintf("%s:%d: %s", e.Path, p.Line, p.Msg)
		} else {
			lines[i] = fmt.Sprintf("%s: %s", e.Path, p.Msg)
		}
	}
	return strings.Join(lines, "\n")
}

// Usage marks the error as bad input (exit code 2).
func (e *Error) Usage() bool { return true }

// Defaults.
const (
	DefaultTimeS          = 10
	DefaultRepeats        = 1
	DefaultPrepareThreads = 4
	DefaultNoiseThreshold = 0.02
	DefaultMaxRepeats     = 10
	// MinAutoRepeats is where repeats: auto starts.
	MinAutoRepeats = 3
	maxThreads     = 100000
	maxRepeats     = 1000
)

var keys = []string{"name", "targets", "options", "workloads", "threads", "time", "events",
	"warmup", "repeats", "max_repeats", "noise_threshold", "cooldown", "prepare", "prepare_threads", "cleanup", "order",
	"capacity", "production_peak", "split"}

var targetKeys = []string{"name", "url", "password_env", "role"}

var workloadKeys = []string{"name", "label", "options"}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// parser collects problems while it walks the YAML tree.
type parser struct {
	p        *Plan
	problems []Problem
	getenv   func(string) string
}

func (ps *parser) addf(line int, format string, args ...any) {
	ps.problems = append(ps.problems, Problem{Line: line, Msg: fmt.Sprintf(format, args...)})
}

// Parse reads a plan. path names it in messages; getenv looks up the
// password variables; eng checks each step's run. The error is an *Error
// listing every problem found.
func Parse(path string, src []byte, getenv func(string) string, eng Engine) (*Plan, error) {
	p := newPlan(path, src, eng)
	ps := &parser{p: p, getenv: getenv}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		line, msg := yamlError(src, err)
		ps.addf(line, "%s", msg)
		return nil, ps.err()
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		ps.addf(0, "the plan is empty: it needs targets, workloads and threads at least")
		return nil, ps.err()
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		ps.addf(root.Line, "the plan must be a mapping of keys such as targets:, workloads:, threads:")
		return nil, ps.err()
	}
	ps.plan(root)
	if len(ps.problems) > 0 {
		return nil, ps.err()
	}
	return p, nil
}

// newPlan is a plan with the defaults, before its keys are read.
func newPlan(path string, src []byte, eng Engine) *Plan {
	return &Plan{
		engine:         eng,
		Path:           path,
		Source:         src,
		Name:           strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)),
		TimeS:          -1,
		Repeats:        DefaultRepeats,
		NoiseThreshold: DefaultNoiseThreshold,
		PrepareThreads: DefaultPrepareThreads,
		Order:          Counterbalanced,
	}
}

// plan reads a sweep plan's mapping into ps.p. A rehearsal plan's sweep:
// section comes here too, with its targets added, so that its problems
// are told with the lines of the rehearsal's file.
func (ps *parser) plan(root *yaml.Node) {
	p := ps.p
	seen := map[string]*yaml.Node{}
	ps.mapping(root, keys, "plan", func(k string, key, v *yaml.Node) {
		seen[k] = key
		switch k {
		case "name":
			if s, ok := ps.str(v, "name"); ok {
				p.Name = s
			}
		case "targets":
			ps.targets(v)
		case "options":
			p.Options = ps.options(v, "options")
		case "workloads":
			ps.workloads(v)
		case "threads":
			ps.threads(v)
		case "time":
			p.TimeS = ps.seconds(v, "time")
		case "events":
			if n, ok := ps.intIn(v, "events", 1, math.MaxInt64, "a number of events >= 1, or leave it out"); ok {
				p.Events = n
			}
		case "warmup":
			p.WarmupS = ps.seconds(v, "warmup")
		case "repeats":
			if v.Kind == yaml.ScalarNode && v.Value == "auto" {
				p.AutoRepeats, p.Repeats = true, MinAutoRepeats
				break
			}
			if n, ok := ps.intIn(v, "repeats", 1, maxRepeats, fmt.Sprintf("1 to %d, or auto", maxRepeats)); ok {
				p.Repeats = int(n)
			}
		case "max_repeats":
			if n, ok := ps.intIn(v, "max_repeats", MinAutoRepeats, maxRepeats, fmt.Sprintf("%d to %d", MinAutoRepeats, maxRepeats)); ok {
				p.MaxRepeats = int(n)
			}
		case "noise_threshold":
			if f, ok := ps.fraction(v, "noise_threshold"); ok {
				if f < 0 || f > 0.5 {
					ps.addf(v.Line, "noise_threshold: %s: want 0 to 50%% (such as 2%% or 0.02)", v.Value)
				}
				p.NoiseThreshold = f
			}
		case "cooldown":
			p.CooldownS = ps.seconds(v, "cooldown")
		case "prepare":
			if v.Kind == yaml.ScalarNode && v.Value == "replace" {
				p.Prepare, p.PrepareReplace = true, true
				break
			}
			p.Prepare = ps.boolean(v, "prepare")
		case "prepare_threads":
			if n, ok := ps.intIn(v, "prepare_threads", 1, 1024, "1 to 1024"); ok {
				p.PrepareThreads = int(n)
			}
		case "cleanup":
			p.Cleanup = ps.boolean(v, "cleanup")
		case "capacity":
			p.Capacity = ps.capacity(key, v)
		case "production_peak":
			p.ProductionPeak, p.ProductionPeakLine = ps.peak(v)
		case "split":
			p.Split = ps.splitMargins(v)
		case "order":
			if s, ok := ps.str(v, "order"); ok {
				switch Order(s) {
				case Counterbalanced, Interleave, Sequential:
					p.Order = Order(s)
				default:
					msg := fmt.Sprintf("order: %q: want counterbalanced (the default), interleave or sequential", s)
					if g := suggest.Closest(s, []string{string(Counterbalanced), string(Interleave), string(Sequential)}); g != "" {
						msg = fmt.Sprintf("order: %q (did you mean %q?): want counterbalanced (the default), interleave or sequential", s, g)
					}
					ps.addf(v.Line, "%s", msg)
				}
			}
		}
	})
	for _, k := range []string{"targets", "workloads", "threads"} {
		if seen[k] == nil {
			ps.addf(0, "missing %s:", k)
		}
	}
	if p.TimeS < 0 {
		p.TimeS = 0
		if p.Events == 0 {
			p.TimeS = DefaultTimeS
		}
	}
	switch {
	case p.AutoRepeats && p.MaxRepeats == 0:
		p.MaxRepeats = DefaultMaxRepeats
	case !p.AutoRepeats && seen["max_repeats"] != nil:
		ps.addf(seen["max_repeats"].Line, "max_repeats is for repeats: auto; with a fixed number of repeats leave it out")
	}
	if p.TimeS == 0 && p.Events == 0 && seen["time"] != nil && !ps.reported(seen["time"].Line) {
		ps.addf(seen["time"].Line, "time: 0 needs events: N: a step needs a limit")
	}
	if p.Capacity == nil && seen["production_peak"] != nil {
		ps.addf(seen["production_peak"].Line, "production_peak is for the capacity search: add capacity: {slo: \"p99<=20ms\"} or leave it out")
	}
	ps.checkRoles(seen["targets"])
	ps.checkEngine(len(ps.problems) == 0)
}

// reported says whether a problem on line was reported already: a value
// that did not parse gets that one message, not others about what it
// would have meant.
func (ps *parser) reported(line int) bool {
	return slices.ContainsFunc(ps.problems, func(p Problem) bool { return p.Line == line })
}

func (ps *parser) err() error {
	sort.SliceStable(ps.problems, func(i, j int) bool { return ps.problems[i].Line < ps.problems[j].Line })
	return &Error{Path: ps.p.Path, Problems: ps.problems}
}
