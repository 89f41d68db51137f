package rehearse

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/follow"
	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/readiness"
	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/usage"
)

// TestRehearsalFollow rehearses a move by copy, follow and cutover: the
// copy (its trigger left out) is kept current by a follower while the
// verify, the sweep's load on the source and the cutover run; the
// readiness page has the follower's lag under the load and the cutover's
// write-unavailable window, and the source is writable again after it.
// Before that, a source without a binary log is refused before anything
// runs, with the prerequisites named.
func TestRehearsalFollow(t *testing.T) {
	insts := sandboxtest.StartAll(t, []string{"log_bin=ON", "binlog_format=ROW", "binlog_row_image=FULL"}, nil)
	exec(t, insts[0], appSchema(true))
	url := func(i *sandbox.Instance) string { return fmt.Sprintf("mysql://%s@127.0.0.1:%d/app", i.User, i.Port) }
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	t.Run("a source without a binary log", func(t *testing.T) {
		path := writePlan(t, dir, "refused.yaml", fmt.Sprintf(`source: {name: old, url: "%s"}
candidates: [{name: new, url: "%s"}]
data:
  copy: {allow-write: true}
follow: {workers: 2}
`, url(insts[1]), url(insts[0])))
		st := openStore(t)
		sum, err := Run(ctx, parse(t, path), Options{Store: st, PageDir: t.TempDir(), Version: "test"})
		if !usage.Is(err) || sum != nil || !strings.Contains(err.Error(), "refused.yaml:5: follow: new: ") || !strings.Contains(err.Error(), "log_bin") {
			t.Fatalf("got %v, %+v; want bad usage on line 5 naming the candidate and log_bin, and no rehearsal", err, sum)
		}
		if list, err := st.Rehearsals(ctx); err != nil || len(list) != 0 {
			t.Errorf("stored rehearsals: got %d (%v), want none: the plan was refused before it began", len(list), err)
		}
	})

	// The load writes the source only: on the candidate, which the
	// follower keeps, the condition holds for no row. Each insert fires
	// the source's trigger; the follower applies both changes, and the
	// candidate has no trigger to fire a third.
	load := filepath.Join(dir, "load.sql")
	if err := os.WriteFile(load, []byte(fmt.Sprintf(`UPDATE customers SET email = CONCAT('c', id, '-', {{int 1 1000}}, '@example.com') WHERE id = {{uniform 1 20}} AND @@port = %[1]d;
INSERT INTO orders (id, customer_id, total) SELECT m + 1, {{uniform 1 20}}, 9.99 FROM (SELECT COALESCE(MAX(id), 0) AS m FROM orders) x WHERE @@port = %[1]d;
`, insts[0].Port)), 0o644); err != nil {
		t.Fatal(err)
	}
	path := writePlan(t, dir, "follow.yaml", fmt.Sprintf(`name: move
source: {name: old, url: "%s"}
candidates: [{name: new, url: "%s"}]
data:
  copy: {allow-write: true, threads: 2}
follow: {workers: 2}
sweep:
  workloads:
    - name: sql
      options: {file: "%s"}
  threads: [1]
  time: 2
  repeats: 1
cutover: {allow-set-global: true, max-lag: 2s, lag-wait: 1m}
steps:
  check: {continue_on_failure: true}
`, url(insts[0]), url(insts[1]), load))
	st := openStore(t)
	var out strings.Builder
	sum, err := Run(ctx, parse(t, path), Options{Store: st, Out: &out, PageDir: t.TempDir(), Version: "test"})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	t.Logf("\n%s", out.String())
	rows := map[string]store.RehearsalStep{}
	for _, r := range sum.Steps {
		rows[r.Name] = r
	}
	for _, want := range []struct{ step, status, outcome, summary string }{
		{plan.StepCopy, store.StepDone, store.OutcomePass, "copied"},
		{plan.StepFollow, store.StepDone, "", "following app from "},
		{plan.StepVerify, store.StepDone, store.OutcomePass, "while following: "},
		{plan.StepSweep, store.StepDone, "", "2 of 2 load steps ok"},
		{plan.StepCutover, store.StepDone, store.OutcomePass, "data equal"},
		{plan.StepReadiness, store.StepDone, "", ""},
	} {
		r := rows[want.step]
		if r.Status != want.status || want.outcome != "" && r.Outcome != want.outcome || !strings.Contains(r.Summary, want.summary) {
			t.Errorf("step %s: got %s %s %q %s, want %s %s with %q", want.step, r.Status, r.Outcome, r.Summary, r.Error, want.status, want.outcome, want.summary)
		}
	}
	if got := evidenceCount(t, st, store.KindFollow); got != 1 {
		t.Errorf("follow evidence: got %d, want 1 (stored when the cutover stopped the follower)", got)
	}

	src, dst := mustTarget(t, url(insts[0])), mustTarget(t, url(insts[1]))
	pg, err := readiness.Build(ctx, st, readiness.Options{Source: src, Target: dst})
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := readiness.WriteJSON(&js, pg); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Follow    readiness.Piece `json:"follow"`
		Following *struct {
			Rows         int64 `json:"rows"`
			State        string
			LagUnderLoad struct {
				Samples int     `json:"samples"`
				P99     float64 `json:"p99_seconds"`
			} `json:"lag_under_load"`
		} `json:"following"`
		VerifyFollowing *struct {
			Rechecks int `json:"rechecks"`
		} `json:"verify_while_following"`
		Cutover readiness.Piece `json:"cutover"`
		Run     *struct {
			Window           float64 `json:"write_unavailable_seconds"`
			Equal            bool    `json:"equal"`
			ReadOnlyRestored bool    `json:"read_only_restored"`
			Steps            []struct {
				Name string `json:"name"`
			} `json:"steps"`
		} `json:"cutover_rehearsal"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	f := doc.Following
	if f == nil || f.Rows == 0 || f.State != follow.StateStopped || f.LagUnderLoad.Samples < 2 || doc.Follow.Status == readiness.StatusMissing {
		t.Errorf("readiness following: got %+v (%+v), want rows applied, stopped, and lag samples taken under the load\n%s", f, doc.Follow, js.String())
	}
	if doc.VerifyFollowing == nil || doc.VerifyFollowing.Rechecks != followRechecks {
		t.Errorf("readiness verify_while_following: got %+v, want the verify's rechecks (%d)", doc.VerifyFollowing, followRechecks)
	}
	r := doc.Run
	if r == nil || r.Window <= 0 || r.Window > 60 || !r.Equal || !r.ReadOnlyRestored || len(r.Steps) == 0 || doc.Cutover.Status != readiness.StatusPass {
		t.Errorf("readiness cutover_rehearsal: got %+v (%+v), want a window of a positive figure under a minute, equal, read_only restored\n%s", r, doc.Cutover, js.String())
	}
	for _, reason := range pg.Reasons {
		if reason.Evidence == "follow" || reason.Evidence == "cutover" {
			t.Errorf("reason %+v: want none from the follower or the cutover", reason)
		}
	}

	admin := openDB(t, insts[0])
	var ro string
	if err := admin.QueryRowContext(ctx, "SELECT @@GLOBAL.read_only").Scan(&ro); err != nil || ro != "0" {
		t.Errorf("the source's read_only after the rehearsal: got %q (%v), want 0 (OFF)", ro, err)
	}
	var triggers int
	if err := openDB(t, insts[1]).QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = 'app'").Scan(&triggers); err != nil || triggers != 0 {
		t.Errorf("the candidate's triggers: got %d (%v), want none: a followed copy leaves them out", triggers, err)
	}
	if s, d := count(t, insts[0], "app.orders"), count(t, insts[1], "app.orders"); s <= 20 || d != s {
		t.Errorf("orders: got %d on the source and %d on the candidate, want the load's inserts on both", s, d)
	}
	var text bytes.Buffer
	if err := readiness.WriteText(&text, pg); err != nil {
		t.Fatal(err)
	}
	t.Logf("the page:\n%s", text.String())

	// Without a cutover the follower runs to the chain's end; killed, the
	// rehearsal stops it (its position saved), and the resume starts it
	// again from there and stops it before the page.
	t.Run("killed and resumed", func(t *testing.T) {
		path := writePlan(t, dir, "again.yaml", fmt.Sprintf(`name: again
source: {name: old, url: "%s"}
candidates: [{name: new, url: "%s"}]
data:
  copy: {allow-write: true, replace: true}
follow:
steps:
  check: {continue_on_failure: true}
`, url(insts[0]), url(insts[1])))
		p := parse(t, path)
		st := openStore(t)
		kctx, kill := context.WithCancel(ctx)
		defer kill()
		var out strings.Builder
		o := Options{Store: st, Out: &out, PageDir: t.TempDir(), Version: "test"}
		o.AfterStep = func(r store.RehearsalStep) {
			if r.Name == plan.StepVerify {
				exec(t, insts[0], []string{"INSERT INTO app.orders VALUES (100000, 1, 1.00)"})
				kill()
			}
		}
		sum, err := Run(kctx, p, o)
		if !errors.Is(err, ErrInterrupted) {
			t.Fatalf("killed run: got %v, want ErrInterrupted\n%s", err, out.String())
		}
		w := follow.NewWatcher(openDB(t, insts[0]), openDB(t, insts[1]), []string{"app"})
		saved, err := w.Saved(ctx)
		if err != nil || saved.State != follow.StateStopped {
			t.Fatalf("the follower after the kill: got %+v, %v; want it stopped, its position saved", saved, err)
		}
		if got := evidenceCount(t, st, store.KindFollow); got != 1 {
			t.Errorf("follow evidence after the kill: got %d, want 1", got)
		}

		o.AfterStep, o.Resume = nil, sum.ID
		out.Reset()
		if _, err := Run(ctx, p, o); err != nil {
			t.Fatalf("resumed run: %v\n%s", err, out.String())
		}
		t.Logf("\n%s", out.String())
		for _, want := range []string{"following app from " + saved.Position.String() + " (the position it saved before the resume)", "follow     pass        stopped: "} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("resumed run: want %q in its output", want)
			}
		}
		if got := evidenceCount(t, st, store.KindFollow); got != 2 {
			t.Errorf("follow evidence after the resume: got %d, want 2", got)
		}
		if got := count(t, insts[1], "app.orders WHERE id = 100000"); got != 1 {
			t.Errorf("the row written after the kill: got %d on the candidate, want 1: the resumed follower applied it", got)
		}
		if w.Alive(ctx) {
			t.Errorf("the follower is at work after the rehearsal, want it stopped")
		}
	})
}

func writePlan(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustTarget(t *testing.T, u string) *target.Target {
	t.Helper()
	tg, err := target.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func openDB(t *testing.T, inst *sandbox.Instance) *sql.DB {
	t.Helper()
	tg := mustTarget(t, inst.URL())
	db, err := tg.OpenNoDB(tg.Endpoints()[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
