package readiness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/check"
	"github.com/shakedown/shakedown/internal/follow"
	"github.com/shakedown/shakedown/internal/golden"
	"github.com/shakedown/shakedown/internal/replay"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/stats"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/vars"
)

const (
	srcURL = "mysql://app@10.0.0.1:3306/shop"
	dstURL = "mysql://app@10.0.0.2:4000/shop"
)

var at = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// seed says what the store holds for the pair.
type seed struct {
	check       string  // "", or the check's outcome: pass, warn, fail
	verify      string  // "", or verify's outcome
	replay      string  // "", or replay's outcome
	sweepFactor float64 // 0: no sweep; else the candidate's speed against the control
	capacity    string  // "", or a capacity search's outcome: pass (headroom) or fail (below the peak)
	canary      string  // "", or a mirror run's outcome: pass (no class differs) or fail
	// lessDurable gives the target innodb_flush_log_at_trx_commit=0 and
	// sync_binlog=0 where the source has 1 and 1.
	lessDurable bool
	// follow is "", or a follower's: pass, warn (a lag p99 of 3.4 s
	// under the load) or fail (stopped at a DDL statement); cutover "",
	// or a rehearsed cutover's: pass or fail (the data differed). With
	// follow, the verify ran beside the follower.
	follow, cutover string
}

func openStore(t *testing.T, s seed) *store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "shakedown.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	// Evidence about another pair must never be picked.
	if _, err := st.AddEvidence(ctx, &store.Evidence{Kind: store.KindVerify, Source: srcURL, Target: "mysql://app@10.0.0.9:3306/shop",
		At: at, Outcome: store.OutcomeFail, Summary: "another target"}); err != nil {
		t.Fatal(err)
	}
	if s.check != "" {
		rep := checkReport(s.check)
		if s.lessDurable {
			rep.Variables = append(lessDurable, rep.Variables...)
		}
		var doc bytes.Buffer
		if err := check.WriteJSON(&doc, rep); err != nil {
			t.Fatal(err)
		}
		// The user and database in the URL do not matter, the servers do.
		if _, err := st.AddEvidence(ctx, &store.Evidence{Kind: store.KindCheck, Source: "mysql://root@10.0.0.1:3306/mysql", Target: dstURL,
			At: at, Outcome: s.check, Summary: rep.Summary(), Document: doc.Bytes()}); err != nil {
			t.Fatal(err)
		}
	}
	if s.verify != "" {
		summary := map[string]string{store.OutcomePass: "12 tables equal", store.OutcomeFail: "1 of 12 tables differ: 3 differing rows, 0 schema differences",
			store.OutcomeIncomplete: "interrupted before every table was checked"}[s.verify]
		var doc []byte
		if s.follow != "" {
			summary += "; while following: 2 chunks rechecked (3 comparisons, up to 3 a chunk), 0 still differing"
			doc = []byte(`{"equal": true, "while_following": {"rechecks": 3, "chunks_rechecked": 2, "recheck_comparisons": 3, "chunks_still_differing": 0, "equal": true}}`)
		}
		if _, err := st.AddEvidence(ctx, &store.Evidence{Kind: store.KindVerify, Source: srcURL, Target: dstURL, At: at.Add(time.Hour),
			Outcome: s.verify, Summary: summary, Document: doc}); err != nil {
			t.Fatal(err)
		}
	}
	if s.follow != "" {
		addFollow(t, st, s.follow)
	}
	if s.cutover != "" {
		addCutover(t, st, s.cutover)
	}
	if s.replay != "" {
		if _, err := st.AddEvidence(ctx, &store.Evidence{Kind: store.KindReplay, Source: srcURL, Target: dstURL, At: at.Add(2 * time.Hour),
			Outcome: s.replay, Summary: "1,204 statements replayed: results the same"}); err != nil {
			t.Fatal(err)
		}
	}
	if s.sweepFactor > 0 {
		addSweep(t, st, s.sweepFactor)
	}
	if s.capacity != "" {
		// As capacity --store writes it: the user and database differ
		// from the page's, the servers are the same.
		summary := map[string]string{
			store.OutcomePass: "capacity 1840.2/s under p99<=20ms, between 1840.2/s (held) and 1872.0/s (failed), confirmed by 2 of 2 repeats; headroom x1.53 over the production peak of 1200.0/s",
			store.OutcomeFail: "capacity 910.4/s under p99<=20ms, between 910.4/s (held) and 930.1/s (failed), confirmed by 2 of 2 repeats; no headroom over the production peak of 1200.0/s",
		}[s.capacity]
		if _, err := st.AddEvidence(ctx, &store.Evidence{Kind: store.KindCapacity, Source: "mysql://shakedown@10.0.0.1:3306/sbtest",
			Target: "mysql://shakedown@10.0.0.2:4000/sbtest", At: at.Add(2 * time.Hour), Outcome: s.capacity, Summary: summary}); err != nil {
			t.Fatal(err)
		}
	}
	if s.canary != "" {
		summary := map[string]string{
			store.OutcomePass: "canary: 2 h, 41,000 statements, 0 classes differ",
			store.OutcomeFail: "canary: 2 h, 41,000 statements, 1 class differs: select `c` from `sbtest1` where `id` = ?",
		}[s.canary]
		if _, err := st.AddEvidence(ctx, &store.Evidence{Kind: store.KindMirror, Source: "mysql://shakedown@10.0.0.1:3306/sbtest",
			Target: "mysql://shakedown@10.0.0.2:4000/sbtest", At: at.Add(2 * time.Hour), Outcome: s.canary, Summary: summary}); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// lessDurable is the variables diff of a target less durable than the
// source, as the check stores it.
var lessDurable = []vars.Difference{
	{Name: "innodb_flush_log_at_trx_commit", Values: []string{"1", "0"}, Relevant: true, Group: "durability", Explain: "commits"},
	{Name: "sync_binlog", Values: []string{"1", "0"}, Relevant: true, Group: "durability", Explain: "binary log syncs"},
	{Name: "innodb_buffer_pool_size", Values: []string{"134217728", "268435456"}, Relevant: true, Group: "memory", Explain: "page cache"},
}

func checkReport(outcome string) *check.Report {
	rep := &check.Report{
		Version: check.DocumentVersion, Started: at, Databases: []string{"shop"},
		Source:    check.Endpoint{URL: srcURL, Version: "10.11.6-MariaDB", Flavour: "mariadb"},
		Target:    check.Endpoint{URL: dstURL, Version: "8.0.36", Flavour: "mysql"},
		Findings:  []check.Finding{},
		Variables: []vars.Difference{{Name: "sql_mode", Values: []string{"STRICT_TRANS_TABLES", "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES"}, Relevant: true, Explain: "strictness and syntax"}},
	}
	switch outcome {
	case store.OutcomeFail:
		rep.Findings = append(rep.Findings, check.Finding{Check: "binlog_off", Severity: check.Error, Object: "log_bin",
			Message: "the source writes no binary log", Fix: "log_bin and server_id in the configuration file"})
		rep.Errors = 1
		fallthrough
	case store.OutcomeWarn:
		rep.Findings = append(rep.Findings, check.Finding{Check: "sql_mode", Severity: check.Warning, Object: "sql_mode",
			Message: "ONLY_FULL_GROUP_BY only on the target", Fix: "SET GLOBAL sql_mode on the target"})
		rep.Warnings = 1
	}
	return rep
}

// addSweep stores a sweep of the source (control) and the target
// (candidate), 2 workloads x 2 thread levels x 5 repeats: enough for the
// statistics to call a clear difference.
func addSweep(t *testing.T, st *store.Store, factor float64) {
	t.Helper()
	ctx := context.Background()
	sw := &store.Sweep{Name: "cutover", StartedAt: at, Status: store.SweepDone, Steps: 40, ClientHost: "bench", Tool: "test",
		Settings: store.Settings{TimeS: 10, Repeats: 5, Threads: []int{4, 16}, Workloads: []string{"oltp_read_only", "oltp_write_only"}}}
	id, err := st.CreateSweep(ctx, sw, []store.Target{
		{Name: "today", Role: "control", URL: "mysql://bench@10.0.0.1:3306/sbtest", Flavour: "mariadb"},
		{Name: "candidate", Role: "candidate", URL: "mysql://bench@10.0.0.2:4000/sbtest", Flavour: "mysql"},
	})
	if err != nil {
		t.Fatal(err)
	}
	step := 0
	for _, wl := range sw.Settings.Workloads {
		for _, th := range sw.Settings.Threads {
			for rep := 1; rep <= 5; rep++ {
				for _, tg := range []struct {
					name, role string
					f          float64
				}{{"today", "control", 1}, {"candidate", "candidate", factor}} {
					step++
					qps := 1000 * float64(th) * tg.f * (1 + 0.002*float64(rep))
					if _, err := st.AddRun(ctx, &store.Run{SweepID: id, Step: step, Target: tg.name, Role: tg.role, Workload: wl, Threads: th,
						Repeat: rep, Status: store.RunOK, StartedAt: at, Result: &result.Result{Workload: wl, Threads: th, QPS: qps, TPS: qps / 20}}); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
}

// addFollow stores a rehearsal's follower's work: outcome pass, warn (a
// lag p99 under the load above MaxLagP99) or fail (it stopped at a DDL
// statement).
func addFollow(t *testing.T, st *store.Store, outcome string) {
	t.Helper()
	f := &Following{Rows: 48210, Transactions: 12040, Seconds: 95.2, Reconnects: 1, State: follow.StateStopped,
		Lag:          LagOf([]float64{9.5, 4.2, 1.1, 0.4, 0.3, 0.2, 0.2, 0.1, 0, 0}),
		LagUnderLoad: LagOf([]float64{0.4, 0.3, 0.6, 0.9, 0.2}),
		From:         follow.Position{File: "binlog.000004", Pos: 5512}, Position: follow.Position{File: "binlog.000004", Pos: 9180344}}
	switch outcome {
	case store.OutcomeWarn:
		f.LagUnderLoad = LagOf([]float64{1.2, 2.8, 3.4, 2.2})
	case store.OutcomeFail:
		f.State, f.Error = follow.StateDDL, "stopped before a DDL statement: ALTER TABLE shop.orders ADD COLUMN note TEXT at binlog.000004:9180344"
	}
	e, err := FollowEvidence(srcURL, dstURL, f, "test")
	if err != nil {
		t.Fatal(err)
	}
	if e.Outcome != outcome {
		t.Fatalf("follow evidence: got outcome %s (%s), want %s", e.Outcome, e.Summary, outcome)
	}
	e.At = at.Add(150 * time.Minute)
	if _, err := st.AddEvidence(context.Background(), e); err != nil {
		t.Fatal(err)
	}
}

// addCutover stores a rehearsed cutover whose data matched (pass) or did
// not (fail).
func addCutover(t *testing.T, st *store.Store, outcome string) {
	t.Helper()
	res := &follow.CutoverResult{Source: srcURL, Target: dstURL, Databases: []follow.Pair{{Source: "shop", Target: "shop"}}, Rehearsal: true,
		Steps: []follow.CutoverStep{
			{Name: "follower", At: 0.012, Seconds: 0.012, Detail: "a follower is at work on the target, at binlog.000004:9180344, 0.2 s behind"},
			{Name: "lag", At: 0.105, Seconds: 0.093, Detail: "follower lag 0.0 s, within --max-lag 1s"},
			{Name: "read_only", At: 0.121, Seconds: 0.016, Detail: "SET GLOBAL read_only = ON on the source (it was OFF): the application cannot write from now"},
			{Name: "final_position", At: 0.125, Seconds: 0.004, Detail: "the source's final position: binlog.000004:9180344"},
			{Name: "caught_up", At: 0.180, Seconds: 0.055, Detail: "the follower applied it"},
			{Name: "verify", At: 0.912, Seconds: 0.732, Detail: "verify of shop: equal (48210 rows compared)"},
			{Name: "restore", At: 0.918, Seconds: 0.006, Detail: "SET GLOBAL read_only = OFF on the source: writable again"},
		},
		WriteUnavailable: 0.791, ReadOnlyBefore: "OFF", ReadOnlyRestored: true, FinalPosition: follow.Position{File: "binlog.000004", Pos: 9180344},
		Verify: follow.VerifyFull, Verified: true, Equal: true, Rows: 48210, Notes: []string{}}
	if outcome == store.OutcomeFail {
		res.Equal, res.DifferingRows = false, 3
		res.Steps[5].Detail = "verify of shop: NOT equal: 3 rows differ (48210 rows compared)"
	}
	e, err := CutoverEvidence(res, nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	e.At = at.Add(160 * time.Minute)
	if _, err := st.AddEvidence(context.Background(), e); err != nil {
		t.Fatal(err)
	}
}

func build(t *testing.T, st *store.Store, sweepID int64) *Page {
	t.Helper()
	src, _ := target.Parse(srcURL)
	dst, _ := target.Parse(dstURL)
	p, err := Build(context.Background(), st, Options{Source: src, Target: dst, SweepID: sweepID, StoreFlag: "--store /home/app/.shakedown/shakedown.db", Now: at.Add(3 * time.Hour)})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return p
}

func TestVerdict(t *testing.T) {
	tests := []struct {
		name        string
		seed        seed
		verdict     string
		firstReason string // the first reason's text begins so
	}{
		{"everything passes", seed{check: "pass", verify: "pass", replay: "pass", sweepFactor: 1.5}, Ready, ""},
		{"no replay yet", seed{check: "pass", verify: "pass", sweepFactor: 1.5}, ReadyWithWarnings, "no replay yet"},
		{"check warnings", seed{check: "warn", verify: "pass", replay: "pass", sweepFactor: 1}, ReadyWithWarnings, "check: 0 errors, 1 warning"},
		{"check errors", seed{check: "fail", verify: "pass", replay: "pass", sweepFactor: 1.5}, NotReady, "check: 1 error"},
		{"slower target", seed{check: "pass", verify: "pass", replay: "pass", sweepFactor: 0.5}, NotReady, "sweep: candidate against today"},
		{"data differs", seed{check: "pass", verify: "fail", replay: "pass", sweepFactor: 1.5}, NotReady, "verify: 1 of 12 tables differ"},
		{"verify interrupted", seed{check: "pass", verify: "incomplete", replay: "pass", sweepFactor: 1.5}, ReadyWithWarnings, "verify is incomplete"},
		{"nothing yet", seed{}, NotReady, "no check yet"},
		{"less durable target", seed{check: "pass", verify: "pass", replay: "pass", sweepFactor: 1.5, lessDurable: true}, ReadyWithWarnings,
			"variables: innodb_flush_log_at_trx_commit is 1 on the source and 0 on the target"},
		{"capacity with headroom", seed{check: "pass", verify: "pass", replay: "pass", sweepFactor: 1.5, capacity: "pass"}, Ready, ""},
		{"a canary with no difference", seed{check: "pass", verify: "pass", replay: "pass", sweepFactor: 1.5, canary: "pass"}, Ready, ""},
		{"a canary whose reads differ", seed{check: "pass", verify: "pass", replay: "pass", sweepFactor: 1.5, canary: "fail"}, NotReady,
			"canary: canary: 2 h, 41,000 statements, 1 class differs"},
		{"capacity below the production peak", seed{check: "pass", verify: "pass", replay: "pass", sweepFactor: 1.5, capacity: "fail"}, NotReady,
			"capacity: capacity 910.4/s under p99<=20ms"},
		{"followed and cut over", seed{check: "pass", verify: "pass", replay: "pass", sweepFactor: 1.5, follow: "pass", cutover: "pass"}, Ready, ""},
		{"lag under the load", seed{check: "pass", verify: "pass", replay: "pass", sweepFactor: 1.5, follow: "warn", cutover: "pass"}, ReadyWithWarnings,
			"follow: lag p99 3.4 s under the load, above 2 s"},
		{"follower stopped", seed{check: "pass", verify: "pass", replay: "pass", sweepFactor: 1.5, follow: "fail", cutover: "pass"}, NotReady,
			"follow: the follower stopped (stopped at ddl): stopped before a DDL statement"},
		{"cutover data differed", seed{check: "pass", verify: "pass", replay: "pass", sweepFactor: 1.5, follow: "pass", cutover: "fail"}, NotReady,
			"cutover: the data did not match after the final position: 3 rows differ"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := build(t, openStore(t, tc.seed), 0)
			if p.Verdict != tc.verdict {
				t.Errorf("verdict: got %q, want %q; reasons %+v", p.Verdict, tc.verdict, p.Reasons)
			}
			if tc.firstReason == "" {
				if len(p.Reasons) != 0 {
					t.Errorf("reasons: got %+v, want none", p.Reasons)
				}
				return
			}
			if len(p.Reasons) == 0 || !strings.HasPrefix(p.Reasons[0].Text, tc.firstReason) {
				t.Errorf("first reason: got %+v, want one beginning %q", p.Reasons, tc.firstReason)
			}
			// Every missing piece says what to run.
			for _, r := range p.Reasons {
				if strings.HasPrefix(r.Text, "no ") && !strings.HasPrefix(r.Command, "shakedown ") {
					t.Errorf("reason %q: got command %q, want a shakedown command", r.Text, r.Command)
				}
			}
		})
	}
}

func TestSweepChoice(t *testing.T) {
	st := openStore(t, seed{check: "pass", verify: "pass", sweepFactor: 0.5})
	addSweep(t, st, 1.5) // the newer sweep wins
	p := build(t, st, 0)
	if p.Sweep.Status != StatusPass || p.SweepName != "sweep 2 (cutover)" || len(p.Levels) != 4 {
		t.Errorf("latest sweep: got %s %q with %d levels, want pass from sweep 2 with 4", p.Sweep.Status, p.SweepName, len(p.Levels))
	}
	p = build(t, st, 1)
	if p.Sweep.Status != StatusFail || p.SweepName != "sweep 1 (cutover)" {
		t.Errorf("--sweep 1: got %s %q, want fail from sweep 1", p.Sweep.Status, p.SweepName)
	}
	src, _ := target.Parse(srcURL)
	other, _ := target.Parse("mysql://app@10.0.0.7:3306/shop")
	if _, err := Build(context.Background(), st, Options{Source: src, Target: other, SweepID: 1}); err == nil {
		t.Errorf("Build with a sweep that lacks the target: got nil error, want one")
	}
}

func TestWriters(t *testing.T) {
	p := build(t, openStore(t, seed{check: "fail", verify: "pass", sweepFactor: 1.5, capacity: "pass", follow: "pass", cutover: "pass"}), 0)
	for _, f := range []struct{ format, file string }{{"text", "page.txt"}, {"md", "page.md"}, {"json", "page.json"}, {"html", "page.html"}} {
		var b bytes.Buffer
		if err := Write(&b, f.format, p); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, f.file, b.Bytes())
	}
	if err := Write(&bytes.Buffer{}, "pdf", p); err == nil || !strings.Contains(err.Error(), "formats: text, md, json, html") {
		t.Errorf("Write pdf: got %v, want the formats listed", err)
	}
}

// TestDurabilityDowngrade: a target less durable than the source is a
// warning on the page, named with both values and what it risks, in every
// format, and the variables diff no longer passes.
func TestDurabilityDowngrade(t *testing.T) {
	p := build(t, openStore(t, seed{check: "pass", verify: "pass", replay: "pass", sweepFactor: 1.5, lessDurable: true}), 0)
	if p.Variables.Status != StatusWarn {
		t.Errorf("variables: got %s (%s), want warn", p.Variables.Status, p.Variables.Summary)
	}
	for _, want := range []string{"innodb_flush_log_at_trx_commit 1 -> 0", "sync_binlog 1 -> 0"} {
		if !strings.Contains(p.Variables.Summary, want) {
			t.Errorf("variables summary: got %q, want %q in it", p.Variables.Summary, want)
		}
	}
	var warned []string
	for _, r := range p.Reasons {
		if r.Evidence == "variables" && r.Weight == Warning {
			warned = append(warned, r.Text)
		}
	}
	if len(warned) != 2 || !strings.Contains(warned[0], "up to a second of commits lost in a crash") || !strings.Contains(warned[1], "sync_binlog is 1 on the source and 0 on the target") {
		t.Errorf("variables reasons: got %q, want innodb_flush_log_at_trx_commit's and sync_binlog's, each with its risk", warned)
	}
	for _, format := range Formats {
		var b bytes.Buffer
		if err := Write(&b, format, p); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"innodb_flush_log_at_trx_commit", "up to a second of commits lost in a crash", "sync_binlog"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("%s: want %q in it, got\n%s", format, want, b.String())
			}
		}
		if format == "json" {
			var doc struct {
				Downgrades []struct{ Variable, Source, Target, Risk string } `json:"durability_downgrades"`
			}
			if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Downgrades) != 2 || doc.Downgrades[0].Variable != "innodb_flush_log_at_trx_commit" || doc.Downgrades[0].Source != "1" ||
				doc.Downgrades[0].Target != "0" || doc.Downgrades[0].Risk == "" {
				t.Errorf("json durability_downgrades: got %+v, want innodb_flush_log_at_trx_commit 1 -> 0 with its risk, then sync_binlog", doc.Downgrades)
			}
		}
		if format == "html" && (!strings.Contains(b.String(), `<tr id="ev-variables" data-status="warn">`) ||
			!regexp.MustCompile(`<table id="durability">.*\n<tr><td><code>innodb_flush_log_at_trx_commit</code></td><td><code>1</code></td><td><code>0</code></td>`).MatchString(b.String())) {
			t.Errorf("html: want the variables row marked warn and the downgrades in a table of their own, got\n%s", b.String())
		}
	}
}

// TestVerdictWords maps the report's verdicts onto the four states the
// page weighs.
func TestVerdictWords(t *testing.T) {
	for in, want := range map[stats.State]stats.State{stats.Faster: stats.Faster, stats.Slower: stats.Slower, stats.Same: stats.Same,
		stats.NoData: stats.Inconclusive, stats.Inconclusive: stats.Inconclusive, stats.NoVerdict: stats.Inconclusive} {
		if got := verdictOf(in); got != want {
			t.Errorf("verdictOf(%q): got %q, want %q", in, got, want)
		}
	}
}

// TestManyCheckErrors lists the first errors one by one and counts the
// rest, so that 200 tables without a primary key do not bury the other
// reasons.
func TestManyCheckErrors(t *testing.T) {
	p := &Page{Check: Piece{Status: StatusFail, Summary: "15 errors"}, Sweep: Piece{Status: StatusPass}, Replay: Piece{Status: StatusPass},
		Verify: Piece{Status: StatusPass}}
	for i := 0; i < 15; i++ {
		p.Findings = append(p.Findings, check.Finding{Check: "no_primary_key", Severity: check.Error, Object: fmt.Sprintf("db.t%d", i), Message: "no key"})
	}
	p.Findings = append(p.Findings, check.Finding{Check: "engine", Severity: check.Warning, Object: "db.m", Message: "MyISAM"})
	p.decide()
	if p.Verdict != NotReady || len(p.Reasons) != 12 {
		t.Fatalf("got %q with %d reasons, want not ready with 12 (the check, 10 errors, the rest counted)", p.Verdict, len(p.Reasons))
	}
	if got := p.Reasons[11].Text; got != "and 5 more errors of the check (its findings list them)" {
		t.Errorf("last reason: got %q, want the 5 others counted", got)
	}
}

// TestReplayEvidenceClientBound: a replay the client limited judged no
// latency, so its candidate warns and says why, where the same replay
// unmarked passes.
func TestReplayEvidenceClientBound(t *testing.T) {
	for _, tc := range []struct {
		bound   bool
		outcome string
	}{
		{false, store.OutcomePass},
		{true, store.OutcomeWarn},
	} {
		rep := &replay.Report{Statements: 40, Control: replay.TargetInfo{Name: "old", URL: "mysql://u@old/"},
			Candidates:   []replay.TargetInfo{{Name: "new", URL: "mysql://u@new/"}},
			Fingerprints: []replay.Fingerprint{{Count: 40, Candidates: []replay.CandidFig{{Name: "new", Verdict: stats.Inconclusive}}}},
			Client:       &result.Client{Bound: tc.bound, Cores: 1}}
		evs, err := ReplayEvidence(rep, "shakedown test")
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 1 || evs[0].Outcome != tc.outcome || strings.Contains(evs[0].Summary, "client-bound") != tc.bound {
			t.Errorf("bound %v: got %+v, want one record, %s, the client named only where bound", tc.bound, evs, tc.outcome)
		}
	}
}
