package plan

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/shakedown/shakedown/internal/suggest"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/workload"
)

// The parts of a plan, read from their YAML nodes. Problems are collected,
// not returned, so that one pass reports them all.

// mapping walks a mapping node, reporting unknown and repeated keys, and
// calls f for every known one.
func (ps *parser) mapping(n *yaml.Node, known []string, what string, f func(k string, key, v *yaml.Node)) {
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, v := n.Content[i], n.Content[i+1]
		k := key.Value
		if first, dup := seen[k]; dup {
			ps.addf(key.Line, "%s: key %s: given twice (first on line %d)", what, k, first)
			continue
		}
		seen[k] = key.Line
		if !slices.Contains(known, k) {
			msg := fmt.Sprintf("unknown key %q in %s", k, what)
			if s := suggest.Closest(k, known); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			ps.addf(key.Line, "%s; valid keys: %s", msg, strings.Join(known, ", "))
			continue
		}
		f(k, key, v)
	}
}

func (ps *parser) str(v *yaml.Node, what string) (string, bool) {
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		ps.addf(v.Line, "%s: want a single value", what)
		return "", false
	}
	return v.Value, true
}

func (ps *parser) integer(v *yaml.Node, what string) (int64, bool) {
	s, ok := ps.str(v, what)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		ps.addf(v.Line, "%s: %q is not a whole number", what, s)
		return 0, false
	}
	return n, true
}

// intIn reads a whole number that should lie in lo..hi and reports one
// outside as "what: n: want <want>". A number out of range still comes
// back with true, so that the plan holds what was written and the one
// problem is reported once; false means no number.
func (ps *parser) intIn(v *yaml.Node, what string, lo, hi int64, want string) (int64, bool) {
	n, ok := ps.integer(v, what)
	if ok && (n < lo || n > hi) {
		ps.addf(v.Line, "%s: %d: want %s", what, n, want)
	}
	return n, ok
}

func (ps *parser) boolean(v *yaml.Node, what string) bool {
	s, ok := ps.str(v, what)
	if !ok {
		return false
	}
	switch strings.ToLower(s) {
	case "true", "yes", "on":
		return true
	case "false", "no", "off":
		return false
	}
	ps.addf(v.Line, "%s: %q: want true or false", what, s)
	return false
}

// fraction reads a share: 2% or 0.02. It reports a problem and false when
// it is neither.
func (ps *parser) fraction(v *yaml.Node, what string) (float64, bool) {
	s, ok := ps.str(v, what)
	if !ok {
		return 0, false
	}
	div := 1.0
	if t, found := strings.CutSuffix(strings.TrimSpace(s), "%"); found {
		s, div = strings.TrimSpace(t), 100
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		ps.addf(v.Line, "%s: %q: want a share such as 2%% or 0.02", what, v.Value)
		return 0, false
	}
	return f / div, true
}

// seconds reads a whole number of seconds: 10, or a duration such as "90s" or
// "2m". It returns 0 after reporting a problem.
func (ps *parser) seconds(v *yaml.Node, what string) int {
	s, ok := ps.str(v, what)
	if !ok {
		return 0
	}
	if n, err := strconv.Atoi(s); err == nil {
		if n < 0 {
			ps.addf(v.Line, "%s: %d: want seconds >= 0", what, n)
			return 0
		}
		return n
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d%time.Second != 0 {
		ps.addf(v.Line, "%s: %q: want whole seconds, such as 10 or \"2m\"", what, s)
		return 0
	}
	return int(d / time.Second)
}

// list says whether v is a list of at least one item, and reports why
// (a whole message) when it is not.
func (ps *parser) list(v *yaml.Node, why string) bool {
	if v.Kind == yaml.SequenceNode && len(v.Content) > 0 {
		return true
	}
	ps.addf(v.Line, "%s", why)
	return false
}

func (ps *parser) targets(v *yaml.Node) {
	if !ps.list(v, "targets: want a list of targets, each with name, url and role") {
		return
	}
	names := map[string]int{}
	for _, tn := range v.Content {
		t := &Target{Role: Candidate, Line: tn.Line}
		if tn.Kind != yaml.MappingNode {
			ps.addf(tn.Line, "targets: each target is a mapping with name, url and role")
			continue
		}
		var hasName, hasURL bool
		ps.mapping(tn, targetKeys, "a target", func(k string, key, val *yaml.Node) {
			switch k {
			case "name":
				s, ok := ps.str(val, "target name")
				if !ok {
					return
				}
				hasName = true
				t.Name = s
				if !nameRE.MatchString(s) {
					ps.addf(val.Line, "target name %q: use letters, digits, '_', '.' or '-' (at most 64)", s)
				} else if first, dup := names[s]; dup {
					ps.addf(val.Line, "target name %q is used twice (first on line %d)", s, first)
				}
				names[s] = val.Line
			case "url":
				s, ok := ps.str(val, "url")
				if !ok {
					return
				}
				hasURL = true
				t.URL = s
				tg, err := target.Parse(s)
				if err != nil {
					ps.addf(val.Line, "url: %v", err)
					return
				}
				if tg.Password != "" {
					ps.addf(val.Line, "url: the URL holds a password: take it out and name an environment variable that holds it with password_env:, so that the plan can be stored and shared")
					return
				}
				t.Target = tg
			case "password_env":
				if s, ok := ps.str(val, "password_env"); ok {
					t.PasswordEnv = s
					if ps.getenv(s) == "" {
						ps.addf(val.Line, "password_env: environment variable %s is not set", s)
					}
				}
			case "role":
				if s, ok := ps.str(val, "role"); ok {
					switch Role(s) {
					case Control, Candidate:
						t.Role = Role(s)
					default:
						ps.addf(val.Line, "role: %q: want control or candidate", s)
					}
				}
			}
		})
		if !hasName {
			ps.addf(tn.Line, "a target needs a name:")
		}
		if !hasURL {
			ps.addf(tn.Line, "target %s needs a url: such as mysql://user@host:3306/sbtest", t.Name)
		}
		if t.Target != nil {
			t.Target.Name = t.Name
			if t.PasswordEnv != "" {
				t.Target.Password = ps.getenv(t.PasswordEnv)
				t.Target.PasswordFrom = "password_env " + t.PasswordEnv
			}
		}
		ps.p.Targets = append(ps.p.Targets, t)
	}
}

func (ps *parser) checkRoles(targets *yaml.Node) {
	if targets == nil || len(ps.p.Targets) == 0 {
		return
	}
	var controls []*Target
	for _, t := range ps.p.Targets {
		if t.Role == Control {
			controls = append(controls, t)
		}
	}
	switch len(controls) {
	case 1:
	case 0:
		ps.addf(targets.Line, "targets: no target has role: control; mark exactly one (today's database) as the control")
	default:
		ps.addf(controls[1].Line, "targets: %s and %s are both role: control; mark exactly one", controls[0].Name, controls[1].Name)
	}
}

// planKeys are engine options the plan sets itself, and what to do instead.
var planKeys = map[string]string{
	"threads":         "list thread levels under the plan's threads: key",
	"time":            "use the plan's time: key",
	"events":          "use the plan's events: key",
	"warmup-time":     "use the plan's warmup: key",
	"target":          "targets are named under targets:",
	"name":            "targets are named under targets:",
	"json":            "results go to the store",
	"report-interval": "the sweep records every second; use --verbose to see it",
	"help":            "not an option for a plan",
}

func (ps *parser) options(v *yaml.Node, what string) []Option {
	if v.Kind != yaml.MappingNode {
		ps.addf(v.Line, "%s: want a mapping such as {tables: 4, table-size: 10000}", what)
		return nil
	}
	var out []Option
	seen := map[string]int{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		key, val := v.Content[i], v.Content[i+1]
		k := strings.ReplaceAll(strings.TrimLeft(key.Value, "-"), "_", "-")
		if first, dup := seen[k]; dup {
			ps.addf(key.Line, "%s: option %s is given twice (first on line %d)", what, key.Value, first)
			continue
		}
		seen[k] = key.Line
		if hint, ok := planKeys[k]; ok {
			ps.addf(key.Line, "%s: option %s is set by the plan: %s", what, key.Value, hint)
			continue
		}
		if strings.HasPrefix(k, "mysql-") && k != "mysql-ignore-errors" && k != "mysql-storage-engine" || k == "connect-timeout" {
			ps.addf(key.Line, "%s: option %s is a connection option: put it in the target's url", what, key.Value)
			continue
		}
		if val.Kind != yaml.ScalarNode {
			ps.addf(val.Line, "%s: option %s: want a single value", what, key.Value)
			continue
		}
		out = append(out, Option{Key: k, Value: val.Value, Line: key.Line})
	}
	return out
}

func (ps *parser) workloads(v *yaml.Node) {
	if !ps.list(v, "workloads: want a list of workload names, or of {name, options}") {
		return
	}
	seen := map[string]int{}
	for _, wn := range v.Content {
		w := &Workload{Line: wn.Line}
		switch wn.Kind {
		case yaml.ScalarNode:
			w.Name = wn.Value
		case yaml.MappingNode:
			ps.mapping(wn, workloadKeys, "a workload", func(k string, key, val *yaml.Node) {
				switch k {
				case "name":
					if s, ok := ps.str(val, "workload name"); ok {
						w.Name = s
					}
				case "label":
					if s, ok := ps.str(val, "workload label"); ok {
						w.label = s
					}
				case "options":
					w.Options = ps.options(val, "options of "+w.Name)
				}
			})
		default:
			ps.addf(wn.Line, "workloads: each is a name, or a mapping with name, label and options")
			continue
		}
		if w.Name == "" {
			ps.addf(wn.Line, "a workload needs a name")
			continue
		}
		if w.label != "" && !validLabel(w.label) {
			ps.addf(wn.Line, "workload %s: label %q: use letters, digits, '_', '-' and '.' only", w.Name, w.label)
			continue
		}
		if _, other := workload.Lookup(w.label); other && w.label != w.Name {
			ps.addf(wn.Line, "workload %s: label %s is the name of another workload: its results would pass for that one's", w.Name, w.label)
			continue
		}
		label := w.Label()
		// Results are grouped by label, so one label means one
		// configuration.
		if first, dup := seen[label]; dup {
			what := "workload " + label + " is listed twice"
			if label != w.Name {
				what = "label " + label + " is used twice"
			}
			ps.addf(wn.Line, "%s (first on line %d); results are grouped by it: give each configuration its own label, e.g. label: %s-2", what, first, label)
			continue
		}
		seen[label] = wn.Line
		ps.p.Workloads = append(ps.p.Workloads, w)
	}
}

func (ps *parser) threads(v *yaml.Node) {
	items := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		items = v.Content
	}
	if len(items) == 0 {
		ps.addf(v.Line, "threads: want a list of thread levels such as [1, 4, 16, 64]")
		return
	}
	seen := map[int64]bool{}
	for _, n := range items {
		if n.Kind != yaml.ScalarNode {
			ps.addf(n.Line, "threads: want a list of thread levels such as [1, 4, 16, 64]")
			return
		}
		t, err := strconv.ParseInt(n.Value, 10, 64)
		switch {
		case err != nil:
			ps.addf(n.Line, "threads: %q is not a whole number", n.Value)
		case t < 1 || t > maxThreads:
			ps.addf(n.Line, "threads: %d: want 1 to %d", t, maxThreads)
		case seen[t]:
			ps.addf(n.Line, "threads: %d is listed twice", t)
		default:
			seen[t] = true
			ps.p.Threads = append(ps.p.Threads, int(t))
		}
	}
}

// validLabel says whether a workload label is one word that reads well in
// tables, file names and command lines.
func validLabel(s string) bool {
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
		default:
			return false
		}
	}
	return s != ""
}
