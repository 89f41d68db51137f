package replay

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/shakedown/shakedown/internal/capture"
	"github.com/shakedown/shakedown/internal/outfile"
	runres "github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/runner"
	"github.com/shakedown/shakedown/internal/sqlsplit"
	"github.com/shakedown/shakedown/internal/stats"
)

// ReportVersion is the version of the JSON report.
const ReportVersion = 1

// Report is a replay's outcome. Its JSON form is stable: scripts rely on
// statements, skipped, differences and fingerprints.
type Report struct {
	Version     int          `json:"shakedown_replay"`
	Capture     string       `json:"capture"`
	Control     TargetInfo   `json:"control"`
	Candidates  []TargetInfo `json:"candidates"`
	Speed       float64      `json:"speed"`
	Concurrency int          `json:"concurrency"`
	ReadOnly    bool         `json:"read_only"`
	Interrupted bool         `json:"interrupted"`
	Started     time.Time    `json:"started"`
	Seconds     float64      `json:"seconds"`
	// Statements replayed (on every target).
	Statements    int64   `json:"statements"`
	PerSecond     float64 `json:"statements_per_second"`
	Skipped       Skipped `json:"skipped"`
	Differences   int64   `json:"differences"`
	NewErrors     int64   `json:"new_errors"`
	Errors        int64   `json:"errors"`
	NonDet        int64   `json:"nondeterministic"`
	NotComparable int64   `json:"not_comparable"`
	LostConns     int64   `json:"connection_errors"`
	// Fingerprints: regressions first, then differences, then by count.
	Fingerprints []Fingerprint `json:"fingerprints"`
	Examples     []Example     `json:"examples"`
	VerdictRule  string        `json:"verdict_rule"`
	// Client is what the client spent replaying, whether that limited the
	// replay (then no latency verdict stands) and how its sessions waited
	// for replies.
	Client *runres.Client `json:"client,omitempty"`
}

// TargetInfo names a target, its URL without the password.
type TargetInfo struct {
	Name   string `json:"name"`
	URL    string `json:"url"`
	Errors int64  `json:"errors"`
}

// Skipped counts statements not replayed, by reason.
type Skipped struct {
	Total   int64            `json:"total"`
	Reasons map[string]int64 `json:"reasons"`
}

// Fingerprint is one fingerprint's figures.
type Fingerprint struct {
	Fingerprint   string      `json:"fingerprint"`
	Digest        string      `json:"digest"`
	Example       string      `json:"example"`
	Parsed        bool        `json:"parsed"`
	Count         int64       `json:"count"`
	Differences   int64       `json:"differences"`
	Errors        int64       `json:"errors"`
	NonDet        int64       `json:"nondeterministic"`
	NonDetWhy     string      `json:"nondeterministic_reason,omitempty"`
	NotComparable int64       `json:"not_comparable"`
	Control       Latency     `json:"control"`
	Candidates    []CandidFig `json:"candidates"`
}

// Latency is a latency distribution's summary, in milliseconds.
type Latency struct {
	P50 float64 `json:"p50_ms"`
	P95 float64 `json:"p95_ms"`
	P99 float64 `json:"p99_ms"`
}

// CandidFig is one candidate's figures for a fingerprint.
type CandidFig struct {
	Name         string      `json:"name"`
	Latency      Latency     `json:"latency"`
	LatencyRatio float64     `json:"latency_ratio"`
	RatioLow     float64     `json:"ratio_low"`
	RatioHigh    float64     `json:"ratio_high"`
	Verdict      stats.State `json:"verdict"`
	// Reason is why a verdict that the interval would give does not
	// stand: "client-bound" (the client limited the replay).
	Reason      string `json:"reason,omitempty"`
	Differences int64  `json:"differences"`
	NewErrors   int64  `json:"new_errors"`
	NonDet      int64  `json:"nondeterministic"`
	NotComp     int64  `json:"not_comparable"`
}

// Example is one statement whose result differed, both sides shown:
// their first rows and, where the rows differ, where they first part.
type Example struct {
	Digest    string     `json:"digest"`
	Session   string     `json:"session"`
	Seq       int64      `json:"seq"`
	DB        string     `json:"db,omitempty"`
	SQL       string     `json:"sql"`
	Params    []any      `json:"params,omitempty"`
	Candidate string     `json:"candidate"`
	What      string     `json:"what"`
	ControlR  ResultView `json:"control_result"`
	CandR     ResultView `json:"candidate_result"`
	// First is where the rows first part; nil where they do not differ.
	First *FirstDifference `json:"first_difference,omitempty"`
	cand  int              // index of the candidate among the targets
}

// ResultView is a result, truncated for display.
type ResultView struct {
	Error    string     `json:"error,omitempty"`
	Warnings int        `json:"warnings"`
	Rows     int64      `json:"rows"`
	Columns  []string   `json:"columns,omitempty"`
	Sample   [][]string `json:"sample,omitempty"`
	Ms       float64    `json:"ms"`
}

func view(r *result) ResultView {
	v := ResultView{Warnings: r.warnings, Rows: r.rows, Sample: r.kept.sample(), Ms: float64(r.dur) / 1e6}
	if r.errCode != 0 {
		v.Error = fmt.Sprintf("%d: %s", r.errCode, r.errMsg)
		if r.errCode < 0 {
			v.Error = r.errMsg
		}
	}
	for _, c := range r.cols {
		v.Columns = append(v.Columns, c.name+" "+c.typ)
	}
	return v
}

func makeExample(st *stmt, res []result, ci int, what string) Example {
	return Example{
		Digest: st.info.Digest, Session: st.rec.Session, Seq: st.rec.Seq, DB: st.rec.DB,
		SQL: clip(st.rec.SQL, 2000), Params: st.rec.Params, What: what,
		ControlR: view(&res[0]), CandR: view(&res[ci]), First: firstDifference(&res[0], &res[ci], st.info), cand: ci,
	}
}

// VerdictRule explains the latency verdicts.
const VerdictRule = "latency_ratio = candidate median / control median latency of the fingerprint's statements (above 1: slower), " +
	"with the exact 95% interval that goes with the Mann-Whitney U test (each statement one sample, up to 400 a side); " +
	"no verdict from fewer than 10 statements; same when the whole interval lies within 0.90-1.10 (a statement's latency is noisier than a run's), " +
	"slower or faster when it lies wholly above or below it, inconclusive otherwise"

// VerdictNote is c's verdict in a few words: "slower", "inconclusive
// (client-bound)".
func (c CandidFig) VerdictNote() string {
	if c.Reason != "" {
		return string(c.Verdict) + " (" + c.Reason + ")"
	}
	return string(c.Verdict)
}

// clientLoad is what the probe measured of the client over the replay,
// and how its sessions waited for replies.
func (e *engine) clientLoad(probe runner.Probe) *runres.Client {
	t := e.tally
	t.mu.Lock()
	// A statement's mean latency, over every target.
	var mean, busy time.Duration
	for _, pt := range t.perTarget {
		busy += pt.busy
	}
	if n := t.statements * int64(len(t.perTarget)); n > 0 {
		mean = busy / time.Duration(n)
	}
	t.mu.Unlock()
	return probe.Stored(mean, e.plan, e.plan.Loops)
}

// report is what the replay found; load is the client's (clientLoad): where
// it limited the replay, no latency verdict stands.
func (e *engine) report(rd *capture.Reader, targets []Target, started, ended time.Time, load *runres.Client) *Report {
	t := e.tally
	t.mu.Lock()
	defer t.mu.Unlock()
	rep := &Report{
		Version: ReportVersion, Speed: e.opts.Speed, Concurrency: e.opts.Concurrency,
		ReadOnly: !e.opts.AllowWrites, Started: started.UTC(), Seconds: ended.Sub(started).Seconds(),
		Statements: t.statements, Differences: t.differences, NewErrors: t.newErrors, Errors: t.errors,
		NonDet: t.nondet, NotComparable: t.notComparable, LostConns: t.lost,
		Skipped:     Skipped{Reasons: map[string]int64{}},
		VerdictRule: VerdictRule,
		Client:      load,
	}
	if rep.Seconds > 0 {
		rep.PerSecond = float64(rep.Statements) / rep.Seconds
	}
	for i, tg := range targets {
		ti := TargetInfo{Name: tg.Name, URL: tg.Target.Redacted(), Errors: t.perTarget[i].errors}
		if i == 0 {
			rep.Control = ti
		} else {
			rep.Candidates = append(rep.Candidates, ti)
		}
	}
	for k, v := range t.skipped {
		rep.Skipped.Reasons[k] = v
		rep.Skipped.Total += v
	}
	for _, f := range t.byFP {
		fp := Fingerprint{
			Fingerprint: f.info.Fingerprint, Digest: f.info.Digest, Example: clip(f.example, 300), Parsed: f.info.Parsed,
			Count: f.count, Differences: f.differences, Errors: f.errors, NonDet: f.nondet,
			NotComparable: f.notComparable, Control: latencyOf(f, 0),
		}
		if f.nondet > 0 {
			fp.NonDetWhy = f.info.NonDeterministic
		}
		for ci := 1; ci < t.ntarget; ci++ {
			ratio, lo, hi, state := LatencyVerdict(f.samples[0], f.samples[ci])
			var reason string
			if load != nil && load.Bound && state != stats.NoVerdict {
				c := stats.Comparison{State: state}.ClientBound()
				state, reason = c.State, c.Reason
			}
			cs := f.perCand[ci-1]
			fp.Candidates = append(fp.Candidates, CandidFig{
				Name: targets[ci].Name, Latency: latencyOf(f, ci), LatencyRatio: stats.Round(ratio, 3), RatioLow: stats.Round(lo, 3), RatioHigh: stats.Round(hi, 3),
				Verdict: state, Reason: reason, Differences: cs.differences, NewErrors: cs.newErrors, NonDet: cs.nondet, NotComp: cs.notComp,
			})
		}
		rep.Fingerprints = append(rep.Fingerprints, fp)
	}
	sort.Slice(rep.Fingerprints, func(i, j int) bool {
		a, b := rep.Fingerprints[i], rep.Fingerprints[j]
		ra, rb := worstSlower(a), worstSlower(b)
		if ra != rb {
			return ra > rb
		}
		if a.Differences != b.Differences {
			return a.Differences > b.Differences
		}
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Digest < b.Digest
	})
	rep.Examples = append([]Example(nil), t.examples...)
	for i := range rep.Examples {
		rep.Examples[i].Candidate = targets[rep.Examples[i].cand].Name
	}
	return rep
}

// worstSlower is the largest latency ratio among the candidates judged
// slower, 0 when none is.
func worstSlower(f Fingerprint) float64 {
	w := 0.0
	for _, c := range f.Candidates {
		if c.Verdict == stats.Slower && c.LatencyRatio > w {
			w = c.LatencyRatio
		}
	}
	return w
}

func latencyOf(f *fpStats, i int) Latency {
	h := f.lat[i]
	ms := func(p float64) float64 { return stats.Round(float64(h.Percentile(p))/1e6, 3) }
	return Latency{P50: ms(50), P95: ms(95), P99: ms(99)}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xc0 == 0x80 {
		n--
	}
	return s[:n] + "..."
}

// WriteJSON writes the report as indented JSON.
func WriteJSON(w io.Writer, rep *Report) error { return outfile.WriteJSON(w, rep) }

// WriteText writes the report for a terminal: totals, then the
// fingerprints (at most top), then examples of differences.
func WriteText(w io.Writer, rep *Report, top int) error {
	state := "done"
	if rep.Interrupted {
		state = "INTERRUPTED (partial: what ran before the stop)"
	}
	mode := "read-only"
	if !rep.ReadOnly {
		mode = "writes allowed"
	}
	speed := "as fast as possible"
	if rep.Speed > 0 {
		speed = fmt.Sprintf("%gx the captured pace", rep.Speed)
	}
	fmt.Fprintf(w, "replay of %s: %s\n", rep.Capture, state)
	fmt.Fprintf(w, "  control    %s  %s\n", rep.Control.Name, rep.Control.URL)
	for _, c := range rep.Candidates {
		fmt.Fprintf(w, "  candidate  %s  %s\n", c.Name, c.URL)
	}
	fmt.Fprintf(w, "%s, %s, %.1f s\n\n", mode, speed, rep.Seconds)
	fmt.Fprintf(w, "statements replayed:  %d (%.0f per second, each on every target)\n", rep.Statements, rep.PerSecond)
	fmt.Fprintf(w, "skipped:              %d", rep.Skipped.Total)
	if rep.Skipped.Total > 0 {
		keys := make([]string, 0, len(rep.Skipped.Reasons))
		for k := range rep.Skipped.Reasons {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			a, b := rep.Skipped.Reasons[keys[i]], rep.Skipped.Reasons[keys[j]]
			return a > b || a == b && keys[i] < keys[j]
		})
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s %d", k, rep.Skipped.Reasons[k])
		}
		fmt.Fprintf(w, " (%s)", strings.Join(parts, ", "))
		if rep.ReadOnly {
			fmt.Fprintf(w, "; --allow-writes runs them")
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "differences:          %d (%d new errors)\n", rep.Differences, rep.NewErrors)
	fmt.Fprintf(w, "non-deterministic:    %d differed where the result cannot repeat (not counted as differences)\n", rep.NonDet)
	fmt.Fprintf(w, "not comparable:       %d (ORDER BY ... LIMIT cut through ties)\n", rep.NotComparable)
	fmt.Fprintf(w, "errors:               %d statements failed on some target", rep.Errors)
	if rep.LostConns > 0 {
		fmt.Fprintf(w, " (%d on a lost connection, reconnected)", rep.LostConns)
	}
	fmt.Fprintln(w)
	if c := rep.Client; c != nil {
		if c.IO != nil {
			fmt.Fprintf(w, "client I/O:           %s\n", c.IO)
		}
		if c.Bound {
			fmt.Fprintf(w, "CLIENT-BOUND:         %s; no latency verdict stands\n", c.BoundNote("replay"))
		}
	}

	fmt.Fprintf(w, "\nPer fingerprint (latency in ms; ratio = candidate / control median, above 1 is slower)\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "count\tdiff\terr\tnondet\tctl p50\tp95\tp99\tcandidate\tp50\tp95\tp99\tratio [95% CI]\tverdict\tdigest  fingerprint")
	for i, f := range rep.Fingerprints {
		if i >= top {
			fmt.Fprintf(tw, "... %d more (--json has them all)\n", len(rep.Fingerprints)-top)
			break
		}
		for ci, c := range f.Candidates {
			lead := fmt.Sprintf("%d\t%d\t%d\t%d\t%.3f\t%.3f\t%.3f", f.Count, f.Differences, f.Errors, f.NonDet, f.Control.P50, f.Control.P95, f.Control.P99)
			tail := fmt.Sprintf("%s  %s", f.Digest, clip(f.Fingerprint, 80))
			if ci > 0 {
				lead, tail = "\t\t\t\t\t\t", ""
			}
			ratio := "-"
			if c.Verdict != stats.NoVerdict {
				ratio = fmt.Sprintf("%.2f [%.2f-%.2f]", c.LatencyRatio, c.RatioLow, c.RatioHigh)
			}
			fmt.Fprintf(tw, "%s\t%s\t%.3f\t%.3f\t%.3f\t%s\t%s\t%s\n", lead, c.Name, c.Latency.P50, c.Latency.P95, c.Latency.P99, ratio, c.VerdictNote(), tail)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(rep.Examples) > 0 {
		fmt.Fprintf(w, "\nDifferences (examples, at most %d per fingerprint)\n", maxExamplesPerFP)
		for _, ex := range rep.Examples {
			fmt.Fprintf(w, "\n  session %s #%d", ex.Session, ex.Seq)
			if ex.DB != "" {
				fmt.Fprintf(w, " (db %s)", ex.DB)
			}
			fmt.Fprintf(w, ", %s: %s\n    %s\n", ex.Candidate, ex.What, sqlsplit.Short(ex.SQL, 200))
			if len(ex.Params) > 0 {
				fmt.Fprintf(w, "    parameters %v\n", ex.Params)
			}
			fmt.Fprintf(w, "    control:   %s\n", showResult(ex.ControlR))
			fmt.Fprintf(w, "    candidate: %s\n", showResult(ex.CandR))
			for _, l := range ex.First.Lines() {
				fmt.Fprintf(w, "    %s\n", l)
			}
		}
	}
	fmt.Fprintf(w, "\nVerdict rule: %s.\n", rep.VerdictRule)
	return nil
}

func showResult(v ResultView) string {
	if v.Error != "" {
		return "error " + clip(v.Error, 160)
	}
	s := fmt.Sprintf("%d rows", v.Rows)
	if v.Warnings > 0 {
		s += fmt.Sprintf(", %d warnings", v.Warnings)
	}
	for i, row := range v.Sample {
		if i >= 3 {
			s += " ..."
			break
		}
		s += " (" + clip(strings.Join(row, ", "), 80) + ")"
	}
	return s
}
