package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestEvidence(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	add := func(kind, src, dst, outcome string) int64 {
		t.Helper()
		id, err := s.AddEvidence(ctx, &Evidence{Kind: kind, Source: src, Target: dst, At: at, Outcome: outcome,
			Summary: kind + " " + outcome, Document: []byte(`{"version":1}`)})
		if err != nil {
			t.Fatalf("AddEvidence: %v", err)
		}
		return id
	}
	first := add(KindCheck, "mysql://a@h:1/db", "mysql://a@h:2/db", OutcomeFail)
	add(KindCheck, "mysql://a@h:1/db", "mysql://a@h:3/db", OutcomePass)
	second := add(KindCheck, "mysql://a@h:1/db", "mysql://a@h:2/db", OutcomeWarn)
	add(KindVerify, "mysql://a@h:1/db", "mysql://a@h:2/db", OutcomePass)
	if _, err := s.AddEvidence(ctx, &Evidence{Kind: KindCheck, Outcome: "maybe"}); err == nil {
		t.Errorf("AddEvidence with outcome %q: got nil error, want one", "maybe")
	}
	s.Close()

	// Reopened, as a later readiness run would.
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s2.Close()
	to2 := func(src, dst string) bool { return dst == "mysql://a@h:2/db" }
	tests := []struct {
		name    string
		kind    string
		match   func(string, string) bool
		wantID  int64
		wantOut string
		wantErr error
	}{
		{"newest of the pair", KindCheck, to2, second, OutcomeWarn, nil},
		{"newest of any pair", KindCheck, nil, second, OutcomeWarn, nil},
		{"other pair", KindCheck, func(_, dst string) bool { return dst == "mysql://a@h:3/db" }, second - 1, OutcomePass, nil},
		{"no such pair", KindCheck, func(_, dst string) bool { return dst == "nowhere" }, 0, "", ErrNotFound},
		{"no such kind", KindReplay, nil, 0, "", ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := s2.LatestEvidence(ctx, tc.kind, tc.match)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("LatestEvidence: got error %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if e.ID != tc.wantID || e.Outcome != tc.wantOut {
				t.Errorf("got id %d outcome %q, want id %d outcome %q", e.ID, e.Outcome, tc.wantID, tc.wantOut)
			}
			if !e.At.Equal(at) || string(e.Document) != `{"version":1}` || e.Summary != KindCheck+" "+tc.wantOut {
				t.Errorf("got at %v, document %q, summary %q; want them as stored", e.At, e.Document, e.Summary)
			}
		})
	}
	if first == second {
		t.Errorf("ids: got %d twice, want distinct", first)
	}
}
