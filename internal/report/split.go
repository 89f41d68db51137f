package report

import (
	"fmt"
	"strconv"

	"github.com/shakedown/shakedown/internal/store"
)

// splitRuns are the steps merged from the runners of a split load, in
// step order.
func splitRuns(runs []store.Run) []store.Run {
	var out []store.Run
	for _, r := range runs {
		if r.Result != nil && r.Result.Split != nil {
			out = append(out, r)
		}
	}
	return out
}

// splitTable names, for each merged step, its runners, whether all of
// them reported, how far apart they started, and whether the server
// counted what the merged runners say they sent.
func (r *Report) splitTable() *table {
	t := &table{header: []string{"step", "target", "workload", "threads", "runners", "start skew s", "client vs server"},
		right: []bool{true, false, false, true, false, true, false}}
	for _, run := range r.Splits {
		sp := run.Result.Split
		t.add(strconv.Itoa(run.Step), run.Target, run.Workload, strconv.Itoa(run.Threads), oneLine(sp.Describe()),
			strconv.FormatFloat(sp.StartSkewS, 'f', 3, 64), serverLine(run))
	}
	return t
}

// serverLine says whether the merged client rate and the server's count
// agree.
func serverLine(run store.Run) string {
	cc := run.Result.CrossCheck
	switch {
	case cc == nil:
		return "not checked (the first runner did not sample the server)"
	case cc.NotApplicable || (cc.ClientQPS == 0 && cc.ServerQPS == 0):
		return "not checked: " + cc.Note
	}
	counter := cc.Counter
	if counter == "" {
		counter = "Questions"
	}
	verdict := "agree"
	if cc.Mismatch {
		verdict = "DISAGREE"
	}
	return fmt.Sprintf("%s: client %.1f qps, server %s %.1f/s (ratio %.3f)", verdict, cc.ClientQPS, counter, cc.ServerQPS, cc.Ratio)
}

// splitWarnings are the merged steps' warnings, one line each.
func (r *Report) splitWarnings() []string {
	var out []string
	for _, run := range r.Splits {
		for _, w := range run.Result.Split.Warnings {
			out = append(out, fmt.Sprintf("step %d (%s, %s, %d threads): %s", run.Step, run.Target, run.Workload, run.Threads, w))
		}
	}
	return out
}

// jsonSplit is a merged step in the JSON report.
type jsonSplit struct {
	Step     int    `json:"step"`
	Target   string `json:"target"`
	Workload string `json:"workload"`
	Threads  int    `json:"threads"`
	Status   string `json:"status"`
	Runners  any    `json:"runners"`
	Server   string `json:"client_vs_server"`
}

func (r *Report) jsonSplits() []jsonSplit {
	out := []jsonSplit{}
	for _, run := range r.Splits {
		out = append(out, jsonSplit{Step: run.Step, Target: run.Target, Workload: run.Workload, Threads: run.Threads, Status: run.Status,
			Runners: run.Result.Split, Server: serverLine(run)})
	}
	return out
}
