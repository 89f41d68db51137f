package result

import (
	"fmt"
	"io"
	"strings"
)

// Client is what the client itself spent while the run measured, and
// whether that limited the run (the runner's ClientLoad.Bound holds the rule).
type Client struct {
	// Bound is set when the client, not the server, limited the run: its
	// figures measure the client too, and a comparison with it is
	// inconclusive.
	Bound bool `json:"bound"`
	// CPUPct is the client's CPU time over what its Cores could give in
	// the measured span, in percent; CPUS is that CPU time in seconds.
	CPUPct float64 `json:"cpu_pct"`
	CPUS   float64 `json:"cpu_s"`
	Cores  int     `json:"cores"`
	// WaitPct is the time the client's threads were ready to run but
	// waited for a CPU, in percent of what its cores could give.
	WaitPct float64 `json:"wait_pct"`
	// LagP50MS and LagP99MS are the wait of a goroutine the Go scheduler
	// knew to be ready before it ran, median and 99th percentile.
	LagP50MS float64 `json:"lag_p50_ms"`
	LagP99MS float64 `json:"lag_p99_ms"`
	// ReplyLagMS is, with --client-io=loop, the mean time from a reply's
	// arrival to its thread running again.
	ReplyLagMS float64 `json:"reply_lag_ms,omitempty"`
	// QueryLatencyMS is a statement's mean latency, to set the lag
	// against.
	QueryLatencyMS float64 `json:"query_latency_ms"`
	// QueueLagS is, under --rate, the longest the schedule fell behind.
	QueueLagS float64 `json:"queue_lag_s,omitempty"`
	// IO is how the client's threads waited for replies, as --client-io
	// chose; nil in results from before it was recorded.
	IO *ClientIO `json:"io,omitempty"`
}

// ClientIO is how a run's threads waited for replies (client.IOPlan).
type ClientIO struct {
	// Asked is --client-io; Mode what it came to: "blocking" (a
	// goroutine a thread, blocking system calls), "polled" (a goroutine a
	// thread, Go's poller) or "loop" (I/O loops, package ioloop).
	Asked string `json:"asked"`
	Mode  string `json:"mode"`
	// Loops is how many I/O loops drove the threads; Held, whether they
	// kept their Go processors while they waited; BoundToCPUs, whether
	// each was bound to one of the client's CPUs.
	Loops       int  `json:"loops,omitempty"`
	Held        bool `json:"held,omitempty"`
	BoundToCPUs bool `json:"bound_to_cpus,omitempty"`
	// Tuning is what a benchmark set in place of rules of the loops
	// (shakedown help client-io); nil where nothing was.
	Tuning *IOTuning `json:"tuning,omitempty"`
}

// IOTuning is the knobs a benchmark set, each as its variable
// SHAKEDOWN_IOLOOP_<NAME> gave it; a knob not set is 0 or "".
type IOTuning struct {
	Loops int    `json:"loops,omitempty"`
	Bind  string `json:"bind,omitempty"`  // on, off
	Burst int    `json:"burst,omitempty"` // ready descriptors a wait
	Watch string `json:"watch,omitempty"` // on, off
	Hold  string `json:"hold,omitempty"`  // off
}

// String is the knobs set, as "loops 8, bind on".
func (t *IOTuning) String() string {
	var parts []string
	if t.Loops > 0 {
		parts = append(parts, fmt.Sprintf("loops %d", t.Loops))
	}
	if t.Bind != "" {
		parts = append(parts, "bind "+t.Bind)
	}
	if t.Burst > 0 {
		parts = append(parts, fmt.Sprintf("burst %d", t.Burst))
	}
	if t.Watch != "" {
		parts = append(parts, "watch "+t.Watch)
	}
	if t.Hold != "" {
		parts = append(parts, "hold "+t.Hold)
	}
	return strings.Join(parts, ", ")
}

// Kind is how ci drove the threads, whatever their number: "blocking
// reads", "Go's poller", or "I/O loops" with ", holding their processors"
// and ", bound to CPUs" where they did. Two runs of one kind were driven
// alike.
func (ci *ClientIO) Kind() string {
	switch ci.Mode {
	case "blocking":
		return "blocking reads"
	case "polled":
		return "Go's poller"
	}
	s := "I/O loops"
	if ci.Held {
		s += ", holding their processors"
	}
	if ci.BoundToCPUs {
		s += ", bound to CPUs"
	}
	return s
}

// String is ci in a few words: "16 I/O loops, holding their processors,
// each bound to a CPU (--client-io auto)", with "; tuned: loops 16" in
// the parenthesis where a benchmark tuned the loops.
func (ci *ClientIO) String() string {
	var s string
	switch {
	case ci.Mode == "blocking":
		s = "blocking reads, a goroutine a thread"
	case ci.Mode == "polled":
		s = "Go's poller, a goroutine a thread"
	case ci.Loops == 1:
		s = "1 I/O loop"
		if ci.Held {
			s += ", holding its processor"
		}
		if ci.BoundToCPUs {
			s += ", bound to a CPU"
		}
	default:
		s = fmt.Sprintf("%d I/O loops", ci.Loops)
		if ci.Held {
			s += ", holding their processors"
		}
		if ci.BoundToCPUs {
			s += ", each bound to a CPU"
		}
	}
	if ci.Tuning != nil {
		return s + " (--client-io " + ci.Asked + "; tuned: " + ci.Tuning.String() + ")"
	}
	return s + " (--client-io " + ci.Asked + ")"
}

// ClientBound reports whether the client limited the run.
func (r *Result) ClientBound() bool { return r.Client != nil && r.Client.Bound }

// Figures is the client's figures in a few words: "CPU 12.8% of 1 core,
// waiting for a CPU 457.2%, wake-up lag p50 6.291 ms p99 167.772 ms, a
// statement 86.371 ms".
func (c *Client) Figures() string {
	cores := "cores"
	if c.Cores == 1 {
		cores = "core"
	}
	s := fmt.Sprintf("CPU %.1f%% of %d %s, waiting for a CPU %.1f%%, wake-up lag p50 %.3f ms p99 %.3f ms, a statement %.3f ms",
		c.CPUPct, c.Cores, cores, c.WaitPct, c.LagP50MS, c.LagP99MS, c.QueryLatencyMS)
	if c.ReplyLagMS > 0 {
		s += fmt.Sprintf(", reply to next send %.3f ms", c.ReplyLagMS)
	}
	if c.QueueLagS > 0 {
		s += fmt.Sprintf(", queue lag %.3fs", c.QueueLagS)
	}
	return s
}

// writeClient prints the mark of a client-bound run; a run the client did
// not limit prints nothing (its figures are in the JSON).
func (r *Result) writeClient(w io.Writer) {
	if !r.ClientBound() {
		return
	}
	fmt.Fprintf(w, "    CLIENT-BOUND:                  %s\n", r.Client.BoundNote("run"))
}

// BoundNote is what a summary says of a load (what: a run, a level) that
// the client limited, with the client's figures.
func (c *Client) BoundNote(what string) string {
	return fmt.Sprintf("the client limited this %s (%s); it measures the client as much as the server, and comparisons with it are inconclusive",
		what, c.Figures())
}

// mergeClient is the client figures of a split load: those of the runner
// that came nearest its limit (a bound one first), since one starved
// runner holds the whole load back.
func mergeClient(parts []Runner) *Client {
	var worst *Client
	for _, p := range parts {
		c := p.Result.Client
		if c == nil {
			continue
		}
		if worst == nil || (c.Bound && !worst.Bound) || (c.Bound == worst.Bound && c.CPUPct > worst.CPUPct) {
			worst = c
		}
	}
	if worst == nil {
		return nil
	}
	cp := *worst
	return &cp
}
