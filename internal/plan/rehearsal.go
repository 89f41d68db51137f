package plan

import (
	"fmt"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/shakedown/shakedown/internal/suggest"
)

// A rehearsal plan names the source, the candidates and what to rehearse
// on them, for shakedown rehearse:
//
//	name: app-move                    # optional; default: the file's base name
//	source:                           # today's database: the control
//	  name: prod
//	  url: mysql://shakedown@10.0.0.1:3306/app
//	  password_env: PROD_PW
//	candidates:                       # one or more
//	  - name: new
//	    url: mysql://shakedown@10.0.0.2:3306/app
//	databases: [app]                  # optional; default: the source URL's
//	data: present                     # the data is there; or copy: {...}
//	follow: {workers: 4}              # after the copy: keep the candidates
//	                                  # current from the source's binary log
//	                                  # (see follow.go)
//	replay:                           # optional: the canary
//	  capture: app.capture            # relative to the plan's directory
//	  speed: 0                        # as replay --speed; also concurrency,
//	                                  # timeout, allow_writes
//	sweep:                            # optional: a sweep plan without targets;
//	                                  # repeats: auto unless it gives repeats
//	  workloads: [oltp_point_select]
//	  threads: [1, 4]
//	  time: 10
//	capacity: {slo: "p99<=20ms"}      # the capacity step: the sweep's first
//	                                  # workload; also step_time, warmup,
//	                                  # searches, bracket, repeats
//	production_peak: 1200 qps         # for the capacity step: events a
//	                                  # second (1200, 1200/s) or a file
//	                                  # that watch --json wrote, relative
//	                                  # to the plan's directory
//	cutover: {allow-set-global: true} # rehearse the switch with the
//	                                  # follower at work (see follow.go)
//	steps:                            # per step: continue_on_failure, skip
//	  check: {continue_on_failure: true}
//
// ParseRehearsal reports every problem at once with its line, as Parse
// does; the sweep: section is read by the sweep plan's own parser, with
// the source as its control and the candidates as its candidates.

// Step names of a rehearsal, in the order they run.
const (
	StepCheck     = "check"
	StepCopy      = "copy"
	StepFollow    = "follow"
	StepVerify    = "verify"
	StepAnalyze   = "analyze"
	StepVars      = "vars"
	StepReplay    = "replay"
	StepSweep     = "sweep"
	StepCapacity  = "capacity"
	StepCutover   = "cutover"
	StepReadiness = "readiness"
)

// StepNames are the steps of a rehearsal in order.
var StepNames = []string{StepCheck, StepCopy, StepFollow, StepVerify, StepAnalyze, StepVars, StepReplay, StepSweep, StepCapacity, StepCutover, StepReadiness}

// Data modes.
const (
	DataPresent = "present" // the candidates hold the data already
	DataCopy    = "copy"    // the copy step puts it there
)

// Rehearsal is a parsed, validated rehearsal plan.
type Rehearsal struct {
	Name       string
	Source     *Target // the control
	Candidates []*Target
	Databases  []string
	Data       Data
	// Replay is nil when the plan replays nothing.
	Replay *Replay
	// Sweep is the sweep plan, with the source and the candidates as
	// its targets; nil when the plan sweeps nothing.
	Sweep *Plan
	// Capacity is nil when the plan does not ask for the capacity step.
	Capacity *Capacity
	// Follow and Cutover are nil when the plan has no follow: or
	// cutover: step.
	Follow  *Follow
	Cutover *Cutover
	// ProductionPeak is the production peak as written, for capacity,
	// which reads it as --peak (capacity.ReadPeak), a relative file
	// from the plan's directory.
	ProductionPeak     string
	ProductionPeakLine int
	// Steps holds each step's settings; a step not named has the zero
	// settings.
	Steps map[string]StepOptions

	Path string // the file name used in messages
	Text []byte // the plan as read; it holds no password
}

// Data is where the candidates' data comes from.
type Data struct {
	Mode string // DataPresent or DataCopy
	// Options are copy's, as written; the copy step checks them.
	Options []Option
	Line    int
}

// Replay is the capture to replay on the source and the candidates.
type Replay struct {
	Capture     string // the file, relative paths taken from the plan's directory
	Speed       float64
	Concurrency int
	TimeoutS    int
	AllowWrites bool
	Line        int
}

// Capacity is what the capacity search of a sweep plan, or a rehearsal's
// capacity step, is asked to prove, how long each of its steps runs and
// how closely it searches (0: the defaults of the command that runs it).
type Capacity struct {
	SLO       string
	StepTimeS int
	WarmupS   int
	Searches  int
	// Bracket is the fraction the search narrows to (0.02 is 2%);
	// Repeats how many times more the answer is run to confirm it.
	Bracket float64
	Repeats int
	Line    int
}

// StepOptions are a step's settings in the plan.
type StepOptions struct {
	// ContinueOnFailure lets the chain go on after the step failed.
	ContinueOnFailure bool
	// Skip leaves the step out.
	Skip bool
	Line int
}

var rehearsalKeys = []string{"name", "source", "candidates", "databases", "data", "follow", "replay", "sweep", "capacity", "production_peak", "cutover", "steps"}

var replayKeys = []string{"capture", "speed", "concurrency", "timeout", "allow_writes"}

var stepKeys = []string{"continue_on_failure", "skip"}

// ParseRehearsal reads a rehearsal plan; path names it in messages and
// is the directory relative capture paths are taken from; getenv looks up
// the password variables; eng checks the sweep's runs. The error
// is an *Error listing every problem.
func ParseRehearsal(path string, src []byte, getenv func(string) string, eng Engine) (*Rehearsal, error) {
	r := &Rehearsal{
		Name: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)),
		Data: Data{Mode: DataPresent}, Steps: map[string]StepOptions{}, Path: path, Text: src,
	}
	ps := &parser{p: newPlan(path, src, eng), getenv: getenv}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		line, msg := yamlError(src, err)
		ps.addf(line, "%s", msg)
		return nil, ps.err()
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		ps.addf(0, "the plan must be a mapping with source:, candidates: and the steps' keys at least")
		return nil, ps.err()
	}
	var source, candidates, sweepNode *yaml.Node
	ps.mapping(doc.Content[0], rehearsalKeys, "rehearsal plan", func(k string, key, v *yaml.Node) {
		switch k {
		case "name":
			if s, ok := ps.str(v, "name"); ok {
				r.Name = s
			}
		case "source":
			source = v
		case "candidates":
			candidates = v
		case "databases":
			r.Databases = ps.names(v, "databases")
		case "data":
			r.Data = ps.data(v)
		case "replay":
			r.Replay = ps.replay(v, filepath.Dir(path))
		case "sweep":
			sweepNode = v
		case "capacity":
			r.Capacity = ps.capacity(key, v)
		case "production_peak":
			r.ProductionPeak, r.ProductionPeakLine = ps.peak(v)
		case "steps":
			ps.stepOptions(v, r.Steps)
		case "follow":
			r.Follow = ps.follow(key, v)
		case "cutover":
			r.Cutover = ps.cutover(key, v)
		}
	})
	ps.followChecks(r)
	targets := ps.rehearsalTargets(source, candidates)
	if sweepNode != nil {
		r.Sweep = ps.sweepSection(r.Name, sweepNode, targets)
	} else if targets != nil {
		ps.targets(targets)
		ps.checkRoles(targets)
	}
	if c, sw := r.Capacity, r.Sweep; c != nil && sw != nil && sw.Prepare && sw.Cleanup && !r.Steps[StepCapacity].Skip {
		// The sweep step ends by dropping what it prepared, and the
		// capacity step that follows searches on it.
		ps.addf(c.Line, "capacity: the capacity step searches on the data the sweep prepares, which the sweep's cleanup: true drops before it: leave cleanup: out of sweep: (shakedown cleanup drops the data after the rehearsal)")
	}
	if len(ps.problems) > 0 {
		return nil, ps.err()
	}
	all := ps.p.Targets
	if r.Sweep != nil {
		all = r.Sweep.Targets
	}
	r.Source, r.Candidates = all[0], all[1:]
	if r.Follow != nil && !r.Steps[StepFollow].Skip && len(r.Databases) == 0 && !r.Source.Target.NamesDB() {
		ps.addf(r.Follow.Line, "follow: name the databases to follow: databases: [app], or a database in the source's URL")
		return nil, ps.err()
	}
	return r, nil
}

// rehearsalTargets turns source: and candidates: into a targets: list as
// a sweep plan has, with the roles set, keeping the nodes' lines.
func (ps *parser) rehearsalTargets(source, candidates *yaml.Node) *yaml.Node {
	if source == nil {
		ps.addf(0, "missing source: the database of today (name, url, password_env)")
	}
	if candidates == nil {
		ps.addf(0, "missing candidates: a list of the databases to move to (name, url, password_env)")
	}
	if source == nil || candidates == nil {
		return nil
	}
	seq := &yaml.Node{Kind: yaml.SequenceNode, Line: source.Line}
	withRole := func(n *yaml.Node, what string, role Role) {
		if n.Kind != yaml.MappingNode {
			ps.addf(n.Line, "%s: want a mapping with name, url and password_env", what)
			return
		}
		c := &yaml.Node{Kind: yaml.MappingNode, Line: n.Line, Column: n.Column}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "role" {
				ps.addf(n.Content[i].Line, "%s: leave role: out: the source is the control and the candidates are candidates", what)
				continue
			}
			c.Content = append(c.Content, n.Content[i], n.Content[i+1])
		}
		c.Content = append(c.Content, scalar("role", n.Line), scalar(string(role), n.Line))
		seq.Content = append(seq.Content, c)
	}
	withRole(source, "source", Control)
	if !ps.list(candidates, "candidates: want a list of targets, each with name and url") {
		return nil
	}
	for _, c := range candidates.Content {
		withRole(c, "candidates", Candidate)
	}
	return seq
}

func scalar(s string, line int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Line: line}
}

// sweepSection reads sweep: as a sweep plan whose targets are the
// rehearsal's. Its problems join the rehearsal's, with their lines.
func (ps *parser) sweepSection(name string, v *yaml.Node, targets *yaml.Node) *Plan {
	if v.Kind != yaml.MappingNode {
		ps.addf(v.Line, "sweep: want a mapping with workloads:, threads: and the sweep plan's other keys")
		return nil
	}
	root := &yaml.Node{Kind: yaml.MappingNode, Line: v.Line}
	for i := 0; i+1 < len(v.Content); i += 2 {
		switch k := v.Content[i]; k.Value {
		case "targets", "name":
			ps.addf(k.Line, "sweep: leave %s: out: the sweep runs on the rehearsal's source and candidates, under its name", k.Value)
		case "capacity", "production_peak":
			ps.addf(k.Line, "sweep: move %s: out of sweep: to the rehearsal plan's top level, where the capacity step reads it", k.Value)
		default:
			root.Content = append(root.Content, k, v.Content[i+1])
		}
	}
	if targets == nil {
		return nil
	}
	// A sweep of fixed repeats below stats.MinRunsFor95 (the sweep's
	// default, 1) never reaches a verdict, so the page could never say
	// ready: a rehearsal's sweep that gives no repeats runs repeats: auto,
	// written into its plan text so that a resume runs the same sweep.
	hasRepeats := false
	for i := 0; i < len(root.Content); i += 2 {
		hasRepeats = hasRepeats || root.Content[i].Value == "repeats"
	}
	if !hasRepeats {
		root.Content = append(root.Content, scalar("repeats", v.Line), scalar("auto", v.Line))
	}
	root.Content = append([]*yaml.Node{scalar("name", v.Line), scalar(name, v.Line), scalar("targets", targets.Line), targets}, root.Content...)
	text, err := yaml.Marshal(root)
	if err != nil {
		ps.addf(v.Line, "sweep: %v", err)
		return nil
	}
	sp := &parser{p: newPlan(ps.p.Path, text, ps.p.engine), getenv: ps.getenv}
	sp.p.Name = name
	sp.plan(root)
	for _, pr := range sp.problems {
		if pr.Line == 0 {
			pr.Msg = "sweep: " + pr.Msg
		}
		ps.problems = append(ps.problems, pr)
	}
	if len(sp.problems) > 0 {
		return nil
	}
	return sp.p
}

// names reads a list of names, or one name.
func (ps *parser) names(v *yaml.Node, what string) []string {
	items := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		items = v.Content
	}
	var out []string
	for _, n := range items {
		if s, ok := ps.str(n, what); ok && s != "" {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		ps.addf(v.Line, "%s: want a list of names such as [app, billing]", what)
	}
	return out
}

// data reads data: present, data: copy, or data: {copy: {options}}.
func (ps *parser) data(v *yaml.Node) Data {
	d := Data{Mode: DataPresent, Line: v.Line}
	want := "data: want present (the candidates hold the data) or copy (with its options under copy:)"
	switch v.Kind {
	case yaml.ScalarNode:
		switch v.Value {
		case DataPresent, DataCopy:
			d.Mode = v.Value
		default:
			msg := fmt.Sprintf("data: %q", v.Value)
			if s := suggest.Closest(v.Value, []string{DataPresent, DataCopy}); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			ps.addf(v.Line, "%s: %s", msg, strings.TrimPrefix(want, "data: "))
		}
	case yaml.MappingNode:
		ps.mapping(v, []string{DataCopy}, "data", func(_ string, key, val *yaml.Node) {
			d.Mode, d.Line = DataCopy, key.Line
			if val.Kind == yaml.ScalarNode && val.Tag == "!!null" {
				return
			}
			if val.Kind != yaml.MappingNode {
				ps.addf(val.Line, "data: copy: want a mapping of copy's options, such as {where: \"app.orders: id < 1000\"}")
				return
			}
			for i := 0; i+1 < len(val.Content); i += 2 {
				k, o := val.Content[i], val.Content[i+1]
				if o.Kind != yaml.ScalarNode {
					ps.addf(o.Line, "data: copy: option %s: want a single value", k.Value)
					continue
				}
				d.Options = append(d.Options, Option{Key: strings.ReplaceAll(k.Value, "_", "-"), Value: o.Value, Line: k.Line})
			}
		})
	default:
		ps.addf(v.Line, "%s", want)
	}
	return d
}

func (ps *parser) replay(v *yaml.Node, dir string) *Replay {
	r := &Replay{Line: v.Line, TimeoutS: 60}
	if v.Kind != yaml.MappingNode {
		ps.addf(v.Line, "replay: want a mapping with capture: FILE at least")
		return r
	}
	ps.mapping(v, replayKeys, "replay", func(k string, _, val *yaml.Node) {
		switch k {
		case "capture":
			if s, ok := ps.str(val, "replay capture"); ok {
				r.Capture = s
				if !filepath.IsAbs(s) {
					r.Capture = filepath.Join(dir, s)
				}
			}
		case "speed":
			if f, ok := ps.fraction(val, "replay speed"); ok {
				if f < 0 {
					ps.addf(val.Line, "replay speed: want >= 0 (0: as fast as possible)")
				}
				r.Speed = f
			}
		case "concurrency":
			if n, ok := ps.intIn(val, "replay concurrency", 0, 100000, "0 (no cap) to 100000"); ok {
				r.Concurrency = int(n)
			}
		case "timeout":
			if r.TimeoutS = ps.seconds(val, "replay timeout"); r.TimeoutS == 0 {
				ps.addf(val.Line, "replay timeout: want a time > 0, such as 1m")
			}
		case "allow_writes":
			r.AllowWrites = ps.boolean(val, "replay allow_writes")
		}
	})
	if r.Capture == "" {
		ps.addf(v.Line, "replay: needs capture: FILE (made by shakedown capture)")
	}
	return r
}

func (ps *parser) capacity(key, v *yaml.Node) *Capacity {
	c := &Capacity{Line: key.Line}
	ps.mapping(v, []string{"slo", "step_time", "warmup", "searches", "bracket", "repeats"}, "capacity", func(k string, _, val *yaml.Node) {
		switch k {
		case "slo":
			c.SLO, _ = ps.str(val, "capacity slo")
		case "step_time":
			if c.StepTimeS = ps.seconds(val, "capacity step_time"); c.StepTimeS < 1 {
				ps.addf(val.Line, "capacity step_time: want a time of 1s or more")
			}
		case "warmup":
			c.WarmupS = ps.seconds(val, "capacity warmup")
		case "searches":
			if n, ok := ps.intIn(val, "capacity searches", 1, 20, "1 to 20"); ok {
				c.Searches = int(n)
			}
		case "bracket":
			if f, ok := ps.fraction(val, "capacity bracket"); ok {
				if c.Bracket = f; f < 0.005 || f > 0.5 {
					ps.addf(val.Line, "capacity bracket: %s: want 0.5%% to 50%% (such as 2%% or 0.02)", val.Value)
				}
			}
		case "repeats":
			if n, ok := ps.intIn(val, "capacity repeats", 1, 10, "1 to 10"); ok {
				c.Repeats = int(n)
			}
		}
	})
	if c.SLO == "" {
		ps.addf(key.Line, "capacity: needs slo:, such as {slo: \"p99<=20ms\"}")
	}
	return c
}

// splitMargins reads split:, the margins of a split sweep's timetable.
// Each has a floor: a runner needs a second to open its connections and
// one to store a step, and the others look for the first runner's word
// that the data is ready every half second, over the network.
func (ps *parser) splitMargins(v *yaml.Node) SplitMargins {
	var m SplitMargins
	if v.Kind != yaml.MappingNode {
		ps.addf(v.Line, "split: want its margins, such as {connect: 30s, settle: 2s, ready: 5s}")
		return m
	}
	ps.mapping(v, []string{"connect", "settle", "ready"}, "split", func(k string, _, val *yaml.Node) {
		floor, to := 1, &m.ConnectS
		switch k {
		case "settle":
			to = &m.SettleS
		case "ready":
			floor, to = 2, &m.ReadyS
		}
		before := len(ps.problems)
		if *to = ps.seconds(val, "split "+k); len(ps.problems) == before && (*to < floor || *to > maxMarginS) {
			ps.addf(val.Line, "split %s: %s: want %ds to 1h", k, val.Value, floor)
		}
	})
	return m
}

// maxMarginS is the longest margin of a split sweep's timetable.
const maxMarginS = 3600

// peak reads production_peak: as written, with its line; capacity reads
// the figure (capacity.ReadPeak).
func (ps *parser) peak(v *yaml.Node) (string, int) {
	s, _ := ps.str(v, "production_peak")
	return s, v.Line
}

func (ps *parser) stepOptions(v *yaml.Node, into map[string]StepOptions) {
	if v.Kind != yaml.MappingNode {
		ps.addf(v.Line, "steps: want a mapping of step names to settings, such as check: {continue_on_failure: true}")
		return
	}
	ps.mapping(v, StepNames, "steps", func(name string, key, val *yaml.Node) {
		o := StepOptions{Line: key.Line}
		if val.Kind != yaml.MappingNode {
			ps.addf(val.Line, "steps: %s: want a mapping such as {continue_on_failure: true}", name)
			return
		}
		ps.mapping(val, stepKeys, "steps: "+name, func(k string, _, b *yaml.Node) {
			switch k {
			case "continue_on_failure":
				o.ContinueOnFailure = ps.boolean(b, "steps: "+name+": continue_on_failure")
			case "skip":
				o.Skip = ps.boolean(b, "steps: "+name+": skip")
			}
		})
		if name == StepReadiness && o.Skip {
			ps.addf(key.Line, "steps: readiness: the rehearsal ends on the readiness page; it cannot be skipped")
		}
		into[name] = o
	})
}
