package mirror

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/shakedown/shakedown/internal/replay"
	"github.com/shakedown/shakedown/internal/sqlsplit"
	"github.com/shakedown/shakedown/internal/stats"
)

// Summary is a mirror's figures: totals, each candidate's, and each
// query class's. It is the JSON document --json writes.
type Summary struct {
	Version   int     `json:"version"`
	Seconds   float64 `json:"seconds"`
	Sessions  int64   `json:"sessions"`
	Through   int64   `json:"statements_through"`
	Mirrored  int64   `json:"mirrored"`
	Compared  int64   `json:"compared"`
	Differing int64   `json:"differing"`
	Dropped   int64   `json:"dropped"`
	// RefusedPlain counts the clients refused because they did not use
	// TLS where the mirror requires it (error 3159 before the password).
	RefusedPlain int64              `json:"refused_without_tls,omitempty"`
	Other        map[string]int64   `json:"other_commands_not_mirrored,omitempty"`
	Candidates   []CandidateSummary `json:"candidates"`
	Classes      []ClassSummary     `json:"classes"`
}

// CandidateSummary is one candidate's totals.
type CandidateSummary struct {
	Name      string `json:"name"`
	Mirrored  int64  `json:"mirrored"`
	Compared  int64  `json:"compared"`
	Differing int64  `json:"differing"`
	Dropped   int64  `json:"dropped"`
	// Lost counts the times the candidate went down; Back the times a
	// twin reconnected after.
	Lost int64 `json:"lost"`
	Back int64 `json:"back"`
	Down bool  `json:"down"`
	// ControlSeconds and CandidateSeconds sum both sides' latency over
	// the compared statements; Ratio is the second over the first (0
	// with nothing compared), the candidate's latency over all classes.
	ControlSeconds   float64 `json:"control_seconds"`
	CandidateSeconds float64 `json:"candidate_seconds"`
	Ratio            float64 `json:"latency_ratio"`
	// ClassesDiffering counts the classes with a difference on it.
	ClassesDiffering int64 `json:"classes_differing"`
}

// ClassSummary is one query class's figures.
type ClassSummary struct {
	Digest      string           `json:"digest"`
	Statement   string           `json:"statement"`
	Verb        string           `json:"verb"`
	Through     int64            `json:"through"`
	NotMirrored map[string]int64 `json:"not_mirrored,omitempty"`
	Candidates  []ClassCandidate `json:"candidates"`
}

// ClassCandidate is one class's figures on one candidate. Dropped counts
// the reads dropped on a full queue, Down those dropped while the
// candidate was down, Lost those that met its connection breaking.
type ClassCandidate struct {
	Name             string      `json:"name"`
	Mirrored         int64       `json:"mirrored"`
	Compared         int64       `json:"compared"`
	Differing        int64       `json:"differing"`
	NonDeterministic int64       `json:"non_deterministic,omitempty"`
	NotComparable    int64       `json:"not_comparable,omitempty"`
	Dropped          int64       `json:"dropped"`
	Down             int64       `json:"down,omitempty"`
	Lost             int64       `json:"lost,omitempty"`
	SessionErrors    int64       `json:"session_statement_errors,omitempty"`
	ControlP50ms     float64     `json:"control_p50_ms"`
	CandidateP50ms   float64     `json:"candidate_p50_ms"`
	Ratio            float64     `json:"latency_ratio"`
	Low              float64     `json:"ratio_low"`
	High             float64     `json:"ratio_high"`
	State            stats.State `json:"state"`
	Sample           *Sample     `json:"sample,omitempty"`
}

// Sample is the first difference of a class: the statement (literals as ?
// unless --keep-literals), both results' first rows and, where the rows
// differ, where they first part (replay's FirstDifference).
type Sample struct {
	Statement string                  `json:"statement"`
	Kind      string                  `json:"kind"`
	Control   SampleResult            `json:"control"`
	Candidate SampleResult            `json:"candidate"`
	First     *replay.FirstDifference `json:"first_difference,omitempty"`
}

// SampleResult is one side of a Sample.
type SampleResult struct {
	Rows      int64      `json:"rows"`
	FirstRows [][]string `json:"first_rows"`
	ErrorCode int        `json:"error_code,omitempty"`
	Error     string     `json:"error,omitempty"`
}

func (t *tally) summary(cands []*candidate, elapsed time.Duration) *Summary {
	s := &Summary{Version: 1, Seconds: stats.Round(elapsed.Seconds(), 3), Sessions: t.sessions.Load(), Through: t.through.Load(),
		Mirrored: t.mirrored.Load(), Compared: t.compared.Load(), Differing: t.differing.Load(), Dropped: t.dropped.Load(),
		RefusedPlain: t.refusedPlain.Load()}
	t.mu.Lock()
	if len(t.other) > 0 {
		s.Other = maps.Clone(t.other)
	}
	t.mu.Unlock()
	totals := make([]CandidateSummary, len(cands))
	for i, c := range cands {
		totals[i] = CandidateSummary{Name: c.name, Lost: c.lost.Load(), Back: c.back.Load(), Down: c.isDown(),
			ControlSeconds: float64(t.byCand[i].ctl.Load()) / 1e9, CandidateSeconds: float64(t.byCand[i].cand.Load()) / 1e9}
		totals[i].setRatio()
	}
	for _, cl := range t.sortedClasses() {
		cs := ClassSummary{Digest: cl.info.Digest, Statement: cl.statement, Verb: cl.info.Verb, Through: cl.through.Load()}
		classMu.Lock()
		if len(cl.skipped) > 0 {
			cs.NotMirrored = maps.Clone(cl.skipped)
		}
		classMu.Unlock()
		for i := range cl.cand {
			cs.Candidates = append(cs.Candidates, t.classCandidate(cands[i].name, &cl.cand[i]))
			cc := cs.Candidates[i]
			tot := &totals[i]
			tot.Mirrored += cc.Mirrored
			tot.Compared += cc.Compared
			tot.Differing += cc.Differing
			tot.Dropped += cc.Dropped + cc.Down
			if cc.Differing > 0 {
				tot.ClassesDiffering++
			}
		}
		s.Classes = append(s.Classes, cs)
	}
	s.Candidates = totals
	return s
}

func (t *tally) classCandidate(name string, cc *classCand) ClassCandidate {
	out := ClassCandidate{Name: name, Mirrored: cc.mirrored.Load(), Compared: cc.compared.Load(), Differing: cc.differing.Load(),
		NonDeterministic: cc.nondet.Load(), NotComparable: cc.notComparable.Load(), Dropped: cc.dropped.Load(),
		Down: cc.down.Load(), Lost: cc.lost.Load(), SessionErrors: cc.sessionErrors.Load(), State: stats.NoData}
	t.mu.Lock()
	ctl, cand := slices.Clone(cc.ctl), slices.Clone(cc.cand)
	if cc.sample != nil {
		sm := *cc.sample
		out.Sample = &sm
	}
	t.mu.Unlock()
	out.setLatency(ctl, cand)
	return out
}

// setLatency sets both p50s and the latency verdict from the samples
// (ms, pairwise), or none without samples.
func (c *ClassCandidate) setLatency(ctl, cand []float64) {
	c.ControlP50ms, c.CandidateP50ms, c.Ratio, c.Low, c.High, c.State = 0, 0, 0, 0, 0, stats.NoData
	if len(ctl) == 0 {
		return
	}
	c.ControlP50ms, c.CandidateP50ms = stats.Round(stats.Median(ctl), 4), stats.Round(stats.Median(cand), 4)
	r, lo, hi, st := replay.PairedLatencyVerdict(ctl, cand)
	c.Ratio, c.Low, c.High, c.State = stats.Round(r, 4), stats.Round(lo, 4), stats.Round(hi, 4), st
}

// setRatio sets Ratio from the latency sums.
func (c *CandidateSummary) setRatio() {
	c.ControlSeconds, c.CandidateSeconds, c.Ratio = stats.Round(c.ControlSeconds, 6), stats.Round(c.CandidateSeconds, 6), 0
	if c.ControlSeconds > 0 {
		c.Ratio = stats.Round(c.CandidateSeconds/c.ControlSeconds, 4)
	}
}

// WriteJSON writes s as indented JSON.
func WriteJSON(w io.Writer, s *Summary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// WriteText writes s for people: the totals, each candidate's, a table of
// the classes, and the sample of each class that differs.
func WriteText(w io.Writer, s *Summary) error {
	fmt.Fprintf(w, "mirror: %d statements through in %s from %d sessions; %d mirrored, %d compared, %d differing, %d dropped\n",
		s.Through, time.Duration(s.Seconds*float64(time.Second)).Round(time.Millisecond), s.Sessions, s.Mirrored, s.Compared, s.Differing, s.Dropped)
	for _, c := range s.Candidates {
		state := ""
		if c.Lost > 0 {
			state = fmt.Sprintf("; lost %d times, back %d", c.Lost, c.Back)
		}
		if c.Down {
			state += "; down at the end"
		}
		fmt.Fprintf(w, "candidate %s: %d mirrored, %d compared, %d differing, %d dropped%s\n", c.Name, c.Mirrored, c.Compared, c.Differing, c.Dropped, state)
	}
	if len(s.Other) > 0 {
		fmt.Fprintf(w, "other commands not mirrored: %s\n", counts(s.Other))
	}
	if s.RefusedPlain > 0 {
		fmt.Fprintf(w, "clients refused for want of TLS (error 3159): %d\n", s.RefusedPlain)
	}
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "\nclass\tcandidate\tthrough\tmirrored\tcompared\tdiffering\tdropped\tcontrol p50 ms\tcandidate p50 ms\tlatency ratio\tnot mirrored")
	for _, cl := range s.Classes {
		for i, c := range cl.Candidates {
			name, through, skipped := "", "", ""
			if i == 0 {
				name, through, skipped = sqlsplit.Short(cl.Statement, 57), fmt.Sprint(cl.Through), counts(cl.NotMirrored)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", name, c.Name, through, c.Mirrored, c.Compared, c.Differing,
				c.Dropped+c.Down, num(c.ControlP50ms, c.Compared), num(c.CandidateP50ms, c.Compared), ratioText(c), skipped)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, cl := range s.Classes {
		for _, c := range cl.Candidates {
			if c.Sample == nil {
				continue
			}
			fmt.Fprintf(w, "\ndiffers on %s: %s (%d of %d compared)\n%s", c.Name, c.Sample.Kind, c.Differing, c.Compared, sampleText(c.Sample))
		}
	}
	return nil
}

func ratioText(c ClassCandidate) string {
	switch {
	case c.Compared == 0:
		return "-"
	case c.Ratio == 0:
		return string(c.State)
	case c.State == stats.NoVerdict || c.Low == 0:
		return fmt.Sprintf("%.3fx (%s)", c.Ratio, c.State)
	}
	return fmt.Sprintf("%.3fx [%.3f, %.3f] %s", c.Ratio, c.Low, c.High, c.State)
}

func num(v float64, n int64) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", v)
}

// sampleText is a sample under its heading: the statement, both sides'
// first rows, and where the rows first part.
func sampleText(sm *Sample) string {
	s := fmt.Sprintf("  statement: %s\n  control:   %s\n  candidate: %s\n", sm.Statement, sideText(sm.Control), sideText(sm.Candidate))
	for _, l := range sm.First.Lines() {
		s += "  " + l + "\n"
	}
	return s
}

func sideText(r SampleResult) string {
	if r.ErrorCode != 0 {
		return fmt.Sprintf("error %d: %s", r.ErrorCode, r.Error)
	}
	rows := make([]string, len(r.FirstRows))
	for i, row := range r.FirstRows {
		rows[i] = "(" + strings.Join(row, ", ") + ")"
	}
	return fmt.Sprintf("%d rows: %s", r.Rows, strings.Join(rows, " "))
}

func counts(m map[string]int64) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
