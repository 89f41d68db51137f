package readiness

import (
	"bytes"
	"fmt"
	"github.com/shakedown/shakedown/internal/stats"

	"github.com/shakedown/shakedown/internal/check"
	"github.com/shakedown/shakedown/internal/replay"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/verify"
)

// The evidence a page reads is judged here, where it is read: each tool's
// report becomes the records verify, replay and check --store save, with
// the outcome and the one-line summary the page shows. tool is the
// version of shakedown that made the report.

// VerifyEvidence is a verify result as evidence. A run that was
// interrupted or failed on some table proves nothing about the rest: it
// is incomplete.
func VerifyEvidence(rep *verify.Report, runErr error, tool string) (*store.Evidence, error) {
	var doc bytes.Buffer
	if err := verify.WriteJSON(&doc, rep); err != nil {
		return nil, err
	}
	outcome, summary := store.OutcomePass, fmt.Sprintf("%d tables equal", len(rep.Tables))
	switch {
	case rep.Interrupted || rep.Failed > 0 || runErr != nil:
		outcome = store.OutcomeIncomplete
		summary = fmt.Sprintf("incomplete: %d of %d tables could not be checked", rep.Failed, len(rep.Tables))
		if rep.Interrupted {
			summary = "interrupted before every table was checked"
		}
	case !rep.Equal:
		outcome = store.OutcomeFail
		differing := 0
		for _, t := range rep.Tables {
			if !t.Equal {
				differing++
			}
		}
		summary = fmt.Sprintf("%d of %d tables differ: %d differing rows, %d schema differences",
			differing, len(rep.Tables), rep.DifferingRows, rep.SchemaDifferences)
	}
	return &store.Evidence{
		Kind: store.KindVerify, Source: rep.Source, Target: rep.Target, At: rep.Started, Tool: tool,
		Outcome: outcome, Summary: summary, Document: doc.Bytes(),
	}, nil
}

// ReplayEvidence is a replay as evidence: one record per candidate,
// against the control, each with the whole report as its document. A
// candidate fails on a differing result or a new error, warns on a slower
// fingerprint, a lost connection or a replay that the client limited (its
// latency is not judged), and an interrupted replay is incomplete.
func ReplayEvidence(rep *replay.Report, tool string) ([]*store.Evidence, error) {
	var doc bytes.Buffer
	if err := replay.WriteJSON(&doc, rep); err != nil {
		return nil, err
	}
	// A replay the client limited judged no latency: it cannot pass.
	bound := rep.Client != nil && rep.Client.Bound
	var out []*store.Evidence
	for i, cand := range rep.Candidates {
		var diffs, newErrs, slower int64
		for _, f := range rep.Fingerprints {
			if i >= len(f.Candidates) {
				continue
			}
			cf := f.Candidates[i]
			diffs += cf.Differences
			newErrs += cf.NewErrors
			if cf.Verdict == stats.Slower {
				slower++
			}
		}
		outcome := store.OutcomePass
		switch {
		case rep.Interrupted:
			outcome = store.OutcomeIncomplete
		case diffs > 0 || newErrs > 0:
			outcome = store.OutcomeFail
		case slower > 0 || rep.LostConns > 0 || bound:
			outcome = store.OutcomeWarn
		}
		summary := fmt.Sprintf("%d statements replayed: %d differing, %d new errors, %d slower fingerprints", rep.Statements, diffs, newErrs, slower)
		if bound {
			summary += " (client-bound: latency not judged)"
		}
		if rep.Interrupted {
			summary += " (interrupted)"
		}
		out = append(out, &store.Evidence{
			Kind: store.KindReplay, Source: rep.Control.URL, Target: cand.URL, At: rep.Started, Tool: tool,
			Outcome: outcome, Summary: summary, Document: doc.Bytes(),
		})
	}
	return out, nil
}

// CheckEvidence is a check's report as evidence.
func CheckEvidence(rep *check.Report, tool string) (*store.Evidence, error) {
	var doc bytes.Buffer
	if err := check.WriteJSON(&doc, rep); err != nil {
		return nil, err
	}
	outcome := store.OutcomePass
	switch {
	case rep.Errors > 0:
		outcome = store.OutcomeFail
	case rep.Warnings > 0 || len(rep.NotChecked) > 0:
		outcome = store.OutcomeWarn
	}
	return &store.Evidence{
		Kind: store.KindCheck, Source: rep.Source.URL, Target: rep.Target.URL, At: rep.Started, Tool: tool,
		Outcome: outcome, Summary: rep.Summary(), Document: doc.Bytes(),
	}, nil
}
