package plan

import (
	"math"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// The follow: and cutover: steps of a rehearsal plan:
//
//	data:
//	  copy: {allow-write: true}
//	follow: {workers: 4}              # after the copy, keep each candidate
//	                                  # current from the source's binary
//	                                  # log while the later steps run; also
//	                                  # batch-rows, server-id
//	cutover:                          # rehearse the switch to each
//	  allow-set-global: true          # candidate (required: read_only is
//	  max-lag: 1s                     # set on the source, then restored);
//	  verify: full                    # also lag-wait, kill-writers
//
// Keys are spelled with '-' or '_', as copy's are.

// Follow is the follow step's settings; a zero field is the follower's
// default.
type Follow struct {
	Workers   int
	BatchRows int
	ServerID  uint32
	Line      int
}

// Verify modes of the cutover step.
const (
	CutoverVerifyFull = "full" // compare the followed databases while the source is read-only
	CutoverVerifyNone = "none"
)

// Cutover is the cutover step's settings; a zero duration is the
// cutover's default (max-lag 1s, lag-wait 5m).
type Cutover struct {
	MaxLag, LagWait time.Duration
	Verify          string // CutoverVerifyFull or CutoverVerifyNone
	KillWriters     bool
	// AllowSetGlobal must be true: the cutover sets the source's
	// read_only.
	AllowSetGlobal bool
	Line           int
}

var (
	followKeys  = []string{"workers", "batch-rows", "server-id"}
	cutoverKeys = []string{"max-lag", "lag-wait", "verify", "kill-writers", "allow-set-global"}
)

// dashed is the mapping n with its keys spelled with '-' for '_'.
func dashed(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, x := range n.Content {
		if i%2 == 0 {
			k := *x
			k.Value = strings.ReplaceAll(x.Value, "_", "-")
			x = &k
		}
		c.Content[i] = x
	}
	return &c
}

// follow reads follow: alone, follow: {} or follow: {options}.
func (ps *parser) follow(key, v *yaml.Node) *Follow {
	f := &Follow{Line: key.Line}
	if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
		return f
	}
	if v.Kind != yaml.MappingNode {
		ps.addf(v.Line, "follow: want a mapping of the follower's options, such as {workers: 4}, or {} for its defaults")
		return f
	}
	ps.mapping(dashed(v), followKeys, "follow", func(k string, _, val *yaml.Node) {
		switch k {
		case "workers":
			if n, ok := ps.intIn(val, "follow: workers", 1, 256, "1 to 256 (the target connections changes are applied on)"); ok {
				f.Workers = int(n)
			}
		case "batch-rows":
			if n, ok := ps.intIn(val, "follow: batch-rows", 1, 1000000, "1 to 1000000"); ok {
				f.BatchRows = int(n)
			}
		case "server-id":
			if n, ok := ps.intIn(val, "follow: server-id", 1, math.MaxUint32, "1 to 4294967295, a server_id no server of the topology has"); ok {
				f.ServerID = uint32(n)
			}
		}
	})
	return f
}

func (ps *parser) cutover(key, v *yaml.Node) *Cutover {
	c := &Cutover{Line: key.Line, Verify: CutoverVerifyFull}
	if v.Kind != yaml.MappingNode {
		ps.addf(v.Line, "cutover: want a mapping of the cutover's options, such as {allow-set-global: true, max-lag: 1s}")
		return c
	}
	ps.mapping(dashed(v), cutoverKeys, "cutover", func(k string, _, val *yaml.Node) {
		switch k {
		case "max-lag":
			c.MaxLag = ps.duration(val, "cutover: max-lag")
		case "lag-wait":
			c.LagWait = ps.duration(val, "cutover: lag-wait")
		case "verify":
			if s, ok := ps.str(val, "cutover: verify"); ok {
				if s != CutoverVerifyFull && s != CutoverVerifyNone {
					ps.addf(val.Line, "cutover: verify: %q: want full (compare the followed databases while the source is read-only) or none", s)
				}
				c.Verify = s
			}
		case "kill-writers":
			c.KillWriters = ps.boolean(val, "cutover: kill-writers")
		case "allow-set-global":
			c.AllowSetGlobal = ps.boolean(val, "cutover: allow-set-global")
		}
	})
	return c
}

// duration reads a time > 0: 1s, 500ms, 2m, or a number of seconds. It
// returns 0 after reporting a problem.
func (ps *parser) duration(v *yaml.Node, what string) time.Duration {
	s, ok := ps.str(v, what)
	if !ok {
		return 0
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f > 0 && f < 1e6 {
		return time.Duration(f * float64(time.Second))
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		ps.addf(v.Line, "%s: %q: want a time > 0, such as 1s or 500ms", what, s)
		return 0
	}
	return d
}

// followChecks are the follow and cutover steps' needs of the rest of the
// plan: the follower starts from the position a copy of whole databases
// records, and the cutover rehearses the switch with that follower at
// work.
func (ps *parser) followChecks(r *Rehearsal) {
	if f := r.Follow; f != nil && !r.Steps[StepFollow].Skip {
		switch {
		case r.Data.Mode != DataCopy:
			ps.addf(f.Line, "follow: the follower starts from the position the copy records: it needs data: copy (data: present has no position to start from)")
		case r.Steps[StepCopy].Skip:
			ps.addf(f.Line, "follow: the follower starts from the position the copy records, and steps: copy: {skip: true} leaves the copy out")
		}
		for _, o := range r.Data.Options {
			switch {
			case o.Key == "where" || o.Key == "sample":
				ps.addf(o.Line, "data: copy: %s: a followed copy is of whole databases (the follower applies every row change of them): drop %s, or follow:", o.Key, o.Key)
			case o.Key == "consistency" && strings.TrimSpace(o.Value) == "none":
				ps.addf(o.Line, "data: copy: consistency: none: the follower starts from the position of the copy's consistent snapshot: drop consistency: none, or follow:")
			}
		}
	}
	if c := r.Cutover; c != nil && !r.Steps[StepCutover].Skip {
		if r.Follow == nil || r.Steps[StepFollow].Skip {
			ps.addf(c.Line, "cutover: the switch is rehearsed with the rehearsal's follower at work: add follow: (it needs data: copy)")
		}
		if !c.AllowSetGlobal {
			ps.addf(c.Line, "cutover: allow-set-global: the cutover sets read_only = ON on the source for the switch (and sets it back after): add allow-set-global: true under cutover:")
		}
	}
}
