package store

import (
	"context"
	"fmt"
	"time"

	"github.com/shakedown/shakedown/internal/target"
)

// Evidence kinds: what a readiness page gathers besides sweeps.
const (
	KindCheck  = "check"  // shakedown check --store
	KindVerify = "verify" // shakedown verify --store
	KindReplay = "replay" // shakedown replay --store
	// KindCapacity is a capacity search's, one per target and search,
	// with the control's URL as its source and the target's as its
	// target.
	KindCapacity = "capacity"
	// KindVars is a variables comparison a rehearsal stored; the page
	// reads the check's, which holds the same comparison.
	KindVars = "vars"
	// KindFollow is what a rehearsal's follower of the source's binary
	// log did, stored when it stops: rows applied, its lag (under the
	// sweep's load apart), its final state and position.
	KindFollow = "follow"
	// KindCutover is a rehearsed cutover: its document is the cutover's
	// timeline and outcome (follow.CutoverResult).
	KindCutover = "cutover"
	// KindMirror is a snapshot period of a mirror's canary, one per
	// candidate and period, with the control's URL as its source: its
	// document is mirror.Stored.
	KindMirror = "mirror"
)

// Evidence outcomes, in words every kind shares so that a readiness page
// can weigh evidence it does not otherwise understand.
const (
	OutcomePass       = "pass"       // nothing found against the move
	OutcomeWarn       = "warn"       // works, with things to decide
	OutcomeFail       = "fail"       // something blocks the move
	OutcomeIncomplete = "incomplete" // interrupted or partial: proves nothing
)

// Evidence is one stored result of a check, a verify or a replay for a
// source and target pair. Document is the command's own JSON document
// (check's --json, verify's --json, replay's result), kept whole so the
// page can be rebuilt later; Outcome and Summary are enough to weigh it
// without reading the document.
type Evidence struct {
	ID       int64
	Kind     string
	Source   string // the source's URL without password (for replay, the control's)
	Target   string // the target's URL without password
	At       time.Time
	Tool     string // shakedown's version
	Outcome  string
	Summary  string // one line, e.g. "2 errors, 3 warnings, 1 notice"
	Document []byte
}

const evidenceSchema = `
CREATE TABLE IF NOT EXISTS evidence (
	id        INTEGER PRIMARY KEY AUTOINCREMENT,
	kind      TEXT NOT NULL,
	source    TEXT NOT NULL,
	target    TEXT NOT NULL,
	at        TEXT NOT NULL,
	tool      TEXT NOT NULL DEFAULT '',
	outcome   TEXT NOT NULL,
	summary   TEXT NOT NULL DEFAULT '',
	document  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS evidence_by_kind ON evidence(kind, id);
`

// AddEvidence records e and sets e.ID.
func (s *Store) AddEvidence(ctx context.Context, e *Evidence) (int64, error) {
	switch e.Outcome {
	case OutcomePass, OutcomeWarn, OutcomeFail, OutcomeIncomplete:
	default:
		return 0, fmt.Errorf("record %s result: unknown outcome %q", e.Kind, e.Outcome)
	}
	at := e.At
	if at.IsZero() {
		at = time.Now()
	}
	res, err := s.db.ExecContext(ctx, `INSERT INTO evidence(kind, source, target, at, tool, outcome, summary, document)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, e.Kind, e.Source, e.Target, timeText(at), e.Tool, e.Outcome, e.Summary, string(e.Document))
	if err != nil {
		return 0, fmt.Errorf("record %s result: %w", e.Kind, err)
	}
	if e.ID, err = res.LastInsertId(); err != nil {
		return 0, fmt.Errorf("record %s result: %w", e.Kind, err)
	}
	e.At = at
	return e.ID, nil
}

// LatestEvidence returns the newest evidence of a kind whose source and
// target match (match is given the stored source and target; nil matches
// everything), or an error wrapping ErrNotFound.
func (s *Store) LatestEvidence(ctx context.Context, kind string, match func(source, target string) bool) (*Evidence, error) {
	rows, err := s.db.QueryContext(ctx, evidenceSelect+` WHERE kind = ? ORDER BY id DESC`, kind)
	if err != nil {
		return nil, fmt.Errorf("read %s results: %w", kind, err)
	}
	defer rows.Close()
	for rows.Next() {
		e, err := scanEvidence(rows)
		if err != nil {
			return nil, fmt.Errorf("read %s results: %w", kind, err)
		}
		if match == nil || match(e.Source, e.Target) {
			return &e, nil
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read %s results: %w", kind, err)
	}
	return nil, fmt.Errorf("%s result: %w", kind, ErrNotFound)
}

// EvidenceOfKind returns every stored evidence of kind, oldest first.
func (s *Store) EvidenceOfKind(ctx context.Context, kind string) ([]Evidence, error) {
	out, err := target.QueryAll(ctx, s.db, scanEvidence, evidenceSelect+` WHERE kind = ? ORDER BY id`, kind)
	if err != nil {
		return nil, fmt.Errorf("read %s results: %w", kind, err)
	}
	return out, nil
}

const evidenceSelect = `SELECT id, kind, source, target, at, tool, outcome, summary, document FROM evidence`

func scanEvidence(row target.Scanner) (Evidence, error) {
	var e Evidence
	var at, doc string
	if err := row.Scan(&e.ID, &e.Kind, &e.Source, &e.Target, &at, &e.Tool, &e.Outcome, &e.Summary, &doc); err != nil {
		return Evidence{}, err
	}
	e.At, e.Document = parseTime(at), []byte(doc)
	return e, nil
}
