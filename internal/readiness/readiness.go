// Package readiness gathers, for one source and target pair, the evidence
// shakedown has stored about a move (the check's findings, the variables
// diff, the latest sweep's verdicts of the target against the control, the
// latest replay and the latest verify, and a rehearsal's follower and
// cutover) into one page with a verdict: ready,
// ready with warnings, or not ready, with the reasons in order and, for
// each missing piece, the command that would produce it. It reads the
// store and never connects to a server, so a page can be rebuilt at any
// time.
//
// Verdict rules: anything that blocks (check errors, a verify that found
// differences, a workload slower on the target, a failed replay, a
// capacity below the production peak or the source's, a follower that
// failed, a rehearsed cutover whose data did not match) makes it
// "not ready"; so does the lack of a check or a verify, without which
// nothing is proven. Otherwise warnings (check warnings or checks not run,
// a target less durable than the source, inconclusive sweep levels,
// a follower's lag p99 above MaxLagP99, incomplete evidence) and a
// missing sweep or
// replay make it "ready with warnings"; with none, "ready".
package readiness

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shakedown/shakedown/internal/check"
	"github.com/shakedown/shakedown/internal/follow"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/vars"
)

// Verdicts.
const (
	Ready             = "ready"
	ReadyWithWarnings = "ready with warnings"
	NotReady          = "not ready"
)

// Statuses of one piece of evidence.
const (
	StatusPass       = "pass"
	StatusWarn       = "warn"
	StatusFail       = "fail"
	StatusIncomplete = "incomplete"
	StatusMissing    = "missing"
)

// Reason weights, in the order reasons are listed.
const (
	Blocking = "blocking"
	Warning  = "warning"
	Missing  = "missing"
)

// maxErrorReasons bounds the check errors listed one by one as reasons.
const maxErrorReasons = 10

// PageVersion is the version of the JSON document.
const PageVersion = 1

// Reason is one reason for the verdict.
type Reason struct {
	Weight   string `json:"weight"`   // blocking, warning or missing
	Evidence string `json:"evidence"` // check, variables, sweep, replay, verify
	Text     string `json:"text"`
	Command  string `json:"command,omitempty"` // what produces the missing evidence
}

// Piece is one piece of evidence.
type Piece struct {
	Status  string    `json:"status"`
	Summary string    `json:"summary"`
	At      time.Time `json:"at,omitempty"`
	// Command produces the evidence (again): shown when it is missing.
	Command string `json:"command"`
}

// SweepLevel is the target's verdict against the control at one thread
// level of one workload.
type SweepLevel struct {
	Workload string `json:"workload"`
	Threads  int    `json:"threads"`
	Verdict  string `json:"verdict"`
}

// Page is everything the readiness page shows.
type Page struct {
	Version int       `json:"version"`
	Source  string    `json:"source"` // URLs without passwords
	Target  string    `json:"target"`
	Built   time.Time `json:"built"`
	Verdict string    `json:"verdict"`
	Reasons []Reason  `json:"reasons"`

	Check      Piece              `json:"check"`
	Findings   []check.Finding    `json:"findings"`
	NotChecked []check.NotChecked `json:"not_checked"`
	Variables  Piece              `json:"variables"`
	VarDiffs   []vars.Difference  `json:"variable_differences"`
	// Downgrades are the variables in which the target is less durable
	// than the source: each is a warning.
	Downgrades []Downgrade  `json:"durability_downgrades"`
	Sweep      Piece        `json:"sweep"`
	SweepName  string       `json:"sweep_name,omitempty"`
	Control    string       `json:"control,omitempty"`
	Candidate  string       `json:"candidate,omitempty"`
	Levels     []SweepLevel `json:"sweep_levels"`
	Replay     Piece        `json:"replay"`
	Verify     Piece        `json:"verify"`
	// Capacity is the latest capacity search of the target with the
	// source as its control: its capacity, its headroom over the
	// production peak and its ratio to the source's.
	Capacity Piece `json:"capacity"`
	// Canary is the latest mirror run with the source as its control and
	// the target as a candidate: weeks of the application's reads
	// compared, weighed when there is one.
	Canary Piece `json:"canary"`
	// Follow is the latest rehearsal's follower of the source's binary
	// log and Following its figures; VerifyFollowing what the latest
	// verify found beside a follower at work; Cutover the latest
	// rehearsed cutover and CutoverRun its timeline. Each is weighed
	// when there is one.
	Follow          Piece                 `json:"follow"`
	Following       *Following            `json:"following,omitempty"`
	VerifyFollowing *WhileFollowing       `json:"verify_while_following,omitempty"`
	Cutover         Piece                 `json:"cutover"`
	CutoverRun      *follow.CutoverResult `json:"cutover_rehearsal,omitempty"`
}

// Options say which pair the page is about.
type Options struct {
	Source, Target *target.Target
	// SweepID picks a sweep; 0 means the latest sweep with the target
	// among its candidates.
	SweepID int64
	// StoreFlag is how commands in the page name the store ("--store
	// PATH"), so that the evidence they save is where readiness reads it.
	StoreFlag string
	Now       time.Time
}

// Build reads the store and makes the page.
func Build(ctx context.Context, st *store.Store, opts Options) (*Page, error) {
	src, dst := opts.Source.Redacted(), opts.Target.Redacted()
	p := &Page{Version: PageVersion, Source: src, Target: dst, Built: opts.Now, Reasons: []Reason{},
		Findings: []check.Finding{}, NotChecked: []check.NotChecked{}, VarDiffs: []vars.Difference{}, Downgrades: []Downgrade{}, Levels: []SweepLevel{}}
	if p.Built.IsZero() {
		p.Built = time.Now().UTC()
	}
	match := pairMatcher(opts.Source, opts.Target)
	sf := opts.StoreFlag
	if sf == "" {
		sf = "--store FILE"
	}
	p.Check.Command = fmt.Sprintf("shakedown check %s %s %s", src, dst, sf)
	p.Variables.Command = p.Check.Command
	p.Verify.Command = fmt.Sprintf("shakedown verify %s %s --databases DB,... %s", src, dst, sf)
	// Replay stores its result as evidence of kind "replay" for the same
	// source (the control) and target: see store.KindReplay.
	p.Replay.Command = fmt.Sprintf("shakedown capture SOURCE-LOG -o app.capture; shakedown replay app.capture --control %s --candidate %s %s", src, dst, sf)
	p.Sweep.Command = fmt.Sprintf("shakedown sweep PLAN.yaml %s", sf)
	p.Capacity.Command = fmt.Sprintf("shakedown capacity WORKLOAD --slo 'p99<=20ms' --target source=%s --target candidate=%s --peak QPS %s", src, dst, sf)
	p.Canary.Command = fmt.Sprintf("shakedown mirror --control %s --candidate candidate=%s %s", src, dst, sf)
	// Only a rehearsal stores its follower's work and its cutover.
	p.Follow.Command = fmt.Sprintf("shakedown rehearse PLAN.yaml %s (a plan with data: copy and follow:)", sf)
	p.Cutover.Command = fmt.Sprintf("shakedown rehearse PLAN.yaml %s (a plan with follow: and cutover: {allow-set-global: true})", sf)

	if err := p.readCheck(ctx, st, match); err != nil {
		return nil, err
	}
	if err := p.readEvidence(ctx, st, store.KindVerify, match, &p.Verify); err != nil {
		return nil, err
	}
	if err := p.readEvidence(ctx, st, store.KindReplay, match, &p.Replay); err != nil {
		return nil, err
	}
	if err := p.readEvidence(ctx, st, store.KindCapacity, match, &p.Capacity); err != nil {
		return nil, err
	}
	if err := p.readEvidence(ctx, st, store.KindMirror, match, &p.Canary); err != nil {
		return nil, err
	}
	if err := p.readSweep(ctx, st, opts); err != nil {
		return nil, err
	}
	if err := p.readFollowing(ctx, st, match); err != nil {
		return nil, err
	}
	p.decide()
	return p, nil
}

// pairMatcher matches stored evidence by the servers it names: host and
// port (or socket) of each side, whatever the user and database.
func pairMatcher(src, dst *target.Target) func(string, string) bool {
	s, d := endpointOf(src), endpointOf(dst)
	return func(source, tgt string) bool {
		return endpointOfURL(source) == s && endpointOfURL(tgt) == d
	}
}

func endpointOf(t *target.Target) string { return t.Endpoints()[0].String() }

func endpointOfURL(u string) string {
	t, err := target.Parse(u)
	if err != nil {
		return u
	}
	return endpointOf(t)
}

func (p *Page) readCheck(ctx context.Context, st *store.Store, match func(string, string) bool) error {
	e, err := st.LatestEvidence(ctx, store.KindCheck, match)
	if errors.Is(err, store.ErrNotFound) {
		p.Check.Status, p.Variables.Status = StatusMissing, StatusMissing
		return nil
	}
	if err != nil {
		return err
	}
	p.Check.At, p.Variables.At = e.At, e.At
	rep, err := check.ReadJSON(e.Document)
	if err != nil {
		p.Check.Status, p.Check.Summary = StatusIncomplete, "the stored check could not be read: "+err.Error()
		p.Variables.Status = StatusIncomplete
		return nil
	}
	p.Check.Status, p.Check.Summary = statusOf(e.Outcome), rep.Summary()
	p.Findings, p.NotChecked, p.VarDiffs = rep.Findings, rep.NotChecked, rep.Variables
	if p.Findings == nil {
		p.Findings = []check.Finding{}
	}
	if p.NotChecked == nil {
		p.NotChecked = []check.NotChecked{}
	}
	if p.VarDiffs == nil {
		p.VarDiffs = []vars.Difference{}
	}
	outcome, summary, downgrades := JudgeVariables(p.VarDiffs)
	p.Variables.Status, p.Variables.Summary, p.Downgrades = statusOf(outcome), summary, downgrades
	return nil
}

func (p *Page) readEvidence(ctx context.Context, st *store.Store, kind string, match func(string, string) bool, into *Piece) error {
	e, err := st.LatestEvidence(ctx, kind, match)
	if errors.Is(err, store.ErrNotFound) {
		into.Status = StatusMissing
		return nil
	}
	if err != nil {
		return err
	}
	into.Status, into.Summary, into.At = statusOf(e.Outcome), e.Summary, e.At
	return nil
}

func statusOf(outcome string) string {
	switch outcome {
	case store.OutcomePass:
		return StatusPass
	case store.OutcomeWarn:
		return StatusWarn
	case store.OutcomeFail:
		return StatusFail
	}
	return StatusIncomplete
}

// decide sets the verdict and the reasons: blocking ones first, then
// warnings, then missing evidence.
func (p *Page) decide() {
	var blocking, warnings, missing []Reason
	add := func(weight, evidence, text, command string) {
		r := Reason{Weight: weight, Evidence: evidence, Text: text, Command: command}
		switch weight {
		case Blocking:
			blocking = append(blocking, r)
		case Warning:
			warnings = append(warnings, r)
		default:
			missing = append(missing, r)
		}
	}
	type rule struct {
		name    string
		piece   *Piece
		vital   bool // without it nothing is proven
		missing string
	}
	pieces := []rule{
		{"check", &p.Check, true, "no check yet: compatibility, accounts and the source's replication prerequisites are unknown"},
		{"sweep", &p.Sweep, false, "no sweep with this target yet: its speed against the control is unknown " +
			"(a plan with the source, or a copy of it, as the control and " + p.Target + " as a candidate)"},
		{"replay", &p.Replay, false, "no replay yet: whether the application's own statements return the same on the target is unknown " +
			"(capture the source's traffic with shakedown capture, then replay it on the source and the target)"},
		{"verify", &p.Verify, true, "no verify yet: whether the target holds exactly the source's data is unknown"},
	}
	// A capacity search is weighed when there is one: a capacity below the
	// production peak or the source's, or an SLO met at no rate, blocks;
	// without one the page says how to make it but is not held back.
	if p.Capacity.Status != StatusMissing {
		pieces = append(pieces, rule{name: "capacity", piece: &p.Capacity})
	}
	// A canary too: a class whose results differ blocks.
	if p.Canary.Status != StatusMissing {
		pieces = append(pieces, rule{name: "canary", piece: &p.Canary})
	}
	// So are a follower's work and a rehearsed cutover: a follower that
	// failed or a cutover whose data did not match blocks, a lag above
	// MaxLagP99 warns.
	for _, pc := range []rule{{name: "follow", piece: &p.Follow}, {name: "cutover", piece: &p.Cutover}} {
		if pc.piece.Status != StatusMissing {
			pieces = append(pieces, pc)
		}
	}
	for _, pc := range pieces {
		switch pc.piece.Status {
		case StatusMissing:
			if pc.vital {
				add(Blocking, pc.name, pc.missing, pc.piece.Command)
			} else {
				add(Missing, pc.name, pc.missing, pc.piece.Command)
			}
		case StatusFail:
			add(Blocking, pc.name, pc.name+": "+pc.piece.Summary, "")
		case StatusWarn:
			add(Warning, pc.name, pc.name+": "+pc.piece.Summary, "")
		case StatusIncomplete:
			add(Warning, pc.name, pc.name+" is incomplete: "+pc.piece.Summary, pc.piece.Command)
		}
	}
	// Each durability downgrade is a warning of its own, named with both
	// values and what it risks.
	for _, d := range p.Downgrades {
		add(Warning, "variables", fmt.Sprintf("variables: %s is %s on the source and %s on the target: less durable, %s",
			d.Variable, d.Source, d.Target, d.Risk), "")
	}
	// The check's errors, one reason each (up to maxErrorReasons), right
	// after the check's line; the findings table lists them all.
	var errs []Reason
	more := 0
	for _, f := range p.Findings {
		if f.Severity != check.Error {
			continue
		}
		if len(errs) == maxErrorReasons {
			more++
			continue
		}
		errs = append(errs, Reason{Weight: Blocking, Evidence: "check", Text: fmt.Sprintf("%s %s: %s", f.Check, f.Object, f.Message)})
	}
	if more > 0 {
		errs = append(errs, Reason{Weight: Blocking, Evidence: "check", Text: fmt.Sprintf("and %d more errors of the check (its findings list them)", more)})
	}
	blocking = append(blocking, errs...)
	p.Reasons = append(append(append(p.Reasons, blocking...), warnings...), missing...)
	switch {
	case len(blocking) > 0:
		p.Verdict = NotReady
	case len(warnings) > 0 || len(missing) > 0:
		p.Verdict = ReadyWithWarnings
	default:
		p.Verdict = Ready
	}
}
