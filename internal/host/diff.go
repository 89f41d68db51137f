package host

import "strings"

// Difference is one fact across the compared hosts.
type Difference struct {
	Name  string `json:"name"`
	Group string `json:"group"`
	Kind  string `json:"kind"`
	// Values are as each host gave them, in the order of the hosts; ""
	// where unknown, Reasons then saying why.
	Values  []string `json:"values"`
	Reasons []string `json:"reasons,omitempty"`
	// Equal is set when every host has the same known value (only listed
	// when all facts were asked for).
	Equal bool `json:"equal"`
	// Unknown is set when some host could not read the fact: it cannot be
	// compared, and does not count as a difference.
	Unknown bool `json:"unknown,omitempty"`
	// Explanation, when known, says what the fact does and what the
	// references recommend.
	Explanation *Explanation `json:"explanation,omitempty"`
}

// Counts reports whether d is a difference a user must look at: a setting
// every host knows, with different values.
func (d Difference) Counts() bool { return !d.Equal && !d.Unknown && d.Kind == Setting }

// usageCounters grow with the work a server has done since it started,
// and with the work of every other process of its cgroup (all the host's,
// when the cgroup is the root): two servers' values differ whatever their
// configuration, and say nothing of it. They are kept for the monitor,
// which reads their rate, never compared.
var usageCounters = map[string]bool{"cgroup.cpu.usage_usec": true, "cgroup.cpu.nr_periods": true}

// Compare compares the facts of several hosts, the first being the
// control. Facts come in the order the first host lists them (others'
// extra facts after). Identity facts (device names) and cumulative usage
// counters (usageCounters) are never compared.
// Without all, only facts that differ or that some host could not read
// are returned; a fact no host could read is left out.
func Compare(sets []*Facts, all bool) []Difference {
	var order []string
	meta := map[string]Fact{}
	for _, s := range sets {
		for _, f := range s.Facts {
			if _, ok := meta[f.Name]; !ok {
				meta[f.Name] = f
				order = append(order, f.Name)
			}
		}
	}
	var out []Difference
	for _, n := range order {
		m := meta[n]
		if m.Kind == Identity || usageCounters[n] {
			continue
		}
		d := Difference{Name: n, Group: m.Group, Kind: m.Kind, Values: make([]string, len(sets)), Equal: true}
		reasons := make([]string, len(sets))
		known, first := 0, ""
		for i, s := range sets {
			f, ok := s.Get(n)
			switch {
			case !ok:
				reasons[i] = "not collected (an older or other version of host facts)"
			case !f.Known():
				reasons[i] = f.Reason
			default:
				d.Values[i] = f.Value
				v := normalize(f.Value)
				if known == 0 {
					first = v
				} else if v != first {
					d.Equal = false
				}
				known++
			}
			if reasons[i] != "" {
				d.Unknown = true
			}
		}
		if d.Unknown {
			d.Reasons = reasons
			d.Equal = false
		}
		if known == 0 && !all {
			continue
		}
		if d.Equal && !all {
			continue
		}
		if x, ok := Explain(n); ok {
			d.Explanation = &x
		}
		out = append(out, d)
	}
	return out
}

// normalize makes runs of blanks one space and ignores case.
func normalize(v string) string { return strings.ToLower(strings.Join(strings.Fields(v), " ")) }
