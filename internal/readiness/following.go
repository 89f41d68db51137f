package readiness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/shakedown/shakedown/internal/follow"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/verify"
)

// The evidence of a rehearsal that follows: what its follower of the
// source's binary log did, how the verify beside it went, and its
// rehearsed cutover.

// MaxLagP99 is the follower's lag p99, in seconds, above which following
// warns: a switch waits for the lag to fall, and a follower that falls
// this far behind under the load may not catch up at the switch.
const MaxLagP99 = 2.0

// Following is what a rehearsal's follower did: the document of its
// follow evidence.
type Following struct {
	Rows         int64   `json:"rows"`
	Transactions int64   `json:"transactions"`
	Seconds      float64 `json:"seconds"`
	// Lag is over every sample (one a second), the catch-up after the
	// copy included; LagUnderLoad over those taken while a load step (the
	// sweep) ran.
	Lag          Lag             `json:"lag"`
	LagUnderLoad Lag             `json:"lag_under_load"`
	Reconnects   int64           `json:"reconnects"`
	State        string          `json:"state"`
	Error        string          `json:"error,omitempty"` // why it stopped, when it failed
	From         follow.Position `json:"from"`
	Position     follow.Position `json:"position"` // the last it saved
}

// Lag is a follower's lag over a set of samples, in seconds.
type Lag struct {
	Samples int     `json:"samples"`
	P50     float64 `json:"p50_seconds"`
	P99     float64 `json:"p99_seconds"`
	Max     float64 `json:"max_seconds"`
}

// LagOf is the lag of samples.
func LagOf(samples []float64) Lag {
	l := Lag{Samples: len(samples)}
	if len(samples) == 0 {
		return l
	}
	v := slices.Clone(samples)
	slices.Sort(v)
	at := func(q float64) float64 { return v[min(len(v)-1, int(q*float64(len(v))))] }
	l.P50, l.P99, l.Max = at(0.5), at(0.99), v[len(v)-1]
	return l
}

func (l Lag) String() string {
	if l.Samples == 0 {
		return "no samples"
	}
	return fmt.Sprintf("p50 %.1f s, p99 %.1f s, max %.1f s", l.P50, l.P99, l.Max)
}

// judged is the lag following is judged on: under the load where a load
// step ran beside the follower, else over the whole follow.
func (f *Following) judged() (Lag, string) {
	if f.LagUnderLoad.Samples > 0 {
		return f.LagUnderLoad, "under the load"
	}
	return f.Lag, "overall"
}

// FollowEvidence is a follower's work as evidence for the pair: it fails
// when the follower failed, and warns when its lag p99 (under the load,
// where a load step ran beside it) passed MaxLagP99.
func FollowEvidence(source, target string, f *Following, tool string) (*store.Evidence, error) {
	doc, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("write follow evidence: %w", err)
	}
	lag, where := f.judged()
	summary := fmt.Sprintf("%d rows applied in %.0f s; lag %s %s", f.Rows, f.Seconds, where, lag)
	outcome := store.OutcomePass
	switch {
	case f.Error != "" || f.State == follow.StateFailed || f.State == follow.StateDDL:
		outcome = store.OutcomeFail
		summary = fmt.Sprintf("the follower stopped (%s): %s; %s", f.State, f.Error, summary)
	case lag.P99 > MaxLagP99:
		outcome = store.OutcomeWarn
		summary = fmt.Sprintf("lag p99 %.1f s %s, above %.0f s: %s", lag.P99, where, MaxLagP99, summary)
	}
	return &store.Evidence{Kind: store.KindFollow, Source: source, Target: target, Tool: tool,
		Outcome: outcome, Summary: summary, Document: doc}, nil
}

// WhileFollowing is what a verify's rechecks found beside a follower at
// work: chunks that differed and were compared again once the follower
// had passed the source's position.
type WhileFollowing struct {
	Rechecks             int `json:"rechecks"` // comparisons allowed per chunk
	ChunksRechecked      int `json:"chunks_rechecked"`
	Comparisons          int `json:"recheck_comparisons"`
	ChunksStillDiffering int `json:"chunks_still_differing"`
	// Aligned are the comparisons that read both sides at one position
	// of the source's binary log (verify.Options.Align).
	Aligned int  `json:"aligned_rechecks"`
	Equal   bool `json:"equal"`
}

func (w *WhileFollowing) String() string {
	s := fmt.Sprintf("%d chunks rechecked (%d comparisons, up to %d a chunk", w.ChunksRechecked, w.Comparisons, w.Rechecks)
	if w.Aligned > 0 {
		s += fmt.Sprintf(", %d at one position of the source's binary log", w.Aligned)
	}
	return s + fmt.Sprintf("), %d still differing", w.ChunksStillDiffering)
}

// VerifyWhileFollowingEvidence is a verify that ran beside a follower,
// with up to rechecks comparisons of each differing chunk after the
// follower passed the source's position: VerifyEvidence, with what the
// rechecks found in its summary and, under while_following, in its
// document.
func VerifyWhileFollowingEvidence(rep *verify.Report, runErr error, rechecks int, tool string) (*store.Evidence, error) {
	e, err := VerifyEvidence(rep, runErr, tool)
	if err != nil {
		return nil, err
	}
	wf := &WhileFollowing{Rechecks: rechecks, ChunksRechecked: rep.ChunksRechecked, Comparisons: rep.Rechecks,
		ChunksStillDiffering: rep.ChunksStillDiffering, Aligned: rep.AlignedRechecks, Equal: rep.Equal}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(e.Document, &doc); err != nil {
		return nil, fmt.Errorf("write verify evidence: %w", err)
	}
	if doc["while_following"], err = json.Marshal(wf); err != nil {
		return nil, fmt.Errorf("write verify evidence: %w", err)
	}
	if e.Document, err = json.MarshalIndent(doc, "", "  "); err != nil {
		return nil, fmt.Errorf("write verify evidence: %w", err)
	}
	e.Summary += "; while following: " + wf.String()
	return e, nil
}

// CutoverEvidence is a rehearsed cutover as evidence, its result the
// document: it fails when the data did not match once the follower had
// applied the source's final position, and is incomplete when the
// cutover could not finish (runErr).
func CutoverEvidence(res *follow.CutoverResult, runErr error, tool string) (*store.Evidence, error) {
	doc, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("write cutover evidence: %w", err)
	}
	summary := fmt.Sprintf("write-unavailable %.3f s", res.WriteUnavailable)
	outcome := store.OutcomePass
	switch {
	case runErr != nil:
		outcome, summary = store.OutcomeIncomplete, fmt.Sprintf("the cutover did not finish: %v; %s", runErr, summary)
	case res.Verified && !res.Equal:
		outcome = store.OutcomeFail
		summary = fmt.Sprintf("the data did not match after the final position: %d rows differ; %s", res.DifferingRows, summary)
	case res.Verified:
		summary += fmt.Sprintf("; data equal (%d rows compared)", res.Rows)
	default:
		summary += "; data not verified (verify: none)"
	}
	if runErr == nil && res.WrittenAfter != nil {
		outcome = store.OutcomeFail
		summary = fmt.Sprintf("the source was written after read_only = ON (on to %s); %s", res.WrittenAfter, summary)
	}
	if runErr == nil && res.ReadOnlyRestored {
		summary += "; read_only restored to " + res.ReadOnlyBefore
	}
	return &store.Evidence{Kind: store.KindCutover, Source: res.Source, Target: res.Target, Tool: tool,
		Outcome: outcome, Summary: summary, Document: doc}, nil
}

// readFollowing reads the latest follow and cutover evidence of the pair,
// and what the latest verify found beside a follower.
func (p *Page) readFollowing(ctx context.Context, st *store.Store, match func(string, string) bool) error {
	var f Following
	if ok, err := p.readDocument(ctx, st, store.KindFollow, match, &p.Follow, &f); err != nil {
		return err
	} else if ok {
		p.Following = &f
	}
	var c follow.CutoverResult
	if ok, err := p.readDocument(ctx, st, store.KindCutover, match, &p.Cutover, &c); err != nil {
		return err
	} else if ok {
		p.CutoverRun = &c
	}
	e, err := st.LatestEvidence(ctx, store.KindVerify, match)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var v struct {
		WhileFollowing *WhileFollowing `json:"while_following"`
	}
	if json.Unmarshal(e.Document, &v) == nil {
		p.VerifyFollowing = v.WhileFollowing
	}
	return nil
}

// readDocument reads the latest evidence of kind into the piece and its
// document into doc; ok is false when there is none, or its document
// cannot be read (the piece then says so).
func (p *Page) readDocument(ctx context.Context, st *store.Store, kind string, match func(string, string) bool, into *Piece, doc any) (bool, error) {
	e, err := st.LatestEvidence(ctx, kind, match)
	if errors.Is(err, store.ErrNotFound) {
		into.Status = StatusMissing
		return false, nil
	}
	if err != nil {
		return false, err
	}
	into.Status, into.Summary, into.At = statusOf(e.Outcome), e.Summary, e.At
	if err := json.NewDecoder(bytes.NewReader(e.Document)).Decode(doc); err != nil {
		into.Status, into.Summary = StatusIncomplete, fmt.Sprintf("the stored %s evidence could not be read: %v", kind, err)
		return false, nil
	}
	return true, nil
}
