package rehearse

import (
	"context"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/bench"
	"github.com/shakedown/shakedown/internal/browsertest"
	"github.com/shakedown/shakedown/internal/capture"
	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/readiness"
	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/target"
	_ "github.com/shakedown/shakedown/internal/workload/all"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// appSchema is a small application: customers, orders with a foreign key,
// a trigger and a view. The candidate's copy lacks the index on
// customers.email.
func appSchema(withIndex bool) []string {
	idx := ""
	if withIndex {
		idx = ", KEY email_idx (email)"
	}
	stmts := []string{
		"CREATE DATABASE app",
		"CREATE TABLE app.customers (id INT PRIMARY KEY, email VARCHAR(64) NOT NULL, orders INT NOT NULL DEFAULT 0" + idx + ")",
		"CREATE TABLE app.orders (id INT PRIMARY KEY, customer_id INT NOT NULL, total DECIMAL(10,2) NOT NULL, FOREIGN KEY (customer_id) REFERENCES app.customers(id))",
		"CREATE TRIGGER app.count_orders AFTER INSERT ON app.orders FOR EACH ROW UPDATE app.customers SET orders = orders + 1 WHERE id = NEW.customer_id",
		"CREATE VIEW app.big_orders AS SELECT id, customer_id, total FROM app.orders WHERE total > 50",
	}
	var cust, ord []string
	for i := 1; i <= 20; i++ {
		cust = append(cust, fmt.Sprintf("(%d, 'c%d@example.com', 0)", i, i))
		ord = append(ord, fmt.Sprintf("(%d, %d, %d.50)", i, i%5+1, i*7))
	}
	return append(stmts, "INSERT INTO app.customers VALUES "+strings.Join(cust, ","), "INSERT INTO app.orders VALUES "+strings.Join(ord, ","))
}

func exec(t *testing.T, inst *sandbox.Instance, stmts []string) {
	t.Helper()
	tg, err := target.Parse(inst.URL())
	if err != nil {
		t.Fatal(err)
	}
	db, err := tg.OpenNoDB(tg.Endpoints()[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// fixture starts the source and a candidate that differs in a setting and
// lacks an index, and writes a capture and a plan for them.
func fixture(t *testing.T) (planPath string) {
	t.Helper()
	insts := sandboxtest.StartAll(t, nil, []string{"sort_buffer_size=4194304"})
	exec(t, insts[0], appSchema(true))
	exec(t, insts[1], appSchema(false))
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "app.capture"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := capture.NewWriter(f, []string{"test"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range []string{"SELECT id, email FROM customers WHERE email = 'c3@example.com'",
		"SELECT customer_id, SUM(total) FROM orders GROUP BY customer_id ORDER BY customer_id", "SELECT COUNT(*) FROM big_orders"} {
		if err := w.Write(&capture.Record{Session: "1", Seq: int64(i + 1), DB: "app", SQL: q}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	queries := filepath.Join(dir, "queries.sql")
	if err := os.WriteFile(queries, []byte("SELECT email FROM customers WHERE id = 7;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	url := func(i *sandbox.Instance) string { return fmt.Sprintf("mysql://%s@127.0.0.1:%d/app", i.User, i.Port) }
	text := fmt.Sprintf(`name: app
source: {name: old, url: "%s"}
candidates:
  - {name: new, url: "%s"}
data: present
replay: {capture: app.capture}
sweep:
  workloads:
    - name: sql
      options: {file: "%s"}
  threads: [1]
  time: 1
steps:
  check: {continue_on_failure: true}
  verify: {continue_on_failure: true}
`, url(insts[0]), url(insts[1]), queries)
	planPath = filepath.Join(dir, "rehearsal.yaml")
	if err := os.WriteFile(planPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return planPath
}

func parse(t *testing.T, path string) *plan.Rehearsal {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.ParseRehearsal(path, src, func(string) string { return "" }, bench.Grammar{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestRehearsal runs a rehearsal end to end, then a second one that is
// killed after its verify and resumed: the resume does not
// run the finished steps again, and both end on a page that says the
// candidate is not ready because it lacks an index.
func TestRehearsal(t *testing.T) {
	path := fixture(t)
	p := parse(t, path)
	st := openStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out strings.Builder
	opts := Options{Store: st, Out: &out, PageDir: t.TempDir(), Version: "test"}

	t.Run("end to end", func(t *testing.T) {
		sum, err := Run(ctx, p, opts)
		if err != nil {
			t.Fatalf("Run: %v\n%s", err, out.String())
		}
		checkSummary(t, st, sum, out.String())
		pageInChromium(t, sum.Pages[0].Path)
	})

	t.Run("killed and resumed", func(t *testing.T) {
		kctx, kill := context.WithCancel(ctx)
		defer kill()
		// Killed once its second step that does work (verify; copy and
		// follow are skipped) is stored.
		o := opts
		o.AfterStep = func(r store.RehearsalStep) {
			if r.Name == plan.StepVerify {
				kill()
			}
		}
		sum, err := Run(kctx, p, o)
		if err == nil || sum == nil || sum.Status != store.RehearsalInterrupted {
			t.Fatalf("killed run: got %v, %+v; want ErrInterrupted and status interrupted", err, sum)
		}
		before, err := st.RehearsalSteps(ctx, sum.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(names(before), " "); got != "check copy follow verify" {
			t.Fatalf("killed run: got rows %s, want check copy follow verify", got)
		}
		checks, verifies := evidenceCount(t, st, store.KindCheck), evidenceCount(t, st, store.KindVerify)

		o = opts
		o.Resume = sum.ID
		out.Reset()
		sum, err = Run(ctx, p, o)
		if err != nil {
			t.Fatalf("resume: %v\n%s", err, out.String())
		}
		rows, err := st.RehearsalSteps(ctx, sum.ID)
		if err != nil {
			t.Fatal(err)
		}
		// One row per step: the check and the copy were not run again.
		if got, want := strings.Join(names(rows), " "), strings.Join(plan.StepNames, " "); got != want {
			t.Errorf("rows after the resume: got %s, want %s", got, want)
		}
		if got := evidenceCount(t, st, store.KindCheck); got != checks {
			t.Errorf("check evidence after the resume: got %d, want %d (the check is not run again)", got, checks)
		}
		if got := evidenceCount(t, st, store.KindVerify); got != verifies {
			t.Errorf("verify evidence after the resume: got %d, want %d (the verify is not run again)", got, verifies)
		}
		if got := evidenceCount(t, st, store.KindReplay); got != 2 {
			t.Errorf("replay evidence: got %d, want 2 (one per rehearsal: the killed one never replayed)", got)
		}
		if !strings.Contains(out.String(), "(finished before the resume)") {
			t.Errorf("resume output: want the finished steps said so, got\n%s", out.String())
		}
		checkSummary(t, st, sum, out.String())
	})
}

// checkSummary checks what every rehearsal of the fixture ends with.
func checkSummary(t *testing.T, st *store.Store, sum *Summary, out string) {
	t.Helper()
	if sum.Status != store.RehearsalDone || sum.Verdict != readiness.NotReady {
		t.Errorf("summary: got status %s, verdict %q; want done, not ready\n%s", sum.Status, sum.Verdict, out)
	}
	want := map[string]string{
		plan.StepCheck: store.StepDone, plan.StepCopy: store.StepSkipped, plan.StepFollow: store.StepSkipped, plan.StepVerify: store.StepDone,
		plan.StepAnalyze: store.StepDone, plan.StepVars: store.StepDone, plan.StepReplay: store.StepDone,
		plan.StepSweep: store.StepDone, plan.StepCapacity: store.StepSkipped, plan.StepCutover: store.StepSkipped, plan.StepReadiness: store.StepDone,
	}
	for _, r := range sum.Steps {
		if r.Status != want[r.Name] {
			t.Errorf("step %s: got %s (%s %s), want %s", r.Name, r.Status, r.Summary, r.Error, want[r.Name])
		}
		if r.Name == plan.StepVerify && r.Outcome != store.OutcomeFail {
			t.Errorf("verify: got outcome %s (%s), want fail: the candidate lacks an index", r.Outcome, r.Summary)
		}
	}
	if len(sum.Pages) != 1 {
		t.Fatalf("pages: got %d, want 1", len(sum.Pages))
	}
	pg := sum.Pages[0]
	html, err := os.ReadFile(pg.Path)
	if err != nil {
		t.Fatalf("page: %v", err)
	}
	if !strings.Contains(string(html), "NOT READY") || !strings.Contains(strings.Join(pg.Reasons, "\n"), "verify") {
		t.Errorf("page %s: got reasons %q, want not ready for the verify", pg.Path, pg.Reasons)
	}
	r, err := st.GetRehearsal(context.Background(), sum.ID)
	if err != nil || r.Status != store.RehearsalDone || r.Verdict != readiness.NotReady {
		t.Errorf("stored rehearsal: got %+v, %v; want done, not ready", r, err)
	}
}

// pageInChromium renders the rehearsal's page in headless Chromium: it
// must say NOT READY and show every piece of evidence the rehearsal
// stored with its status.
func pageInChromium(t *testing.T, path string) {
	t.Helper()
	browsertest.Need(t)
	dom := browsertest.DOM(t, "file://"+path)
	if !regexp.MustCompile(`<div class="verdict not-ready" id="verdict">NOT READY</div>`).MatchString(dom) {
		t.Errorf("rendered page: want the NOT READY verdict")
	}
	rows := []struct{ id, status, shows string }{
		{"check", readiness.StatusFail, "error"},
		{"variables", readiness.StatusPass, "differing"},
		{"sweep", "", "sweep"},
		{"replay", readiness.StatusPass, "3 statements replayed: 0 differing, 0 new errors"},
		{"verify", readiness.StatusFail, "1 of 2 tables differ"},
	}
	for _, r := range rows {
		m := regexp.MustCompile(`(?s)<tr id="ev-` + r.id + `" data-status="([a-z]+)">(.*?)</tr>`).FindStringSubmatch(dom)
		if m == nil {
			t.Errorf("evidence %s: no row in the rendered page", r.id)
			continue
		}
		text := regexp.MustCompile(`<[^>]+>`).ReplaceAllString(m[2], "")
		if r.status != "" && m[1] != r.status || !strings.Contains(text, r.shows) {
			t.Errorf("evidence %s: got status %q and %q, want %q and %q", r.id, m[1], text, r.status, r.shows)
		}
		if m[1] == readiness.StatusMissing {
			t.Errorf("evidence %s: missing, want the rehearsal's", r.id)
		}
	}
}

func names(rows []store.RehearsalStep) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.Name)
	}
	return out
}

// evidenceCount counts the evidence of a kind in the store.
func evidenceCount(t *testing.T, st *store.Store, kind string) int {
	t.Helper()
	n := 0
	_, err := st.LatestEvidence(context.Background(), kind, func(string, string) bool { n++; return false })
	if err != nil && !strings.Contains(err.Error(), "not found") {
		t.Fatal(err)
	}
	return n
}

// TestLessDurableCandidate: a candidate with innodb_flush_log_at_trx_commit
// and sync_binlog at 0 where the source has 1 warns at the vars step, named,
// and the readiness page says the same: the line and the page agree.
func TestLessDurableCandidate(t *testing.T) {
	insts := sandboxtest.StartAll(t, []string{"innodb_flush_log_at_trx_commit=1", "sync_binlog=1"},
		[]string{"innodb_flush_log_at_trx_commit=0", "sync_binlog=0"})
	for _, inst := range insts {
		exec(t, inst, appSchema(true))
	}
	url := func(i *sandbox.Instance) string { return fmt.Sprintf("mysql://%s@127.0.0.1:%d/app", i.User, i.Port) }
	text := fmt.Sprintf(`source: {name: old, url: "%s"}
candidates: [{name: new, url: "%s"}]
data: present
steps:
  check: {continue_on_failure: true}
  verify: {skip: true}
  analyze: {skip: true}
`, url(insts[0]), url(insts[1]))
	path := filepath.Join(t.TempDir(), "rehearsal.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out strings.Builder
	sum, err := Run(ctx, parse(t, path), Options{Store: openStore(t), Out: &out, PageDir: t.TempDir(), Version: "test"})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	var vars *store.RehearsalStep
	for i, r := range sum.Steps {
		if r.Name == plan.StepVars {
			vars = &sum.Steps[i]
		}
	}
	want := "less durable than the source: innodb_flush_log_at_trx_commit 1 -> 0, sync_binlog 1 -> 0"
	if vars == nil || vars.Outcome != store.OutcomeWarn || !strings.HasPrefix(vars.Summary, want) {
		t.Fatalf("vars step: got %+v, want warn beginning %q\n%s", vars, want, out.String())
	}
	if len(sum.Pages) != 1 {
		t.Fatalf("pages: got %d, want 1\n%s", len(sum.Pages), out.String())
	}
	reasons := strings.Join(sum.Pages[0].Reasons, "\n")
	for _, v := range []string{"innodb_flush_log_at_trx_commit is 1 on the source and 0 on the target", "sync_binlog is 1 on the source and 0 on the target"} {
		if !strings.Contains(reasons, v) {
			t.Errorf("page reasons: got\n%s\nwant one saying %q", reasons, v)
		}
	}
	html, err := os.ReadFile(sum.Pages[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), `<tr id="ev-variables" data-status="warn">`) || !strings.Contains(string(html), template.HTMLEscapeString(vars.Summary)) {
		t.Errorf("page: want the variables row to warn with the vars step's summary %q", vars.Summary)
	}
}
