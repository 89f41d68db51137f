package readiness

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/follow"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/verify"
)

func TestFollowEvidence(t *testing.T) {
	calm, busy := LagOf([]float64{0.2, 0.4, 0.1}), LagOf([]float64{1.5, 2.6, 3.1})
	tests := []struct {
		name    string
		f       Following
		outcome string
		summary string
	}{
		{"calm under the load", Following{Rows: 10, Seconds: 30, Lag: busy, LagUnderLoad: calm, State: follow.StateStopped}, store.OutcomePass,
			"10 rows applied in 30 s; lag under the load p50 0.2 s, p99 0.4 s, max 0.4 s"},
		{"behind under the load", Following{Rows: 10, Seconds: 30, Lag: calm, LagUnderLoad: busy, State: follow.StateStopped}, store.OutcomeWarn,
			"lag p99 3.1 s under the load, above 2 s: 10 rows applied"},
		{"no load: the lag overall", Following{Rows: 10, Seconds: 30, Lag: busy, State: follow.StateStopped}, store.OutcomeWarn,
			"lag p99 3.1 s overall, above 2 s"},
		{"no samples", Following{Seconds: 0.4, State: follow.StateStopped}, store.OutcomePass, "lag overall no samples"},
		{"stopped at a DDL statement", Following{Rows: 10, Seconds: 30, Lag: calm, State: follow.StateDDL, Error: "stopped before a DDL statement: DROP TABLE shop.x"},
			store.OutcomeFail, "the follower stopped (stopped at ddl): stopped before a DDL statement: DROP TABLE shop.x;"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := FollowEvidence(srcURL, dstURL, &tc.f, "test")
			if err != nil {
				t.Fatal(err)
			}
			if e.Kind != store.KindFollow || e.Outcome != tc.outcome || !strings.Contains(e.Summary, tc.summary) {
				t.Errorf("got %s %s %q, want follow %s with %q", e.Kind, e.Outcome, e.Summary, tc.outcome, tc.summary)
			}
			var back Following
			if err := json.Unmarshal(e.Document, &back); err != nil || back.Lag != tc.f.Lag || back.Rows != tc.f.Rows {
				t.Errorf("document: got %+v (%v), want the figures back", back, err)
			}
		})
	}
}

// TestVerifyWhileFollowingEvidence: a verify beside a follower carries its
// rechecks in its summary and, under while_following, in its document,
// 0s included; the rest of the document is verify's.
func TestVerifyWhileFollowingEvidence(t *testing.T) {
	rep := &verify.Report{Source: srcURL, Target: dstURL, Equal: true, Tables: []*verify.TableReport{{Table: "shop.a", Equal: true}},
		ChunksRechecked: 2, Rechecks: 3}
	e, err := VerifyWhileFollowingEvidence(rep, nil, 3, "test")
	if err != nil {
		t.Fatal(err)
	}
	if e.Kind != store.KindVerify || e.Outcome != store.OutcomePass ||
		e.Summary != "1 tables equal; while following: 2 chunks rechecked (3 comparisons, up to 3 a chunk), 0 still differing" {
		t.Errorf("got %s %s %q", e.Kind, e.Outcome, e.Summary)
	}
	var doc struct {
		Equal          bool                       `json:"equal"`
		Tables         []json.RawMessage          `json:"tables"`
		WhileFollowing map[string]json.RawMessage `json:"while_following"`
	}
	if err := json.Unmarshal(e.Document, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"rechecks", "chunks_rechecked", "chunks_still_differing"} {
		if _, ok := doc.WhileFollowing[k]; !ok {
			t.Errorf("document: while_following lacks %s: %s", k, e.Document)
		}
	}
	if !doc.Equal || len(doc.Tables) != 1 {
		t.Errorf("document: got %s, want verify's report under it", e.Document)
	}
}

func TestCutoverEvidence(t *testing.T) {
	written := func(r *follow.CutoverResult) *follow.CutoverResult {
		r.WrittenAfter = &follow.Position{File: "binlog.000002", Pos: 4}
		return r
	}
	res := func(equal, verified bool) *follow.CutoverResult {
		return &follow.CutoverResult{Source: srcURL, Target: dstURL, Rehearsal: true, WriteUnavailable: 0.25, ReadOnlyBefore: "OFF",
			ReadOnlyRestored: true, Verified: verified, Equal: equal, DifferingRows: 4, Rows: 100}
	}
	tests := []struct {
		name    string
		res     *follow.CutoverResult
		err     error
		outcome string
		summary string
	}{
		{"equal", res(true, true), nil, store.OutcomePass, "write-unavailable 0.250 s; data equal (100 rows compared); read_only restored to OFF"},
		{"differs", res(false, true), nil, store.OutcomeFail, "the data did not match after the final position: 4 rows differ; write-unavailable 0.250 s"},
		{"not verified", res(false, false), nil, store.OutcomePass, "data not verified (verify: none)"},
		{"did not finish", res(false, false), errors.New("the follower is still behind"), store.OutcomeIncomplete, "the cutover did not finish: the follower is still behind"},
		{"written under read_only", written(res(true, true)), nil, store.OutcomeFail, "the source was written after read_only = ON (on to binlog.000002:4); write-unavailable 0.250 s; data equal"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := CutoverEvidence(tc.res, tc.err, "test")
			if err != nil {
				t.Fatal(err)
			}
			if e.Kind != store.KindCutover || e.Outcome != tc.outcome || !strings.Contains(e.Summary, tc.summary) {
				t.Errorf("got %s %s %q, want cutover %s with %q", e.Kind, e.Outcome, e.Summary, tc.outcome, tc.summary)
			}
		})
	}
}
